"""The ``bugbout`` command line: :mod:`~bugbout.cli.commands` reads the subcommand and
runs it, the others are what its commands share (parsing, the console, help and
completion, the dry run, the commands that read results)."""

from bugbout.cli.commands import main

__all__ = ["main"]
