"""What the command line tells about settings: the config groups with their options and
defaults, every setting's key, and shell completion built from the same lists."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from bugbout.config.groups import (
    GROUPS,
    ROLES,
    defaults_choices,
    maps,
    packaged_options,
)
from bugbout.config.layout import find_config
from bugbout.core.contract.errors import BugboutError
from bugbout.core.contract.instances import instances
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings, PluginChoice

COMMANDS = {
    "init": ("--force", "--source", "--tests"),
    "doctor": ("--dry-run",),
    "tasks": ("--mine-only", "--cfg"),
    "run": ("--retry-failed", "--keep-going", "-m", "--cfg", "--info"),
    "report": ("--format", "--job", "--sweep"),
    "compare": ("--format", "--fail-if-regressed"),
    "export": ("--format", "--repo"),
    "plugins": ("new",),
    "demo": ("--lang",),
    "completion": ("bash", "zsh", "fish"),
}
"""Each command and the flags it takes (``bugbout COMMAND --help`` says what they do)."""


def group_options(group: str, plugins: Plugins) -> list[str]:
    """Every option of a config group: packaged YAML and registered plugins."""
    return sorted(packaged_options(group) | set(plugins.of_kind(GROUPS[group])))


WIDTH = 13
"""The first column of ``--help``'s settings: the longest group name and a space or two."""


def settings_help(plugins: Plugins, chosen: Mapping[str, Any], words: Sequence[str] = ()) -> str:
    """The config groups (default first), the keys of every setting and the options of the
    plugins chosen (``chosen``, see :func:`project_choices`, then ``words``, see
    :func:`line_choices`) or chosen by default, for ``--help``."""
    defaults = BoutSettings.model_fields
    lines = ["config groups (GROUP=OPTION; the default first):"]
    for group in GROUPS:
        field = defaults.get(group)
        default = field.default.name if field and isinstance(field.default, PluginChoice) else ""
        options = [default] if default else []
        options += [name for name in group_options(group, plugins) if name != default]
        if group in ROLES:  # the entries bugbout.yaml and the line define
            options += [name for name in _entries(f"{group}s", chosen) if name not in options]
        several = "  (several: 'GROUP=[a,b]')" if GROUPS[group] == "agent" else ""
        lines.append(f"  {group:<{WIDTH}}{' | '.join(options)}{several}")
    lines.append("settings (KEY=VALUE):")
    for section, keys in setting_keys():
        lines.append(f"  {section + '.':<{WIDTH}}{', '.join(keys)}")
    lines.append("options of the chosen plugins (the line's, bugbout.yaml's, else the defaults):")
    for section, keys in plugin_keys(plugins, over_choices(chosen, line_choices(words))):
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
    (``miner.limit``), each chosen contestant's or examiner's (``contestant.codex.model``),
    each entry's of a map of instances (``reporters.html.title``,
    ``contestants.mine.model``) and an examiner's assignment's, when its entry gives a map
    (``examiners.mine.assignment.scope``). ``chosen`` holds the choices made over the packaged
    defaults (see :func:`project_choices` and :func:`line_choices`)."""
    found: dict[str, list[str]] = {}

    def add(section: str, kind: str, name: str) -> None:
        role = section.split(".", 1)[0].removesuffix("s")
        extra = _entry_keys(role) if kind == "agent" and role in ROLES else []
        for key in [*_options_of(plugins, kind, name), *extra]:
            found.setdefault(section, [])
            if key not in found[section]:  # a sweep's plugins share options
                found[section].append(key)

    for group, kind in GROUPS.items():
        field = BoutSettings.model_fields.get(group)
        if field and isinstance(field.default, PluginChoice):
            for name in _names(chosen.get(group)) or [field.default.name]:
                add(group, kind, name)
    for role in ROLES:
        kind = GROUPS[role]
        packaged = packaged_options(role) | set(plugins.of_kind(kind))
        defined = _entries(f"{role}s", chosen)
        for name in _names(chosen.get(role)):
            entry = defined.get(name)
            agent = name if name in packaged else _plugin_of(entry, kind)
            if agent:
                add(f"{role}.{name}", kind, agent)
    for role, kind in maps().items():
        try:
            found_instances = instances(role, kind, _entries(role, chosen))
        except (BugboutError, TypeError, ValueError):
            continue  # a broken map: `bugbout run` says what is wrong with it
        for instance in found_instances:
            add(instance.where, kind, instance.plugin)
            if isinstance(instance.options.get("assignment"), Mapping):  # with its options
                from bugbout.core.race.contestants import ASSIGNMENT, assignment_of

                try:
                    given = assignment_of(instance.where, instance.options[ASSIGNMENT])
                except BugboutError:
                    continue  # it names no assignment: `bugbout run` says so
                add(given.where, ASSIGNMENT, given.plugin)
    yield from found.items()


def _entry_keys(role: str) -> list[str]:
    """The keys a contestant's or examiner's entry takes besides its agent's options."""
    from bugbout.core.plumbing.models.cutoffs import KEY
    from bugbout.core.race.contestants import ASSIGNMENT

    return [KEY, ASSIGNMENT] if role == "examiner" else [KEY]


def _names(choice: Any) -> list[str]:
    """The options a group's choice names: ``strict``, ``[codex,mine]``, a sweep's
    ``majority,strict``; none for ``[]`` or no choice."""
    if isinstance(choice, list | tuple):
        return [str(item) for item in choice]
    return re.findall(r"[^\[\],\s]+", choice) if isinstance(choice, str) else []


def _plugin_of(entry: Any, kind: str) -> str:
    """The plugin an entry of a map names under ``kind``; empty when it names none."""
    plugin = entry.get(kind) if isinstance(entry, Mapping) else None
    return str(plugin) if plugin else ""


def _entries(role: str, chosen: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of map ``role``: the packaged ones with those ``chosen`` merged over them."""
    field = BoutSettings.model_fields[role.replace("-", "_")]
    return _over(field.get_default(call_default_factory=True), chosen.get(role))


def _over(entries: Mapping[str, Any], top: Any) -> dict[str, Any]:
    """The entries of a map with those of ``top`` merged over them as Hydra merges them:
    an entry's keys over the same entry's; ``None`` removes the entry."""
    merged = dict(entries)
    for name, entry in top.items() if isinstance(top, Mapping) else ():
        earlier = merged.get(name)
        if isinstance(earlier, Mapping) and isinstance(entry, Mapping):
            entry = {**earlier, **entry}
        merged[name] = entry
    return merged


def over_choices(chosen: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """The choices ``top`` makes over ``chosen`` (the line's over ``bugbout.yaml``'s): a
    group's replace, a map's entries merge."""
    merged = {**chosen, **top}
    for role in maps():
        if role in chosen and role in top:
            merged[role] = _over(_over({}, chosen[role]), top[role])
    return merged


def _options_of(plugins: Plugins, kind: str, name: str) -> list[str]:
    """The options (dashed) of plugin ``name`` of ``kind``; none when it is not installed."""
    try:
        model = plugins.get(kind, name).spec.options
    except BugboutError:
        return []
    return [field.alias or key for key, field in model.model_fields.items()]


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
    chosen = {key: value for key, value in loaded.items() if key in maps()}
    return {**chosen, **defaults_choices(loaded.get("defaults"))}


def line_choices(words: Sequence[str]) -> dict[str, Any]:
    """What ``words`` choose, shaped like :func:`project_choices`: groups' plugins
    (``judge=strict``, a sweep's ``judge=majority,strict``), the contestants and examiners
    (``contestant=[codex,mine]``), and the entries they add to a map of instances, set the
    plugin of or remove (``reporters.mine.reporter=html``, ``+reporters.short={reporter:
    html}``, ``~reporters.markdown``)."""
    chosen: dict[str, Any] = {}
    kinds = maps()
    for word in words:
        key, _, value = word.partition("=")
        path = key.lstrip("+~").split(".")
        removed = key.startswith("~") or value == "null"
        if len(path) == 1 and path[0] in GROUPS and value:
            chosen[path[0]] = value
        elif path[0] in kinds and len(path) in (2, 3):
            entries = chosen.setdefault(path[0], {})
            entry = None if removed else _flow_mapping(value)
            if len(path) == 2 and (removed or entry is not None):
                entries[path[1]] = entry
            elif len(path) == 3 and path[2] == kinds[path[0]] and value and not removed:
                entries[path[1]] = {**(entries.get(path[1]) or {}), path[2]: value}
    return chosen


def _flow_mapping(value: str) -> dict[str, Any] | None:
    """The mapping an override's value writes (``{reporter: html, title: Short}``), if any."""
    if not value.startswith("{"):
        return None
    import yaml

    try:
        loaded = yaml.safe_load(value)
    except yaml.YAMLError:
        return None
    return loaded if isinstance(loaded, dict) else None


def complete(
    words: Sequence[str], plugins: Plugins, chosen: Mapping[str, Any] | None = None
) -> list[str]:
    """Candidates for the last of ``words`` (the words after ``bugbout``); ``chosen``:
    what ``bugbout.yaml`` chooses (see :func:`project_choices`), which ``words`` override."""
    *done, current = words or [""]
    if not done:
        return [c for c in ("-m", *COMMANDS) if c.startswith(current)]
    command = done[0]
    if command in ("init", "report", "compare", "export", "demo", "completion"):
        return [flag for flag in COMMANDS[command] if flag.startswith(current)]
    chosen = over_choices(chosen or {}, line_choices(done))
    if "=" in current:
        key, _, value = current.partition("=")
        group = key.lstrip("+~")
        if group not in GROUPS:
            return []
        options = group_options(group, plugins)
        if group in ROLES:  # the contestants (examiners) defined, in bugbout.yaml or here
            defined = _entries(f"{group}s", chosen)
            options = sorted({*options, *(name for name, e in defined.items() if e is not None)})
        cut = max(value.rfind("["), value.rfind(",")) + 1  # in '[codex,mine]' or 'a,b'
        head, item = value[:cut], value[cut:]
        return [f"{key}={head}{o}" for o in options if o.startswith(item)]
    candidates = [*COMMANDS.get(command, ()), *(f"{group}=" for group in GROUPS)]
    sections = [*setting_keys(), *plugin_keys(plugins, chosen)]
    candidates += [f"{section}.{key}=" for section, keys in sections for key in keys]
    return [c for c in candidates if c.startswith(current)]


def completion_script(shell: str) -> str:
    """The script that wires ``bugbout __complete`` into ``shell``'s completion."""
    scripts = {
        "bash": (  # the words up to the cursor, as typed: COMP_WORDS splits at '=' and ':'
            "_bugbout() {\n"
            '  local line="${COMP_LINE:0:COMP_POINT}" quote="" prefix=""\n'
            "  local -a words\n"
            '  read -ra words <<< "$line"\n'
            '  [[ -z $line || $line == *[[:space:]] ]] && words+=("")\n'
            '  local last="${words[${#words[@]}-1]}"\n'
            "  if [[ $last == [\\\"\\']* ]]; then\n"
            '    quote="${last:0:1}"\n'
            "  else  # readline replaces what follows the last '=' or ':'\n"
            '    prefix="${last%"${last##*[=:]}"}"\n'
            "  fi\n"
            '  words[${#words[@]}-1]="${last#$quote}"\n'
            "  local IFS=$'\\n'\n"
            '  COMPREPLY=($(bugbout __complete "${words[@]:1}" 2>/dev/null))\n'
            '  COMPREPLY=("${COMPREPLY[@]/#/$quote}")\n'
            '  COMPREPLY=("${COMPREPLY[@]#"$prefix"}")\n'
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
