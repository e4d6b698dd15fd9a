"""``import mediagen.spark``, ``from mediagen.spark import generate``: the module
``mediagen.datasets.spark`` under its short name. One module object, the one ``mediagen.spark``
gives as an attribute too; without the spark extra its import names the ``pip install``."""

import sys

from mediagen.datasets import spark as _module
from mediagen.datasets.spark import generate as generate, write_run_manifest as write_run_manifest

sys.modules[__name__] = _module
