"""What the command line tells about settings: the config groups with their options and
defaults, every setting's key, and shell completion built from the same lists."""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from bugbout.config import GROUPS, INSTANCE_MAPS, ROLES, packaged_options
from bugbout.core.contract.errors import BugboutError
from bugbout.core.contract.instances import instances
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings, PluginChoice
from bugbout.layout import find_config

COMMANDS = {
    "init": ("--force", "--source", "--tests"),
    "doctor": ("--dry-run",),
    "tasks": ("--mine-only", "--cfg"),
    "run": ("--retry-failed", "--keep-going", "-m", "--cfg", "--info"),
    "report": ("--format", "--job", "--sweep"),
    "plugins": ("new",),
    "demo": (),
    "completion": ("bash", "zsh", "fish"),
}
"""Each command and the flags it takes (``bugbout COMMAND --help`` says what they do)."""


def group_options(group: str, plugins: Plugins) -> list[str]:
    """Every option of a config group: packaged YAML and registered plugins."""
    return sorted(packaged_options(group) | set(plugins.of_kind(GROUPS[group])))


WIDTH = 13
"""The first column of ``--help``'s settings: the longest group name and a space or two."""


def settings_help(plugins: Plugins, chosen: Mapping[str, Any]) -> str:
    """The config groups (default first), the keys of every setting and the options of the
    plugins ``chosen`` (see :func:`project_choices`) or chosen by default, for ``--help``."""
    defaults = BoutSettings.model_fields
    lines = ["config groups (GROUP=OPTION; the default first):"]
    for group in GROUPS:
        field = defaults.get(group)
        default = field.default.name if field and isinstance(field.default, PluginChoice) else ""
        options = [default] if default else []
        options += [name for name in group_options(group, plugins) if name != default]
        several = "  (several: 'GROUP=[a,b]')" if GROUPS[group] == "agent" else ""
        lines.append(f"  {group:<{WIDTH}}{' | '.join(options)}{several}")
    lines.append("settings (KEY=VALUE):")
    for section, keys in setting_keys():
        lines.append(f"  {section + '.':<{WIDTH}}{', '.join(keys)}")
    lines.append("options of the chosen plugins (bugbout.yaml's choices, else the defaults):")
    for section, keys in plugin_keys(plugins, chosen):
        lines.append(f"  {section + '.':<{WIDTH - 1}} {', '.join(keys)}")
    return "\n".join(lines) + "\n"


def setting_keys() -> Iterator[tuple[str, list[str]]]:
    """Each section of the settings that holds plain keys, with its keys (dashed)."""
    for name, field in BoutSettings.model_fields.items():
        model = field.annotation
        if isinstance(model, type) and issubclass(model, BaseModel):
            keys = [inner.alias or key for key, inner in model.model_fields.items()]
            if issubclass(model, PluginChoice):
                keys.remove("name")  # chosen as GROUP=OPTION
            if keys:
                yield field.alias or name, keys


def plugin_keys(plugins: Plugins, chosen: Mapping[str, Any]) -> Iterator[tuple[str, list[str]]]:
    """The options (dashed) of each chosen plugin, under the key that sets them: a group's
    (``miner.limit``) and each entry's of a map of instances (``reporters.html.title``,
    ``contestants.mine.model``). ``chosen`` holds the choices made over the packaged
    defaults (see :func:`project_choices`): a group's plugin by name, a map's entries."""
    for group, kind in GROUPS.items():
        field = BoutSettings.model_fields.get(group)
        if field and isinstance(field.default, PluginChoice):
            name = chosen.get(group)
            yield from _options_of(plugins, group, kind, str(name or field.default.name))
    maps = {**INSTANCE_MAPS, **{f"{role}s": GROUPS[role] for role in ROLES}}
    for role, kind in maps.items():
        field = BoutSettings.model_fields[role.replace("-", "_")]
        entries: dict[str, Any] = field.get_default(call_default_factory=True)
        given = chosen.get(role)
        for name, entry in given.items() if isinstance(given, Mapping) else ():
            default = entries.get(name)
            if isinstance(default, Mapping) and isinstance(entry, Mapping):
                entry = {**default, **entry}  # merged like Hydra merges bugbout.yaml
            entries[name] = entry
        try:
            found = instances(role, kind, entries)
        except (BugboutError, TypeError, ValueError):
            continue  # a broken map: `bugbout run` says what is wrong with it
        for instance in found:
            yield from _options_of(plugins, instance.where, kind, instance.plugin)


def _options_of(
    plugins: Plugins, section: str, kind: str, name: str
) -> Iterator[tuple[str, list[str]]]:
    """``section`` with the options of plugin ``name`` of ``kind``, if it has any."""
    try:
        model = plugins.get(kind, name).spec.options
    except BugboutError:
        return  # not installed here: nothing to offer
    keys = [field.alias or key for key, field in model.model_fields.items()]
    if keys:
        yield section, keys


def project_choices(start: Path) -> dict[str, Any]:
    """What the nearest ``bugbout.yaml`` chooses over the packaged defaults: groups' plugins
    (from its ``defaults:``) and its maps of instances (``reporters:``, ``contestants:``);
    nothing when there is none or it does not parse (completion stays quiet)."""
    import yaml

    try:
        loaded = yaml.safe_load(find_config(start).read_text())
    except (BugboutError, OSError, yaml.YAMLError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    maps = (*INSTANCE_MAPS, *(f"{role}s" for role in ROLES))
    chosen = {key: value for key, value in loaded.items() if key in maps}
    defaults = loaded.get("defaults")
    for item in defaults if isinstance(defaults, list) else ():
        for key, value in item.items() if isinstance(item, dict) else ():
            chosen[str(key).removeprefix("override ").strip()] = value
    return chosen


def line_choices(words: Sequence[str]) -> dict[str, str]:
    """The groups' plugins that ``words`` choose (``judge=strict``), by group."""
    chosen = {}
    for word in words:
        key, _, value = word.partition("=")
        group = key.lstrip("+")
        if value and group in GROUPS and group not in ROLES:
            chosen[group] = value
    return chosen


def complete(
    words: Sequence[str], plugins: Plugins, chosen: Mapping[str, Any] | None = None
) -> list[str]:
    """Candidates for the last of ``words`` (the words after ``bugbout``); ``chosen``:
    what ``bugbout.yaml`` chooses (see :func:`project_choices`), which ``words`` override."""
    *done, current = words or [""]
    if not done:
        return [c for c in ("-m", *COMMANDS) if c.startswith(current)]
    command = done[0]
    if command in ("init", "report", "demo", "completion"):
        return [flag for flag in COMMANDS[command] if flag.startswith(current)]
    if "=" in current:
        key, _, value = current.partition("=")
        group = key.lstrip("+~")
        if group in GROUPS:
            return [f"{key}={o}" for o in group_options(group, plugins) if o.startswith(value)]
        return []
    candidates = [*COMMANDS.get(command, ()), *(f"{group}=" for group in GROUPS)]
    sections = [*setting_keys(), *plugin_keys(plugins, {**(chosen or {}), **line_choices(done)})]
    candidates += [f"{section}.{key}=" for section, keys in sections for key in keys]
    return [c for c in candidates if c.startswith(current)]


def completion_script(shell: str) -> str:
    """The script that wires ``bugbout __complete`` into ``shell``'s completion."""
    scripts = {
        "bash": (
            "_bugbout() {\n"
            "  local IFS=$'\\n'\n"
            '  COMPREPLY=($(bugbout __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))\n'
            "  compopt -o nospace 2>/dev/null\n"
            "}\n"
            "complete -F _bugbout bugbout\n"
        ),
        "zsh": (
            "#compdef bugbout\n"
            "_bugbout() {\n"
            "  local -a candidates\n"
            '  candidates=("${(@f)$(bugbout __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")\n'
            "  compadd -S '' -- $candidates\n"
            "}\n"
            "compdef _bugbout bugbout\n"
        ),
        "fish": (
            "complete -c bugbout -f -a "
            + shlex.quote("(bugbout __complete (commandline -cop)[2..-1] (commandline -ct))")
            + "\n"
        ),
    }
    return scripts[shell]
