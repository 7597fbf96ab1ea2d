"""argparse for the commands' options, with the launcher's own messages.

argparse's messages ("unrecognized arguments: x", "argument --stress:
expected one argument") and its exit code 2 are not the launcher's contract
(docs/COMMANDS.md, tests/launcher/launcher_test.sh): an unknown option is
"unknown <command> option 'X'", a bad or missing value "<option> needs
<what it takes>", both exit 1 and point at '<command> --help'. Help is the
command's hand-written text, printed to stdout with exit 0.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Callable, Dict, NoReturn, Optional, Sequence

from .context import Fail, Finished


class _HelpAction(argparse.Action):
    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs) -> None:
        super().__init__(option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> NoReturn:
        parser.print_help()
        parser.exit(0)


class CommandParser(argparse.ArgumentParser):
    """One command's options. add(option, needs=WHAT) names what a value
    must be: "OPTION needs WHAT" is the error for a missing or bad one."""

    def __init__(self, command: str, help_text: str) -> None:
        super().__init__(prog=f"./nanotick {command}", add_help=False, allow_abbrev=False)
        self.command = command
        self.help_text = help_text
        self.needs: Dict[str, str] = {}
        self.add_argument("-h", "--help", action=_HelpAction)

    def add(self, *flags: str, needs: Optional[str] = None, **kwargs) -> None:
        self.add_argument(*flags, **kwargs)
        if needs:
            for flag in flags:
                self.needs[flag] = needs

    def exit(self, status: int = 0, message: Optional[str] = None) -> NoReturn:
        # After --help: main() returns the code (no SystemExit through the caller).
        if message:
            sys.stderr.write(message)
        raise Finished(status)

    def format_help(self) -> str:
        return self.help_text.rstrip("\n") + "\n"

    def see_help(self) -> str:
        return f"(see ./nanotick {self.command} --help)"

    def error(self, message: str) -> NoReturn:
        m = re.match(r"argument ([^:/ ]+)(?:/[^:]+)?: (.*)", message)
        if m and m.group(1) in self.needs:
            raise Fail(f"{m.group(1)} needs {self.needs[m.group(1)]} {self.see_help()}")
        if m and m.group(2).startswith("ignored explicit argument"):
            raise Fail(f"{m.group(1)} takes no value {self.see_help()}")
        raise Fail(f"{message} {self.see_help()}")

    def parse(self, args: Sequence[str]) -> argparse.Namespace:
        """Parses args; anything argparse does not know is an unknown option."""
        namespace, unknown = self.parse_known_args(list(args))
        if unknown:
            raise Fail(f"unknown {self.command} option '{unknown[0]}' {self.see_help()}")
        return namespace


def matching(pattern: str, convert: Callable[[str], object] = str) -> Callable[[str], object]:
    """An argparse type: the whole value must match pattern (a bad value then
    gets the option's `needs` message)."""
    compiled = re.compile(pattern)

    def check(value: str) -> object:
        if not compiled.fullmatch(value):
            raise argparse.ArgumentTypeError(value)
        return convert(value)

    return check


def whole_number(max_digits: int) -> Callable[[str], object]:
    """A whole number from 1 of at most max_digits digits: no sign, no
    leading zero."""
    return matching(f"[1-9][0-9]{{0,{max_digits - 1}}}", int)


def wants_help(args: Sequence[str]) -> bool:
    """The commands that hand their arguments to a program unchanged answer
    --help only as their first argument (later ones are the program's)."""
    return bool(args) and args[0] in ("-h", "--help")


def print_help(text: str) -> None:
    sys.stdout.write(text.rstrip("\n") + "\n")
    sys.stdout.flush()

