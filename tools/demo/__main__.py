"""`python -m tools.demo` (from the repository root): the demo, tools/demo/demo.py."""

import sys

from tools.demo.demo import main

sys.exit(main())
