"""The launcher's commands, one module per group. Each command is a
function run(args) -> exit code, registered in tools/launcher/cli.py."""
