# Shared by every Python test of the tree (tools/, tests/integration/).
import os
import shutil
import tempfile

import pytest


@pytest.fixture(autouse=True)
def _journal_staging_dir(monkeypatch):
    """Each test's exchanges keep their journal staging rings (docs/EXCHANGE.md
    "Journal") in a tmpfs directory of the test's own, removed after it: a
    test that kills an exchange leaves its ring behind on purpose (the next
    start reads it back), and thousands of test runs must not pile 4 MiB rings
    up in /dev/shm. A test that plays a machine crash empties this directory."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    d = tempfile.mkdtemp(prefix="nanotick-test-staging-", dir=base)
    monkeypatch.setenv("NANOTICK_STAGING_DIR", d)
    yield d
    shutil.rmtree(d, ignore_errors=True)
