"""The config groups and what each may choose: the options bugbout ships as YAML, every
registered plugin of the group's kind, and the contestants and examiners ``bugbout.yaml``
defines (or the command line adds), registered with Hydra's config store; a choice none
of them offers is one line that lists those that exist."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bugbout.config.layout import CONFIG_NAME
from bugbout.config.overrides import split_hydra_args
from bugbout.core.contract.errors import ConfigError

if TYPE_CHECKING:
    from omegaconf import DictConfig, ListConfig

    from bugbout.core.contract.manager import Plugins

GROUPS = {
    "miner": "miner",
    "environment": "environment",
    "test-runner": "test-runner",
    "sandbox": "sandbox",
    "executor": "executor",
    "judge": "judge",
    "auditor": "auditor",
    "contestant": "agent",
    "examiner": "agent",
}
"""The config groups the settings know, with the plugin kind their options name."""
INSTANCE_MAPS = {"issue-sources": "issue-source", "reporters": "reporter"}
"""Settings that map names to instances of a plugin kind, each naming its plugin under
the kind's word (``reporters: {html: {reporter: html, title: ...}}``)."""
ROLES = ("contestant", "examiner")
"""Groups whose options are agents, several selectable at once (``contestant=[a,b]``);
each has a map of those defined in ``bugbout.yaml`` (``contestants:``), which the core
races when none is chosen."""


def maps() -> dict[str, str]:
    """Each map of instances, with the key its entries name their plugin under
    (``reporters`` → ``reporter``, ``contestants`` → ``agent``)."""
    return {**INSTANCE_MAPS, **{f"{role}s": GROUPS[role] for role in ROLES}}


def defaults_choices(defaults: Any) -> dict[str, Any]:
    """What a defaults list (``[base, {override judge: strict}, _self_]``, plain data)
    chooses, by group."""
    chosen: dict[str, Any] = {}
    for item in defaults if isinstance(defaults, list) else ():
        for key, value in item.items() if isinstance(item, dict) else ():
            chosen[str(key).removeprefix("override ").strip()] = value
    return chosen


def file_choices(data: dict[str, Any]) -> list[str]:
    """The group options ``bugbout.yaml`` (``data``, plain, its moved keys renamed) chooses
    in its defaults list (``- override judge: strict``), as overrides (``judge=strict``)."""
    chosen = defaults_choices(data.get("defaults"))
    return [
        f"{group}={value}"
        for group, value in chosen.items()
        if group in GROUPS and isinstance(value, str)
    ]


def packaged_options(group: str) -> set[str]:
    """The options of a config group that bugbout ships as YAML."""
    from importlib import resources

    folder = resources.files("bugbout.conf") / group
    if not folder.is_dir():
        return set()
    return {item.name[:-5] for item in folder.iterdir() if item.name.endswith(".yaml")}


def register_plugin_options(
    plugins: Plugins, args: list[str], every: bool = False
) -> list[tuple[str, str]]:
    """Make each plugin that ``args`` choose (``every``: each plugin of every group, for a
    sweep) selectable by name, without shipping YAML; only the kinds chosen are imported.
    The plugins made selectable, ``(kind, name)``."""
    from hydra.core.config_store import ConfigStore

    chosen: dict[str, set[str]] = {}
    if every:
        chosen = {group: set(plugins.of_kind(kind)) for group, kind in GROUPS.items()}
    else:
        for group, values in group_choices(args):
            chosen.setdefault(group, set()).update(values)
    store = ConfigStore.instance()
    registered = []
    for group, names in chosen.items():
        packaged = packaged_options(group)
        for name in sorted(names - packaged):
            if name not in plugins.of_kind(GROUPS[group]):
                continue  # not a plugin: check_group_choices says what is wrong
            if group in ROLES:
                store.store(group=group, name=name, node={"agent": name}, package=f"{group}.{name}")
            else:
                store.store(group=group, name=name, node={"name": name})
            registered.append((GROUPS[group], name))
    return registered


def register_defined(
    config: Path, loaded: DictConfig | ListConfig, role: str, args: Sequence[str]
) -> list[str]:
    """Contestants (or examiners) defined in ``bugbout.yaml``, or added whole on the
    command line (``+contestants.mine={agent: codex}``), become selectable by name
    (``contestant=mine``); the core reads their settings from ``contestants:``."""
    from hydra.core.config_store import ConfigStore
    from omegaconf import DictConfig

    defined = loaded.get(f"{role}s") if isinstance(loaded, DictConfig) else None
    if defined and not isinstance(defined, DictConfig):
        raise ConfigError(f"{config}: `{role}s` must map names to settings")
    entries = dict(defined.items()) if isinstance(defined, DictConfig) else {}
    names = [str(name) for name, entry in entries.items() if entry is not None]  # null: removed
    for arg in args:
        key, equals, _ = arg.partition("=")
        parts = key.lstrip("+").split(".")
        if equals and not key.startswith("~") and len(parts) == 2 and parts[0] == f"{role}s":
            names += [parts[1]] if parts[1] not in names else []
    if not names:
        return []
    store = ConfigStore.instance()
    clashes = sorted(set(names) & packaged_options(role))
    if clashes:
        where = config if clashes[0] in entries else f"{role}s.{clashes[0]}"
        raise ConfigError(
            f"{where}: {role} {clashes[0]!r} has the name of a packaged option; name yours "
            f"differently, e.g. `{clashes[0]}-mine: {{agent: {clashes[0]}, model: ...}}`"
        )
    for name in names:
        if name in entries and not isinstance(entries[name], DictConfig):
            raise ConfigError(f"{config}: {role} {name!r} must be a mapping, e.g. {{agent: codex}}")
        store.store(group=role, name=name, node={}, package=f"{role}.{name}")
    return names


def group_choices(args: list[str]) -> list[tuple[str, list[str]]]:
    """Each override of ``args`` that chooses a config group's options, with the options
    it chooses (every value of a sweep, every item of a list)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    overrides = [arg for arg in split_hydra_args(args)[1] if "=" in arg]
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except HydraException as exc:
        first = str(exc).strip().splitlines()[0]
        raise ConfigError(f"cannot read the overrides: {first}") from None
    found = []
    for override in parsed:
        group = override.key_or_group
        if group not in GROUPS or override.is_delete():
            continue
        choices = (
            list(override.sweep_iterator()) if override.is_sweep_override() else [override.value()]
        )  # a sweep may choose lists: contestant=[a,b],[c]
        found.append(
            (group, [str(v) for c in choices for v in (c if isinstance(c, list) else [c])])
        )
    return found


def check_group_choices(
    args: list[str], plugins: Plugins, defined: dict[str, list[str]], where: str = ""
) -> None:
    """An unknown option for a group is one line listing the valid ones (after ``where``,
    the file that chose it)."""
    for group, values in group_choices(args):
        valid = (
            packaged_options(group)
            | set(plugins.of_kind(GROUPS[group]))
            | set(defined.get(group, ()))
        )
        for value in values:
            if value in valid:
                continue
            if group == "examiner" and value in plugins.of_kind("assignment"):
                raise ConfigError(
                    f"{where}examiner={value}: {value} is an assignment, not an examiner; "
                    f"define an examiner that takes it, e.g. `examiners: {{mine: {{agent: codex, "
                    f"assignment: {value}}}}}` in {CONFIG_NAME}"
                )
            raise ConfigError(
                f"{where}{group}={value}: no such {group}; choose one of {', '.join(sorted(valid))}"
            )
