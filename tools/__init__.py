"""nanotick's Python tools, one package run from the repository root
(`python -m tools.<name>`; docs/COMMANDS.md lists the commands that do).
Shared by them: tools.binaries (where the built binaries are), tools.wire
(the independent Python wire codec) and tools.credential (API key hashes,
computed by nanotick-credential). The tests import from here; nothing here
imports from tests/."""
