"""build/venv: the Python the tools and the tests run on.

tools/requirements.txt for the tools that run the venue and draw its report
(profiles run and fix), tools/requirements-test.txt on top for the tests and
benchmarks (pytest, the Liquibook headers, pillow). A stamp of the
requirements' SHA-256 in the venv makes it idempotent: pip runs again only
when a requirements file changed.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys

from .context import BUILD_ROOT, ROOT, VENV, VENV_PYTHON, die, rel
from .logs import stage_command

REQUIREMENTS = ROOT / "tools" / "requirements.txt"
REQUIREMENTS_TEST = ROOT / "tools" / "requirements-test.txt"
STAMP = VENV / ".requirements.sha256"
STAMP_TEST = VENV / ".requirements-test.sha256"


def _sha256(*paths) -> str:
    """As `cat PATHS | sha256sum`: the stamps bash's launcher wrote stay valid."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _stamped(stamp, want: str) -> bool:
    try:
        return VENV_PYTHON.exists() and stamp.read_text().strip() == want
    except OSError:
        return False


def setup_venv(profile: str) -> None:
    """The venv with the requirements of profile (run, fix or full)."""
    if profile == "full":
        req, stamp, want = REQUIREMENTS_TEST, STAMP_TEST, _sha256(REQUIREMENTS, REQUIREMENTS_TEST)
    else:
        req, stamp, want = REQUIREMENTS, STAMP, _sha256(REQUIREMENTS)
    if _stamped(stamp, want):
        return
    BUILD_ROOT.mkdir(parents=True, exist_ok=True)
    if not VENV_PYTHON.exists():
        # The system's python3, the one running this launcher.
        if subprocess.run([sys.executable, "-m", "venv", str(VENV)]).returncode != 0:
            die("python3 -m venv failed (is python3-venv installed?)")
    pip = VENV / "bin" / "pip"
    if not stage_command(f"venv: pip install -r {rel(req)} into {rel(VENV)}",
                         [pip, "install", "--disable-pip-version-check", "-r", req]):
        die(f"pip install -r {rel(req)} failed")
    stamp.write_text(want + "\n")
    if profile == "full":  # requirements-test.txt includes requirements.txt
        STAMP.write_text(_sha256(REQUIREMENTS) + "\n")


def exists() -> bool:
    return VENV_PYTHON.exists()
