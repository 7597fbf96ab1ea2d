"""Where the built nanotick binaries are, for every tool and test that runs one.

The build directory is NANOTICK_BUILD_DIR when set (a test run against
another preset), else build/release under the repository root, which is what
`./nanotick build` makes."""

from __future__ import annotations

import os
import pathlib
from typing import Optional, Union

REPO = pathlib.Path(__file__).resolve().parent.parent

PathLike = Union[str, os.PathLike]


class BinaryMissing(FileNotFoundError):
    """A binary a tool needs was not built; the message says how to build it."""


def build_dir(override: Optional[PathLike] = None) -> pathlib.Path:
    if override is not None:
        return pathlib.Path(override)
    return pathlib.Path(os.environ.get("NANOTICK_BUILD_DIR", REPO / "build" / "release"))


def binary(name: str, build: Optional[PathLike] = None, must_exist: bool = True) -> pathlib.Path:
    """The path of build/<preset>/bin/<name>; BinaryMissing when it must exist and does not."""
    path = build_dir(build) / "bin" / name
    if must_exist and not path.is_file():
        raise BinaryMissing(f"{path} is missing: build it with 'cmake --build {build_dir(build)} --target {name}' "
                            f"(or ./nanotick build)")
    return path
