"""Shared by every integration suite: the `timing` marker.

A test marked `timing` asserts a bound on wall-clock time (a latency p99, a
session closed within a window, a process that stops within seconds). Such a
bound only means something on a machine that is not also running the chaos
soak and three other pytest workers, so `./nanotick test` runs these tests in
a pass of their own, one at a time, after the parallel pass
(docs/CONTRIBUTING.md "Tests"). Everything else must pass however busy the
machine is.
"""


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "timing: asserts a wall-clock bound; ./nanotick test runs it alone, after the "
                            "parallel pass")
