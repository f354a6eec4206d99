"""Settings that moved, still accepted where users wrote them, each with a one-line note:
on the command line (``env=uv``, ``judge.run-suite=false``) and in ``bugbout.yaml``
(``env:``, ``- override env: uv``). The Hydra adapter applies them before composing."""

from __future__ import annotations

from typing import Any

MOVED = {"env": "environment", "judge.run-suite": "verdicts.run-suite"}
"""Old dotted key → new dotted key (a config group when it has no dot)."""


def moved_override(arg: str) -> tuple[str, str | None]:
    """``arg`` with a moved key renamed, and the note to show; ``(arg, None)`` otherwise."""
    key, equals, value = arg.partition("=")
    bare = key.lstrip("+~")
    sign = key[: len(key) - len(bare)]
    for old, new in MOVED.items():
        if bare == old or bare.startswith(f"{old}."):
            renamed = f"{sign}{new}{bare[len(old) :]}{equals}{value}"
            return renamed, f"{arg}: `{old}` is now `{new}`; write {renamed} ({old} still works)"
    return arg, None


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
    for old, new in MOVED.items():
        found = _pop(data, old.split("."))
        if found is not _ABSENT:
            _put(data, new.split("."), found)
            notes.append(_note(where, f"{old}:", f"{new}:", old))
    return notes


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
