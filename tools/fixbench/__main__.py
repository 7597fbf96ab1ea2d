"""`python -m tools.fixbench`: see fixbench.py."""

import sys

from .fixbench import main

sys.exit(main())
