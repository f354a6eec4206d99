"""Unknown settings in bugbout's words: the closest valid name, and the valid keys at
that level, whether the mistake is on the command line, in ``bugbout.yaml`` or in a
plugin's options."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate nearest ``word`` in spelling, if any is near enough."""
    import difflib

    found = difflib.get_close_matches(word, sorted(set(candidates)), n=1, cutoff=0.6)
    return found[0] if found else None


def unknown_setting(
    key: str, tree: Mapping[str, Any], options_of: Callable[[Sequence[str]], set[str]]
) -> str | None:
    """Why dotted ``key`` names no setting of ``tree`` (the composed config), in one
    line; ``None`` when its last part is an option that ``options_of(prefix)`` (the
    chosen plugin's options model) accepts though no packaged default sets it."""
    parts = key.split(".")
    node: Any = tree
    for depth, part in enumerate(parts):
        if not isinstance(node, Mapping):
            break
        if part in node:
            node = node[part]
            continue
        keys = {str(k) for k in node} | options_of(parts[:depth])
        if part in keys and depth == len(parts) - 1:
            return None
        if part in keys:  # a plugin named in an options map, with no options set yet
            node = {}
            continue
        return _message(key, parts[:depth], part, keys)
    where = ".".join(parts[:-1])
    return f"{key}: {where} takes a value, not keys; set it with `{where}=...`"


def extra_key(model: type[BaseModel], loc: Sequence[str | int]) -> str:
    """Why ``loc`` (an unknown key pydantic found in a settings model) is wrong, with
    the model's valid keys at that level."""
    parts = [str(part) for part in loc]
    current: type[BaseModel] = model
    for part in parts[:-1]:
        annotation = _field_model(current, part)
        if annotation is None:
            break
        current = annotation
    keys = {field.alias or name for name, field in current.model_fields.items()}
    return _message(".".join(parts), parts[:-1], parts[-1], keys)


def misnamed_override(key: str, model: type[BaseModel]) -> str | None:
    """Why an override's dotted ``key`` names no setting of ``model`` (the bout's settings),
    judged from the models alone, so before any plugin is imported; ``None`` when it may be
    right (a plugin's options and named maps are checked once the config is composed)."""
    parts = key.split(".")
    fields = {field.alias or name: field for name, field in model.model_fields.items()}
    fields.pop("root", None)  # set by bugbout, never by the user
    if parts[0] not in fields:
        return _message(key, [], parts[0], set(fields))
    section = fields[parts[0]].annotation
    if len(parts) < 2 or not isinstance(section, type) or not issubclass(section, BaseModel):
        return None
    extra = section.model_config.get("extra")
    keys = {field.alias or name for name, field in section.model_fields.items()}
    if extra == "allow" or parts[1] in keys:
        return None
    return _message(key, parts[:1], parts[1], keys)


def _field_model(model: type[BaseModel], key: str) -> type[BaseModel] | None:
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if key in (name, field.alias) and isinstance(annotation, type):
            return annotation if issubclass(annotation, BaseModel) else None
    return None


def _message(key: str, prefix: Sequence[str], part: str, keys: set[str]) -> str:
    where = ".".join(prefix)
    guess = closest(part, keys)
    hint = f"; did you mean {'.'.join([*prefix, guess])}?" if guess else ""
    level = f"under {where}" if where else "at the top level"
    listing = ", ".join(sorted(keys)) or "none"
    return f"{key}: no such setting{hint} (valid keys {level}: {listing})"


def yaml_problem(config: Path, error: Exception) -> str:
    """A YAML error as one line: where (line and column), what, and the line itself."""
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    lines = str(error).strip().splitlines()
    what = getattr(error, "problem", None) or (lines[0] if lines else type(error).__name__)
    if mark is None:
        return f"{config} is not valid YAML ({what}); fix it or rerun `bugbout init --force`"
    lines = config.read_text(errors="replace").splitlines()
    shown = lines[mark.line].strip() if mark.line < len(lines) else ""
    return (
        f"{config}:{mark.line + 1}:{mark.column + 1}: not valid YAML: {what}"
        + (f" in `{shown}`" if shown else "")
        + "; fix that line or rerun `bugbout init --force`"
    )
