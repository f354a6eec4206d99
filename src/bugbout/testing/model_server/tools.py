"""The tools an agent offers: which one runs a shell command, with what arguments, and a small
value for any JSON schema a side request asks its answer in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bugbout.testing.model_server.replies import AUXILIARY_TEXT

SHELL_TOOL_NAMES = (
    "exec_command",  # Codex
    "Bash",  # Claude Code
    "run_shell_command",  # Gemini CLI
    "bash",  # mini-swe-agent, many others
    "shell",  # older Codex
    "shell_command",
    "execute_bash",
    "execute_command",
    "run_command",
    "terminal",
)
"""The shell tools of known agents, tried in this order before any other tool named bash or
shell."""


def _properties(schema: Any) -> dict[str, Any]:
    if isinstance(schema, Mapping):
        props = schema.get("properties")
        if isinstance(props, Mapping):
            return dict(props)
    return {}


def pick_shell_tool(tools: Sequence[tuple[str, Any]]) -> tuple[str, Any] | None:
    """The offered tool to run a shell command with: ``(name, parameter schema)``."""
    by_name = dict(tools)
    for name in SHELL_TOOL_NAMES:
        if name in by_name:
            return name, by_name[name]
    for name, schema in tools:
        lowered = name.lower()
        if ("bash" in lowered or "shell" in lowered) and (
            {"command", "cmd"} & _properties(schema).keys()
        ):
            return name, schema
    return None


def shell_arguments(name: str, schema: Any, command: str) -> dict[str, Any]:
    """Arguments for the shell tool ``name`` to run ``command``.

    The command goes in ``cmd`` (Codex's ``exec_command``) or ``command``, as an argv list
    ``["bash", "-lc", command]`` when the schema wants an array (older Codex ``shell``). Other
    required parameters get placeholder values.
    """
    props = _properties(schema)
    key = (
        "cmd"
        if name == "exec_command" or ("cmd" in props and "command" not in props)
        else "command"
    )
    prop = props.get(key)
    wants_list = (
        str(prop.get("type", "")).lower() == "array"
        if isinstance(prop, Mapping)
        else name == "shell"
    )
    arguments: dict[str, Any] = {key: ["bash", "-lc", command] if wants_list else command}
    login = props.get("login")
    if name == "exec_command" or (
        isinstance(login, Mapping) and str(login.get("type", "")).lower() == "boolean"
    ):
        # A login shell resets PATH (Codex): the agent's PATH must survive.
        arguments["login"] = False
    required = schema.get("required") if isinstance(schema, Mapping) else None
    for other in required or ():
        if isinstance(other, str) and other not in arguments:
            arguments[other] = sample_from_schema(props.get(other))
    return arguments


def sample_from_schema(schema: Any) -> Any:
    """A small value that satisfies a JSON schema, for side requests asking for JSON.

    Enumerations prefer the choice that ends a turn or picks the cheap model (Gemini CLI's
    next-speaker check and router).
    """
    if not isinstance(schema, Mapping):
        return AUXILIARY_TEXT
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return sample_from_schema(schema[key][0])
    enum = schema.get("enum")
    if enum:
        for preferred in ("user", "flash"):
            if preferred in enum:
                return preferred
        return enum[0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    kind = str(kind).lower() if kind else ("object" if "properties" in schema else "string")
    if kind == "object":
        return {name: sample_from_schema(sub) for name, sub in _properties(schema).items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        # Scores and counts are often constrained to start at 1 (Gemini CLI's router).
        minimum = schema.get("minimum")
        return minimum if isinstance(minimum, int | float) else 1
    if kind == "boolean":
        return False
    return AUXILIARY_TEXT
