"""How the plugin manager tells a plugin's problem: one line that names what is wrong
(a hook misspelt or not marked, an argument the hook does not pass, an invalid record or
options model, an exception), for :mod:`bugbout.core.contract.manager` to report beside the
plugin module and its distribution."""

from __future__ import annotations

import inspect
from typing import Any

import pluggy
from pydantic import BaseModel, ValidationError

from bugbout.core.contract import hookspecs
from bugbout.core.contract.types import PluginSpec


def close_hook(name: str) -> str | None:
    """The bugbout hook ``name`` most likely misspells, if any is close."""
    import difflib  # only for a plugin's mistake

    prefix = "bugbout_"
    hooks = [hook[len(prefix) :] for hook in dir(hookspecs) if hook.startswith(prefix)]
    close = difflib.get_close_matches(name.removeprefix(prefix), hooks, n=1, cutoff=0.75)
    return prefix + close[0] if close else None


def describe(exc: BaseException) -> str:
    """``ValueError: the message``, on one line."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def validation_problems(exc: ValidationError) -> str:
    """A pydantic error as ``field: problem; field: problem``."""
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "record"
        if error["type"] == "is_subclass_of" and where == "options":
            problems.append(_options_message(error.get("input")))
        else:
            problems.append(f"{where}: {error['msg'].removeprefix('Value error, ')}")
    return "; ".join(problems)


def _options_message(value: object) -> str:
    if isinstance(value, type):
        given = value.__name__
    elif isinstance(value, BaseModel):
        given = f"a {type(value).__name__} instance (pass the class itself)"
    else:
        given = repr(value)
    return f"options must be a pydantic model class (a subclass of BaseModel), not {given}"


def options_problem(record: PluginSpec[Any]) -> str | None:
    """Why ``record.options`` cannot validate options (a record built without validation)."""
    options = record.options
    if isinstance(options, type) and issubclass(options, BaseModel):
        return None
    return _options_message(options)


def unmarked_hooks(plugin: object) -> list[str]:
    """Functions named like a bugbout hook but not marked with ``@hookimpl``."""
    found = []
    for attribute in dir(plugin):
        if not attribute.startswith("bugbout_"):
            continue
        value = getattr(plugin, attribute, None)
        marks = (f"{hookspecs.PROJECT_NAME}_impl", f"{hookspecs.PROJECT_NAME}_spec")
        if inspect.isroutine(value) and not any(hasattr(value, mark) for mark in marks):
            found.append(attribute)
    return found


def unimportable(name: str, distribution: str, exc: Exception) -> str:
    """``plugin 'name' from distribution failed to import ...``: why it is skipped."""
    return f"plugin {name!r} from {distribution} failed to import and was skipped: {describe(exc)}"


def invalid_hookimpl(
    pm: pluggy.PluginManager, plugin: object, exc: pluggy.PluginValidationError
) -> str:
    """Pluggy's several-line validation error of ``plugin`` (in ``pm``) as one line:
    which hook, which argument."""
    import difflib  # only for a plugin's mistake

    for attribute in dir(plugin):
        options = pm.parse_hookimpl_opts(plugin, attribute)
        caller = getattr(pm.hook, attribute, None)
        if options is None or caller is None or caller.spec is None:
            continue
        impl = pluggy.HookImpl(plugin, "", getattr(plugin, attribute), options)
        unknown = [arg for arg in impl.argnames if arg not in caller.spec.argnames]
        if not unknown:
            continue
        valid = caller.spec.argnames
        hint = ""
        close = difflib.get_close_matches(unknown[0], valid, n=1)
        if close:
            hint = f"; did you mean {close[0]!r}?"
        passes = f"it passes {', '.join(valid)}" if valid else "it passes no argument"
        return (
            f"{attribute}({', '.join(impl.argnames)}) takes "
            f"{', '.join(repr(arg) for arg in unknown)}, which the hook does not pass "
            f"({passes}){hint}"
        )
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return "; ".join(lines) or type(exc).__name__
