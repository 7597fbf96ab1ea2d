"""API key hashes for scripts and tests, computed by the binary that defines
them (nanotick-credential, apps/credential.cpp, over src/venue/credential):
the stored form "sha256:<salt hex>:<digest hex>" is written in C++ only, so
Python cannot drift from what the exchange checks at logon."""

from __future__ import annotations

import subprocess
from typing import List, Optional

from tools.binaries import PathLike, binary


class CredentialError(ValueError):
    """nanotick-credential refused the key or the stored form (its message says why)."""


def _credential(args: List[str], build: Optional[PathLike]) -> subprocess.CompletedProcess:
    """Runs nanotick-credential: the one place Python reaches the hash."""
    exe = binary("nanotick-credential", build)
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=30, check=False)


def stored_credential(key: str, build: Optional[PathLike] = None) -> str:
    """The exchange config's stored form of API key `key` (a fresh random salt each call)."""
    done = _credential(["--key", key, "--stored"], build)
    if done.returncode != 0:
        raise CredentialError(done.stderr.strip() or f"nanotick-credential exited {done.returncode}")
    return done.stdout.strip()


def credential_matches(stored: str, key: str, build: Optional[PathLike] = None) -> Optional[bool]:
    """Whether `key` is the API key of the stored form `stored`; None when either is
    malformed (not a stored form, or not a key a Logon can carry): the exchange's
    own config loader reports those, with its own words."""
    done = _credential(["--key", key, "--check", stored], build)
    if done.returncode in (0, 1):
        return done.returncode == 0
    return None
