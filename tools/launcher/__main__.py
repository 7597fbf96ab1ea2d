"""python3 -m tools.launcher: what ./nanotick runs (tools/launcher/__init__.py)."""

import sys

# The bootstrap runs whatever python3 the machine has: say so plainly when it
# is too old for this package instead of failing on a syntax error.
if sys.version_info < (3, 9):
    sys.exit(f"nanotick: error: python3 is {sys.version.split()[0]}; the launcher needs 3.9 or newer (Debian 12 has 3.11)")

from .cli import main  # noqa: E402  (after the version check on purpose)

sys.exit(main(sys.argv[1:]))
