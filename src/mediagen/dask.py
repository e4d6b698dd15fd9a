"""``import mediagen.dask``, ``from mediagen.dask import generate``: the module
``mediagen.datasets.dask`` under its short name. One module object, the one ``mediagen.dask``
gives as an attribute too; without the dask extra its import names the ``pip install``."""

import sys

from mediagen.datasets import dask as _module
from mediagen.datasets.dask import generate as generate, write_run_manifest as write_run_manifest

sys.modules[__name__] = _module
