"""mediagen inside JupyterLab, server half: a Jupyter Server extension for the sidebar.

``pip install mediagen[lab]`` enables it in every Jupyter server (``jupyter-config/``), next to
the prebuilt JupyterLab extension (``labextension/`` in the repository, shipped built in the
wheel). Loading it only adds handlers under ``/mediagen/api/``; nothing is sent to the service
until a page subscribes (:mod:`mediagen.jupyter_server._feed`): an open JupyterLab page reads
the credits for its status bar, a shown Generations panel the generations too, and a server no
page is open on costs nothing. The key stays in this process's environment; the page gets
rows, figures and file bytes.
"""

from __future__ import annotations

from typing import Any

#: the npm package the JupyterLab extension is built as (its folder under labextensions/)
LABEXTENSION_NAME = "@mediagen/jupyterlab"


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "../labextension", "dest": LABEXTENSION_NAME}]


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "mediagen.jupyter_server"}]


def _load_jupyter_server_extension(server_app: Any) -> None:
    """Add the handlers and the (idle) feed; cheap and silent."""
    from mediagen.jupyter_server._feed import Feed
    from mediagen.jupyter_server._handlers import routes
    from mediagen.jupyter_server._media import MediaCache

    web_app = server_app.web_app
    web_app.settings["mediagen_feed"] = Feed()
    web_app.settings["mediagen_media"] = MediaCache()
    web_app.add_handlers(".*$", routes(web_app.settings["base_url"]))
