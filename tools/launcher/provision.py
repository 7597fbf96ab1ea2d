"""What one command needs in place before it runs: setup_for(run|fix|full).

Each command installs what it needs itself (docs/COMMANDS.md "What each
command installs"): the Debian packages of its group, the venv, for fix and
full the FIX gateway's data dictionary, and the demo keys' permissions.
"""

from __future__ import annotations

import hashlib
import shutil
import stat
import zipfile
from typing import IO

from . import packages, venv
from .context import BUILD_ROOT, ROOT, die, rel
from .logs import run_logged, stage

FIX_DIR = BUILD_ROOT / "fix"
FIX_CLIENT_POM = ROOT / "tests" / "integration" / "fix" / "client" / "pom.xml"


def setup_for(profile: str) -> None:
    """Everything profile (run, fix or full) needs; idempotent and quick when
    all is in place."""
    packages.install(packages.for_profile(profile))
    venv.setup_venv(profile)
    if profile != "run":
        setup_fix()
    setup_demo_keys()


def venv_only() -> None:
    """The Python-only commands (report, stat, doctor) need the venv, not the
    compiler: with a venv in place they check only its requirements."""
    if venv.exists():
        venv.setup_venv("run")
    else:
        setup_for("run")


def setup_demo_keys() -> None:
    """The committed demo keys (config/keys/*.key, and the traders' configs
    that hold theirs) are checked out 0644; a key file others may read is
    refused, a trader config warned about (docs/EXCHANGE.md "Key files"):
    make them the owner's alone, as a real one must be."""
    for key in sorted((ROOT / "config" / "keys").glob("*.key")) + sorted((ROOT / "config").glob("trader-*.toml")):
        try:
            if stat.S_IMODE(key.stat().st_mode) != 0o600:
                key.chmod(0o600)
        except OSError:
            die(f"cannot chmod 600 {key}")


def _fetch_fix(log: IO[str]) -> bool:
    """QuickFIX/J's jars from Maven Central, then FIX44.xml out of its FIX 4.4
    messages jar (Debian's QuickFIX strips it as non-free)."""
    jars = FIX_DIR / "jars"
    shutil.rmtree(jars, ignore_errors=True)
    jars.mkdir(parents=True)
    if not run_logged(log, ["mvn", "-B", "-f", FIX_CLIENT_POM, "dependency:copy-dependencies",
                            "-DincludeScope=runtime", f"-DoutputDirectory={jars}"]):
        return False
    found = sorted(jars.glob("quickfixj-messages-fix44-*.jar"))
    if len(found) != 1:
        log.write(f"expected one quickfixj-messages-fix44 jar in {jars}, found {len(found)}\n")
        return False
    try:
        with zipfile.ZipFile(found[0]) as z:
            (FIX_DIR / "FIX44.xml").write_bytes(z.read("FIX44.xml"))
    except (OSError, KeyError, zipfile.BadZipFile) as e:
        log.write(f"could not extract FIX44.xml from {found[0]}: {e}\n")
        return False
    return (FIX_DIR / "FIX44.xml").stat().st_size > 0


def setup_fix() -> None:
    """QuickFIX/J and its FIX 4.4 messages into build/fix/jars (the FIX tests'
    client) and FIX44.xml into build/fix/ (the gateway's data dictionary).
    Redone only when the client's pom.xml changes."""
    want = hashlib.sha256(FIX_CLIENT_POM.read_bytes()).hexdigest()
    stamp = FIX_DIR / ".pom.sha256"
    try:
        if (FIX_DIR / "FIX44.xml").is_file() and stamp.read_text().strip() == want:
            return
    except OSError:
        pass  # no stamp yet: fetch
    if shutil.which("mvn") is None:
        die("mvn not found (Debian: maven); run ./nanotick setup as root")
    if not stage(f"maven: QuickFIX/J and FIX44.xml into {rel(FIX_DIR)}", _fetch_fix, f"mvn -f {rel(FIX_CLIENT_POM)}"):
        die("could not fetch the FIX client's dependencies (tests/integration/fix/client/pom.xml) or FIX44.xml")
    stamp.write_text(want + "\n")

