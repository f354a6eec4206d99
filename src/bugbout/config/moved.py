"""Settings that moved, still accepted where users wrote them, each with a one-line note:
on the command line (``env=uv``, ``judge.run-suite=false``) and in ``bugbout.yaml``
(``env:``, ``- override env: uv``). The Hydra adapter applies them before composing."""

from __future__ import annotations

from typing import Any

MOVED = {
    "env": "environment",
    "judge.run-suite": "verdicts.run-suite",
    "tasks.issue-sources": "issue-sources",
    "issue-source": "issue-sources",
    "reporter": "reporters",
    **{
        f"tasks.{key}": f"miner.{key}"
        for key in ("ref", "since", "limit", "max-source-files", "fix-words")
    },
}
"""Old dotted key → new dotted key (a config group when it has no dot)."""
LISTS = {"reporters": "reporter", "issue-sources": "issue-source"}
"""Settings that were lists of plugin names and are maps of instances now, each naming
its plugin under the kind's word: ``[json]`` is ``{json: {reporter: json}}``."""


def moved_override(arg: str) -> tuple[list[str], str | None]:
    """``arg`` with a moved key renamed (a list of names as the overrides that make
    that map), and the note to show; ``([arg], None)`` otherwise."""
    key, equals, value = arg.partition("=")
    bare = key.lstrip("+~")
    sign = key[: len(key) - len(bare)]
    for old, new in MOVED.items():
        if bare == old or bare.startswith(f"{old}."):
            renamed = f"{sign}{new}{bare[len(old) :]}{equals}{value}"
            if new in LISTS and bare == old and _is_name(value):  # reporter=json: [json]
                listed = f"[{value.strip()}]"
                return _listed(new, listed), _list_note(arg, old, new, listed, still=arg)
            if new in LISTS and _is_list(value):
                return _listed(new, value), _list_note(arg, old, new, value)
            return [renamed], f"{arg}: `{old}` is now `{new}`; write {renamed} ({old} still works)"
    if bare in LISTS and _is_list(value):
        return _listed(bare, value), _list_note(arg, bare, bare, value)
    return [arg], None


def _is_list(value: str) -> bool:
    return value.strip().startswith("[")


def _is_name(value: str) -> bool:
    """Whether ``value`` is one plugin's name (not a list, a map or nothing)."""
    return bool(value.strip()) and not value.strip().startswith(("[", "{"))


def _names(value: str) -> list[str]:
    return [name.strip().strip("'\"") for name in value.strip()[1:-1].split(",") if name.strip()]


def _listed(key: str, value: str) -> list[str]:
    """The overrides that make map ``key`` hold exactly the plugins listed, in order."""
    entries = ", ".join(f"{name}: {{{LISTS[key]}: {name}}}" for name in _names(value))
    return [f"~{key}", f"+{key}={{{entries}}}"]


def _list_note(arg: str, old: str, new: str, value: str, still: str = "the list") -> str:
    names = _names(value)
    packaged = packaged_names(new)
    spelling = [f"~{new}.{name}" for name in packaged if name not in names]
    added = [name for name in names if name not in packaged]
    spelling += [f"+{new}.{name}={{{LISTS[new]}: {name}}}" for name in added]
    moved = f"`{old}` is now `{new}`," if old != new else f"`{new}` is"
    return (
        f"{arg}: {moved} a map of instances by name now; write "
        f"{' '.join(spelling) or 'nothing'}{_order_hint(new, names)} ({still} still works)"
    )


def _order_hint(key: str, names: list[str]) -> str:
    if _order_needed(key, names):
        return f" and give each its place, {key}.NAME.order=0, 1, ..."
    return ""


def _order_needed(key: str, names: list[str]) -> bool:
    """Whether the map, packaged entries first, would not keep the order of ``names``."""
    packaged = packaged_names(key)
    merged = [*packaged, *(name for name in names if name not in packaged)]
    return [name for name in merged if name in names] != names


def packaged_names(key: str) -> list[str]:
    """The entries bugbout's packaged defaults give map ``key`` (``reporters``)."""
    from bugbout.core.contract.settings import BoutSettings

    field = BoutSettings.model_fields[key.replace("-", "_")]
    return list(field.get_default(call_default_factory=True))


def moved_config(data: dict[str, Any], where: str) -> list[str]:
    """Rename the moved keys of a ``bugbout.yaml`` loaded as ``data`` (in place): its
    defaults list's groups and its settings; the notes to show, naming ``where``."""
    notes = []
    defaults = data.get("defaults")
    defaults = defaults if isinstance(defaults, list) else []
    for index, item in enumerate(defaults):
        if not isinstance(item, dict) or len(item) != 1:
            continue
        ((key, value),) = item.items()
        *words, group = str(key).split()
        bare = group.lstrip("/")
        if bare in MOVED and "." not in bare:
            renamed = " ".join([*words, group.replace(bare, MOVED[bare])])
            defaults[index] = {renamed: value}
            notes.append(_note(where, f"{key}: {value}", f"{renamed}: {value}", bare))
    listed = {}
    for old, new in [*((key, key) for key in LISTS), *MOVED.items()]:
        found = _pop(data, old.split("."))
        if found is _ABSENT:
            continue
        if new in LISTS and isinstance(found, str):  # `reporter: json`: one plugin
            found = [found]
        if new in LISTS and isinstance(found, list):
            listed[new] = [str(name) for name in found]
            found = _instances(new, listed[new])
            notes.append(_note(where, f"{old}: [...]", f"{new}: {_flow(found)}", old))
        elif old != new:
            notes.append(_note(where, f"{old}:", f"{new}:", old))
        _put(data, new.split("."), found)
    for key, names in listed.items():  # options given apart: only the listed plugins'
        entries = _instances(key, names)
        for name, options in data[key].items():
            if isinstance(entries.get(name), dict) and isinstance(options, dict):
                entries[name] = {**entries[name], **options}
        data[key] = entries
    return notes


def _instances(key: str, names: list[str]) -> dict[str, Any]:
    """Map ``key`` holding exactly the plugins ``names``, in their order."""
    order = _order_needed(key, names)
    entries: dict[str, Any] = {name: None for name in packaged_names(key) if name not in names}
    for index, name in enumerate(names):
        entries[name] = {LISTS[key]: name, **({"order": index} if order else {})}
    return entries


def _flow(entries: dict[str, Any]) -> str:
    def one(value: Any) -> str:
        if isinstance(value, dict):
            return "{" + ", ".join(f"{k}: {one(v)}" for k, v in value.items()) + "}"
        return "null" if value is None else str(value)

    return one(entries)


def _note(where: str, old: str, new: str, key: str) -> str:
    return f"{where}: `{old}` is now `{new}`; rename it ({key} still works)"


_ABSENT = object()


def _pop(data: dict[str, Any], path: list[str]) -> Any:
    node: Any = data
    for part in path[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, dict) or path[-1] not in node:
        return _ABSENT
    return node.pop(path[-1])


def _put(data: dict[str, Any], path: list[str], value: Any) -> None:
    node = data
    for part in path[:-1]:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    current = node.get(path[-1])
    if isinstance(current, dict) and isinstance(value, dict):
        value = {**current, **value}
    node[path[-1]] = value
