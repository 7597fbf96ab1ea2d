"""`python -m tools.report RUN_DIR`: see report.py."""

import sys

from .report import main

sys.exit(main())
