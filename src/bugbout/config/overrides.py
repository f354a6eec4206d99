"""The arguments after a subcommand, read before Hydra sees them: Hydra's flags apart
from the overrides, a flag nobody knows, a misspelt setting, and the options of a defined
contestant given under the group's name."""

from __future__ import annotations

from collections.abc import Sequence

from bugbout.core.contract.errors import ConfigError

HYDRA_FLAGS = {"-m", "--multirun", "--cfg", "-c", "--info", "-i", "--package", "-p", "--resolve"}
"""Hydra's own flags that bugbout passes on: ``--cfg job`` shows the composed settings,
``-m`` runs a sweep, ``--info`` tells where the config came from."""
COMMAND_FLAGS = {"run": ("--retry-failed", "--keep-going")}
"""A command's own flags, each turned into its setting (``run.retry-failed=true``)."""


def check_flags(command: str, options: list[str]) -> None:
    """A flag that neither bugbout nor Hydra's supported flags know is one line that says
    which ones exist."""
    for index, option in enumerate(options):
        if not option.startswith("-") or option in HYDRA_FLAGS:
            continue
        if index and options[index - 1] in HYDRA_OPTIONS_WITH_VALUE:
            continue  # the value of --cfg, --info or --package
        from bugbout.config.suggest import closest  # pydantic: only for the error

        known = ", ".join(sorted(HYDRA_FLAGS))
        near = closest(option, [*COMMAND_FLAGS.get(command, ()), "--help", *HYDRA_FLAGS])
        hint = f" (did you mean {near}?)" if near else ""
        raise ConfigError(
            f"bugbout {command}: unknown option {option}{hint}; it takes overrides "
            f"(KEY=VALUE), the flags that `bugbout {command} --help` lists, and {known}"
        )
    _check_combined(command, options)


def _check_combined(command: str, options: list[str]) -> None:
    """Hydra's flags that only work together, or with a value, in one line each."""
    given = set(options)
    shown = sorted(given & {"--cfg", "-c", "--info", "-i"})
    if shown and given & {"-m", "--multirun"}:
        raise ConfigError(
            f"bugbout {command}: {shown[0]} shows the settings of one job, not of a sweep; "
            "drop -m and give one value of each swept setting"
        )
    for flag in ("--cfg", "-c"):
        if flag in given:
            following = options[options.index(flag) + 1 :][:1]
            if following not in (["job"], ["hydra"], ["all"]):
                raise ConfigError(
                    f"bugbout {command}: {flag} takes what to show: job (the settings), "
                    f"hydra or all, e.g. `bugbout {command} {flag} job`"
                )
    needs_cfg = sorted(given & {"--resolve", "--package", "-p"})
    if needs_cfg and not given & {"--cfg", "-c"}:
        raise ConfigError(
            f"bugbout {command}: {needs_cfg[0]} goes with --cfg, e.g. "
            f"`bugbout {command} --cfg job {needs_cfg[0]}"
            f"{' judge' if needs_cfg[0] != '--resolve' else ''}`"
        )


HYDRA_OPTIONS_WITH_VALUE = {"--cfg", "-c", "--package", "-p", "--info", "-i"}


def split_hydra_args(args: list[str]) -> tuple[list[str], list[str]]:
    """Hydra's options (``--cfg job``, ``-m``) apart from overrides: Hydra rejects
    overrides that options split."""
    options: list[str] = []
    overrides: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if not arg.startswith("-"):
            overrides.append(arg)
        else:
            options.append(arg)
            following = args[index + 1] if index + 1 < len(args) else ""
            if arg in HYDRA_OPTIONS_WITH_VALUE and following and "=" not in following:
                options.append(following)
                index += 1
        index += 1
    return options, overrides


def check_keys(args: Sequence[str]) -> None:
    """A misspelt setting on the command line, in one line and in well under a second:
    checked against the settings' models before any plugin or Hydra is imported."""
    from bugbout.config.suggest import misnamed_override
    from bugbout.core.contract.settings import BoutSettings

    for arg in args:
        key = arg.split("=", 1)[0]
        if "=" not in arg or key.startswith(("+", "~", "-", "hydra")) or "/" in key:
            continue
        problem = misnamed_override(key, BoutSettings)
        if problem:
            raise ConfigError(problem)


def defined_option(arg: str, defined: dict[str, list[str]]) -> str:
    """``contestant.mine.model=...`` sets the option of ``mine`` where it is defined,
    ``contestants.mine.model``, whether ``mine`` is chosen or races by default."""
    key, equals, value = arg.partition("=")
    parts = key.lstrip("+~").split(".")
    if equals and len(parts) > 2 and parts[0] in defined and parts[1] in defined[parts[0]]:
        sign = key[: len(key) - len(key.lstrip("+~"))]
        return f"{sign}{parts[0]}s.{'.'.join(parts[1:])}={value}"
    return arg
