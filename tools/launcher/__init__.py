"""The nanotick launcher: `./nanotick <command>` (docs/COMMANDS.md).

`./nanotick` is a bash bootstrap that makes sure python3 exists and runs
`python3 -m tools.launcher` from the repository root. This package is
standard library only: it runs on the system's python3, before the venv in
build/venv exists (it is what creates it).

  cli.py         the command table, `./nanotick --help`, dispatch
  context.py     the tree's paths, the build's -j, die/say and the error type
  options.py     argparse for the commands' options, with the launcher's messages
  logs.py        build/logs/<command>-<time>-<pid>.log, stages, build progress
  packages.py    the Debian package groups (run, fix, full) and apt-get
  venv.py        build/venv and its pip requirements
  provision.py   what a command needs installed (setup_for run|fix|full)
  presets.py     CMake presets, build scopes, configure + build
  commands/      one module per command group
"""
