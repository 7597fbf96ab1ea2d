"""`python -m tools.loadtest`: see loadtest.py."""

import sys

from .loadtest import main

sys.exit(main())
