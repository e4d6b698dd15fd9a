"""The extension's earlier module name: ``%load_ext mediagen.extension`` keeps working.

This name and ``mediagen.magics`` are one module object, so a setting made through either
(``mediagen.extension.confirm_above = 100``) is the one the magics read.
"""

import sys

from mediagen import magics

sys.modules[__name__] = magics
