"""``python -m mediagen.cli``: the ``mediagen`` command where its console script is not on PATH."""

import sys

from mediagen.cli import main

sys.exit(main())
