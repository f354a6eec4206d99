"""A subcommand's argument parser: its usage errors are one line, as every other error,
with the nearest known option when one was mistyped."""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

from bugbout.core.contract.errors import ConfigError

if TYPE_CHECKING:
    import argparse

UNRECOGNIZED = "unrecognized arguments: "
"""How argparse begins its error for options it does not know."""


def command_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """A subcommand's parser whose usage errors are one line, as every other error
    (argparse is imported by the subcommands that parse flags, not by every command)."""
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            from bugbout.config.suggest import closest

            hint = ""
            if message.startswith(UNRECOGNIZED):
                near = [
                    found
                    for word in message.removeprefix(UNRECOGNIZED).split()
                    if word.startswith("-")
                    and (found := closest(word, self._option_string_actions))
                ]
                hint = f" (did you mean {near[0]}?)" if near else ""
            raise ConfigError(f"{self.prog}: {message}{hint}; see `{self.prog} --help`")

    return Parser(prog=prog, description=description)
