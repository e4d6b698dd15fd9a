"""A widget's ``_esm`` that imports its view's module once per page.

anywidget imports every widget's ``_esm`` anew, from a Blob URL of its own: each job card, each
progress bar, each studio run again would parse and run its view's module again. So a widget's
``_esm`` is a loader of a few lines that carries its module as text and imports it once per
page, keyed by the module's name and digest; every later widget of the view takes the module
the page has, and another version of mediagen (another digest) is imported beside the old.
"""

from __future__ import annotations

import hashlib
import json

# ``MODULE`` is the view's module as a JavaScript string, ``KEY`` its name and digest; a failed
# import is forgotten, so the next widget tries again.
_LOADER = """\
const modules = globalThis.__mediagenModules || (globalThis.__mediagenModules = new Map());
if (!modules.has(KEY)) {
  const url = URL.createObjectURL(new Blob([MODULE], { type: 'text/javascript' }));
  modules.set(
    KEY,
    import(url)
      .catch(err => {
        modules.delete(KEY);
        throw err;
      })
      .finally(() => URL.revokeObjectURL(url))
  );
}
export default (await modules.get(KEY)).default;
"""


def imported_once(name: str, module: str) -> str:
    """The ``_esm`` of a widget whose view is ``module`` (the text of the ES module ``name``)."""
    key = f"{name}:{hashlib.sha256(module.encode('utf-8')).hexdigest()[:16]}"
    # the key first: the module's text goes in last, so nothing in it is replaced
    return _LOADER.replace("KEY", json.dumps(key)).replace("MODULE", json.dumps(module))
