"""A scripted model server: the real agent CLIs talk to it instead of a vendor's API.

The server replays a :class:`Script` of steps — :class:`Shell` (the model asks to run a shell
command in the agent's working directory) or :class:`Say` (the model's final answer) — in each
vendor's native wire format, so a real Codex, Claude Code, Gemini CLI or mini-swe-agent does real
work on a real checkout without spending quota (DESIGN.md §10, notes/agent-clis.md).

It is stateless per request: the step a request gets is the number of tool results already in
that request's history, so retries and parallel conversations behave. Requests that are clearly
not the agent's main loop (titles, quota checks, token counts, routers) get a short answer and
do not advance anything.

Protocols, by path (query strings are ignored, a missing ``/v1`` prefix is tolerated):

* Anthropic Messages — ``POST /v1/messages`` and ``/v1/messages/count_tokens``; ``HEAD``/``GET /``;
* OpenAI Responses — ``POST /v1/responses``;
* OpenAI Chat Completions — ``POST /v1/chat/completions`` (tool calls, or mini-swe-agent's text
  actions when no tool is offered);
* Gemini — ``POST /v1beta/models/<model>:generateContent``, ``:streamGenerateContent``,
  ``:countTokens``;
* ``GET /v1/models`` lists one model.

Example::

    script = Script([Shell("echo fixed > proof.txt"), Say("Fixed it.")])
    with ModelServer(script) as server:
        run_agent(base_url=server.url)
    assert server.requests[0].path == "/v1/messages"

Run standalone (prints the URL, serves until killed)::

    python -m bugbout.testing.model_server --script steps.json --port 8765
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import re
import shlex
import signal
import sys
import threading
import time
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = [
    "INPUT_TOKENS",
    "MSWEA_SUBMIT",
    "OUTPUT_TOKENS",
    "ModelServer",
    "RecordedRequest",
    "Say",
    "Script",
    "Shell",
    "Step",
    "main",
]

INPUT_TOKENS = 100
"""Input tokens reported in every response's usage."""
OUTPUT_TOKENS = 20
"""Output tokens reported in every response's usage."""
MSWEA_SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
"""mini-swe-agent finishes when a command's output starts with this line."""

AUXILIARY_TEXT = "OK"
"""What side requests (titles, quota checks, ...) are answered with."""

_SHELL_TOOL_NAMES = (
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


# --------------------------------------------------------------------------------------------
# Scripts


@dataclass(frozen=True)
class Shell:
    """The model asks to run ``command`` in the agent's working directory."""

    command: str


@dataclass(frozen=True)
class Say:
    """The model's final answer: the conversation ends."""

    text: str


Step = Shell | Say


class Script:
    """An ordered list of steps; a conversation's ``n``-th model turn gets step ``n``.

    Past the end, every turn gets :attr:`final` (``Say("Done.")`` by default), so an agent that
    keeps going after the last scripted step still finishes.

    The JSON form is a list of one-key objects: ``[{"shell": "ls"}, {"say": "Done."}]``.
    """

    def __init__(self, steps: Iterable[Step] = (), *, final: Say | None = None) -> None:
        self.steps: tuple[Step, ...] = tuple(steps)
        for step in self.steps:
            if not isinstance(step, Shell | Say):
                raise TypeError(f"a script step must be Shell or Say, not {step!r}")
        self.final = final or Say("Done.")

    def step(self, index: int) -> Step:
        """The step for a model turn that follows ``index`` tool results."""
        if 0 <= index < len(self.steps):
            return self.steps[index]
        return self.final

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self) -> Iterator[Step]:
        return iter(self.steps)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Script):
            return NotImplemented
        return self.steps == other.steps and self.final == other.final

    def __hash__(self) -> int:
        return hash((self.steps, self.final))

    def __repr__(self) -> str:
        return f"Script({list(self.steps)!r})"

    @classmethod
    def from_json(cls, data: Sequence[Mapping[str, str]] | str) -> Script:
        """A script from its JSON form (the parsed list, or the JSON text)."""
        if isinstance(data, str):
            data = json.loads(data)
        if not isinstance(data, list | tuple):
            raise ValueError("a script is a JSON list of {'shell': ...} or {'say': ...} objects")
        steps: list[Step] = []
        for number, item in enumerate(data, 1):
            if not isinstance(item, Mapping) or len(item) != 1:
                raise ValueError(f"step {number}: expected one key, 'shell' or 'say': {item!r}")
            ((kind, value),) = item.items()
            if not isinstance(value, str):
                raise ValueError(f"step {number}: {kind!r} needs a string, got {value!r}")
            if kind == "shell":
                steps.append(Shell(value))
            elif kind == "say":
                steps.append(Say(value))
            else:
                raise ValueError(f"step {number}: unknown kind {kind!r} (use 'shell' or 'say')")
        return cls(steps)

    def to_json(self) -> list[dict[str, str]]:
        """The JSON form: a list of ``{"shell": command}`` / ``{"say": text}`` objects."""
        return [
            {"shell": step.command} if isinstance(step, Shell) else {"say": step.text}
            for step in self.steps
        ]

    @classmethod
    def load(cls, path: str | Path) -> Script:
        """A script from a JSON file."""
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))


# --------------------------------------------------------------------------------------------
# Recording


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received.

    ``protocol`` is ``"anthropic"``, ``"responses"``, ``"chat"``, ``"gemini"`` or ``"other"``;
    ``step`` is the script index served, or ``None`` for side requests that did not use the
    script (titles, quota checks, token counts, HEAD probes).
    """

    method: str
    path: str
    body: Any
    query: dict[str, list[str]] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    protocol: str = "other"
    step: int | None = None
    stream: bool = False


# --------------------------------------------------------------------------------------------
# Helpers shared by the protocols

_ids = itertools.count(1)


def _new_id(prefix: str) -> str:
    return f"{prefix}{next(_ids):06d}{int(time.time() * 1000) % 10**8:08d}"


def _properties(schema: Any) -> dict[str, Any]:
    if isinstance(schema, Mapping):
        props = schema.get("properties")
        if isinstance(props, Mapping):
            return dict(props)
    return {}


def _pick_shell_tool(tools: Sequence[tuple[str, Any]]) -> tuple[str, Any] | None:
    """The offered tool to run a shell command with: ``(name, parameter schema)``."""
    by_name = dict(tools)
    for name in _SHELL_TOOL_NAMES:
        if name in by_name:
            return name, by_name[name]
    for name, schema in tools:
        lowered = name.lower()
        if ("bash" in lowered or "shell" in lowered) and (
            {"command", "cmd"} & _properties(schema).keys()
        ):
            return name, schema
    return None


def _shell_arguments(name: str, schema: Any, command: str) -> dict[str, Any]:
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
            arguments[other] = _sample_from_schema(props.get(other))
    return arguments


def _sample_from_schema(schema: Any) -> Any:
    """A small value that satisfies a JSON schema, for side requests asking for JSON.

    Enumerations prefer the choice that ends a turn or picks the cheap model (Gemini CLI's
    next-speaker check and router).
    """
    if not isinstance(schema, Mapping):
        return AUXILIARY_TEXT
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return _sample_from_schema(schema[key][0])
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
        return {name: _sample_from_schema(sub) for name, sub in _properties(schema).items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        # Scores and counts are often constrained to start at 1 (Gemini CLI's router).
        minimum = schema.get("minimum")
        return minimum if isinstance(minimum, int | float) else 1
    if kind == "boolean":
        return False
    return AUXILIARY_TEXT


def _is_mswea(body: Any) -> bool:
    """Whether the request comes from mini-swe-agent (its prompt names the submit command)."""
    return MSWEA_SUBMIT in json.dumps(body)


def _mswea_submit_command(text: str) -> str:
    return f"echo {MSWEA_SUBMIT} && printf '%s\\n' {shlex.quote(text)}"


def _action(script: Script, step: int, body: Any) -> Step:
    """The script's step, with ``Say`` turned into mini-swe-agent's submit command for it."""
    action = script.step(step)
    if isinstance(action, Say) and _is_mswea(body):
        return Shell(_mswea_submit_command(action.text))
    return action


def _sse(events: Iterable[tuple[str | None, Any]]) -> bytes:
    """Server-sent events: ``(event name or None, JSON data)`` pairs."""
    chunks = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data)
        chunks.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
    return "".join(chunks).encode()


@dataclass
class _Reply:
    status: int
    body: bytes
    content_type: str = "application/json"
    protocol: str = "other"
    step: int | None = None
    stream: bool = False


def _json_reply(data: Any, *, status: int = 200, **kwargs: Any) -> _Reply:
    return _Reply(status, json.dumps(data).encode(), **kwargs)


def _sse_reply(body: bytes, **kwargs: Any) -> _Reply:
    return _Reply(200, body, content_type="text/event-stream", stream=True, **kwargs)


# --------------------------------------------------------------------------------------------
# Anthropic Messages


def _anthropic_count(body: Mapping[str, Any]) -> int:
    count = 0
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, list):
            count += sum(
                1 for b in content if isinstance(b, Mapping) and b.get("type") == "tool_result"
            )
    return count


def _anthropic_tools(body: Mapping[str, Any]) -> list[tuple[str, Any]]:
    return [
        (tool["name"], tool.get("input_schema"))
        for tool in body.get("tools") or ()
        if isinstance(tool, Mapping) and isinstance(tool.get("name"), str)
    ]


def _anthropic_structured_schema(body: Mapping[str, Any]) -> Any:
    """The JSON schema a side request wants its answer in (Claude Code's title), if any."""
    config = body.get("output_config")
    for holder in (
        body.get("output_format"),
        config.get("format") if isinstance(config, Mapping) else None,
    ):
        if isinstance(holder, Mapping) and isinstance(holder.get("schema"), Mapping):
            return holder["schema"]
    return None


def _anthropic(script: Script, body: Mapping[str, Any]) -> _Reply:
    model = str(body.get("model") or "claude-scripted")
    tools = _anthropic_tools(body)
    shell_tool = _pick_shell_tool(tools)
    step: int | None = None
    blocks: list[dict[str, Any]]
    if shell_tool is None:
        schema = _anthropic_structured_schema(body)
        text = json.dumps(_sample_from_schema(schema)) if schema else AUXILIARY_TEXT
        blocks = [{"type": "text", "text": text}]
    else:
        step = _anthropic_count(body)
        action = _action(script, step, body)
        if isinstance(action, Shell):
            name, schema = shell_tool
            blocks = [
                {
                    "type": "tool_use",
                    "id": _new_id("toolu_"),
                    "name": name,
                    "input": _shell_arguments(name, schema, action.command),
                }
            ]
        else:
            blocks = [{"type": "text", "text": action.text}]
    stop_reason = "tool_use" if blocks[-1]["type"] == "tool_use" else "end_turn"
    usage = {
        "input_tokens": INPUT_TOKENS,
        "output_tokens": OUTPUT_TOKENS,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    message = {
        "id": _new_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }
    if not body.get("stream"):
        return _json_reply(message, protocol="anthropic", step=step)
    events: list[tuple[str | None, Any]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    **message,
                    "content": [],
                    "stop_reason": None,
                    "usage": {**usage, "output_tokens": 1},
                },
            },
        ),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(blocks):
        if block["type"] == "tool_use":
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        events += [
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            ),
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": usage,
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return _sse_reply(_sse(events), protocol="anthropic", step=step)


# --------------------------------------------------------------------------------------------
# OpenAI Responses


def _responses_count(body: Mapping[str, Any]) -> int:
    items = body.get("input")
    if not isinstance(items, list):
        return 0
    return sum(
        1
        for item in items
        # function_call_output, custom_tool_call_output, local_shell_call_output, ...
        if isinstance(item, Mapping) and str(item.get("type", "")).endswith("_output")
    )


def _responses_tools(body: Mapping[str, Any]) -> list[tuple[str, Any]]:
    tools = []
    for tool in body.get("tools") or ():
        if not isinstance(tool, Mapping):
            continue
        if tool.get("type") == "function":
            # Responses tools are flat; tolerate the Chat Completions nesting too.
            nested = tool.get("function")
            inner: Mapping[str, Any] = nested if isinstance(nested, Mapping) else tool
            if isinstance(inner.get("name"), str):
                tools.append((inner["name"], inner.get("parameters")))
    return tools


def _responses(script: Script, body: Mapping[str, Any]) -> _Reply:
    model = str(body.get("model") or "gpt-scripted")
    tools = _responses_tools(body)
    shell_tool = _pick_shell_tool(tools)
    step: int | None = None
    item: dict[str, Any]
    text: str | None = None
    if shell_tool is None:
        text_options = body.get("text")
        text_format = text_options.get("format") if isinstance(text_options, Mapping) else None
        if isinstance(text_format, Mapping) and isinstance(text_format.get("schema"), Mapping):
            text = json.dumps(_sample_from_schema(text_format["schema"]))
        else:
            text = AUXILIARY_TEXT
    else:
        step = _responses_count(body)
        action = _action(script, step, body)
        if isinstance(action, Shell):
            name, schema = shell_tool
            item = {
                "type": "function_call",
                "id": _new_id("fc_"),
                "call_id": _new_id("call_"),
                "name": name,
                "arguments": json.dumps(_shell_arguments(name, schema, action.command)),
                "status": "completed",
            }
        else:
            text = action.text
    if text is not None:
        item = {
            "type": "message",
            "id": _new_id("msg_"),
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
    usage = {
        "input_tokens": INPUT_TOKENS,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": OUTPUT_TOKENS,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": INPUT_TOKENS + OUTPUT_TOKENS,
    }
    response_id = _new_id("resp_")
    created = int(time.time())
    base = {
        "id": response_id,
        "object": "response",
        "created_at": created,
        "model": model,
        "status": "in_progress",
        "output": [],
        "usage": None,
    }
    completed = {**base, "status": "completed", "output": [item], "usage": usage}
    if not body.get("stream"):
        return _json_reply(completed, protocol="responses", step=step)
    seq = itertools.count()
    events: list[tuple[str | None, Any]] = [
        (
            "response.created",
            {"type": "response.created", "sequence_number": next(seq), "response": base},
        ),
        (
            "response.in_progress",
            {"type": "response.in_progress", "sequence_number": next(seq), "response": base},
        ),
    ]
    if item["type"] == "message":
        added = {**item, "status": "in_progress", "content": []}
        part = item["content"][0]
        events += [
            (
                "response.output_item.added",
                {
                    "type": "response.output_item.added",
                    "sequence_number": next(seq),
                    "output_index": 0,
                    "item": added,
                },
            ),
            (
                "response.content_part.added",
                {
                    "type": "response.content_part.added",
                    "sequence_number": next(seq),
                    "item_id": item["id"],
                    "output_index": 0,
                    "content_index": 0,
                    "part": {**part, "text": ""},
                },
            ),
            (
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "sequence_number": next(seq),
                    "item_id": item["id"],
                    "output_index": 0,
                    "content_index": 0,
                    "delta": part["text"],
                },
            ),
            (
                "response.output_text.done",
                {
                    "type": "response.output_text.done",
                    "sequence_number": next(seq),
                    "item_id": item["id"],
                    "output_index": 0,
                    "content_index": 0,
                    "text": part["text"],
                },
            ),
            (
                "response.content_part.done",
                {
                    "type": "response.content_part.done",
                    "sequence_number": next(seq),
                    "item_id": item["id"],
                    "output_index": 0,
                    "content_index": 0,
                    "part": part,
                },
            ),
        ]
    else:
        added = {**item, "status": "in_progress", "arguments": ""}
        events += [
            (
                "response.output_item.added",
                {
                    "type": "response.output_item.added",
                    "sequence_number": next(seq),
                    "output_index": 0,
                    "item": added,
                },
            ),
            (
                "response.function_call_arguments.delta",
                {
                    "type": "response.function_call_arguments.delta",
                    "sequence_number": next(seq),
                    "item_id": item["id"],
                    "output_index": 0,
                    "delta": item["arguments"],
                },
            ),
            (
                "response.function_call_arguments.done",
                {
                    "type": "response.function_call_arguments.done",
                    "sequence_number": next(seq),
                    "item_id": item["id"],
                    "output_index": 0,
                    "arguments": item["arguments"],
                },
            ),
        ]
    events += [
        (
            "response.output_item.done",
            {
                "type": "response.output_item.done",
                "sequence_number": next(seq),
                "output_index": 0,
                "item": item,
            },
        ),
        (
            "response.completed",
            {"type": "response.completed", "sequence_number": next(seq), "response": completed},
        ),
    ]
    return _sse_reply(_sse(events), protocol="responses", step=step)


# --------------------------------------------------------------------------------------------
# OpenAI Chat Completions


def _chat_tools(body: Mapping[str, Any]) -> list[tuple[str, Any]]:
    tools = []
    for tool in body.get("tools") or ():
        if isinstance(tool, Mapping) and isinstance(tool.get("function"), Mapping):
            function = tool["function"]
            if isinstance(function.get("name"), str):
                tools.append((function["name"], function.get("parameters")))
    return tools


def _chat(script: Script, body: Mapping[str, Any]) -> _Reply:
    model = str(body.get("model") or "gpt-scripted")
    messages = [m for m in body.get("messages") or () if isinstance(m, Mapping)]
    tools = _chat_tools(body)
    shell_tool = _pick_shell_tool(tools)
    mswea = _is_mswea(body)
    content: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    if shell_tool is not None:
        step = sum(1 for m in messages if m.get("role") == "tool")
    else:
        # Text actions: every earlier assistant turn was one step (its output came back as a
        # user message).
        step = sum(1 for m in messages if m.get("role") == "assistant")
    action = _action(script, step, body)
    if isinstance(action, Say):
        content = action.text
    elif shell_tool is not None:
        name, schema = shell_tool
        tool_calls = [
            {
                "id": _new_id("call_"),
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": json.dumps(_shell_arguments(name, schema, action.command)),
                },
            }
        ]
    else:
        fence = "mswea_bash_command" if mswea else "bash"
        content = f"THOUGHT: Running the scripted command.\n\n```{fence}\n{action.command}\n```"
    finish_reason = "tool_calls" if tool_calls else "stop"
    usage = {
        "prompt_tokens": INPUT_TOKENS,
        "completion_tokens": OUTPUT_TOKENS,
        "total_tokens": INPUT_TOKENS + OUTPUT_TOKENS,
    }
    completion_id = _new_id("chatcmpl-")
    created = int(time.time())
    if not body.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = tool_calls
        return _json_reply(
            {
                "id": completion_id,
                "object": "chat.completion",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
                "usage": usage,
            },
            protocol="chat",
            step=step,
        )

    def chunk(delta: dict[str, Any], finish: str | None, **extra: Any) -> dict[str, Any]:
        return {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra,
        }

    chunks = [chunk({"role": "assistant", "content": ""}, None)]
    if content is not None:
        chunks.append(chunk({"content": content}, None))
    for index, call in enumerate(tool_calls or ()):
        chunks.append(chunk({"tool_calls": [{"index": index, **call}]}, None))
    chunks.append(chunk({}, finish_reason))
    options = body.get("stream_options")
    if isinstance(options, Mapping) and options.get("include_usage"):
        chunks.append({**chunk({}, None), "choices": [], "usage": usage})
    else:
        chunks[-1]["usage"] = usage
    events: list[tuple[str | None, Any]] = [(None, c) for c in chunks]
    events.append((None, "[DONE]"))
    return _sse_reply(_sse(events), protocol="chat", step=step)


# --------------------------------------------------------------------------------------------
# Gemini


def _gemini_count(body: Mapping[str, Any]) -> int:
    count = 0
    for content in body.get("contents") or ():
        if isinstance(content, Mapping):
            count += sum(
                1
                for part in content.get("parts") or ()
                if isinstance(part, Mapping) and "functionResponse" in part
            )
    return count


def _gemini_tools(body: Mapping[str, Any]) -> list[tuple[str, Any]]:
    tools = []
    for tool in body.get("tools") or ():
        if not isinstance(tool, Mapping):
            continue
        for decl in tool.get("functionDeclarations") or tool.get("function_declarations") or ():
            if isinstance(decl, Mapping) and isinstance(decl.get("name"), str):
                schema = decl.get("parametersJsonSchema") or decl.get("parameters")
                tools.append((decl["name"], schema))
    return tools


def _gemini(
    script: Script, body: Mapping[str, Any], model: str, method: str, query: Mapping[str, list[str]]
) -> _Reply:
    if method == "countTokens":
        return _json_reply({"totalTokens": INPUT_TOKENS}, protocol="gemini")
    tools = _gemini_tools(body)
    shell_tool = _pick_shell_tool(tools)
    step: int | None = None
    part: dict[str, Any]
    if shell_tool is None:
        config = body.get("generationConfig") or body.get("generation_config") or {}
        schema = None
        if isinstance(config, Mapping):
            schema = config.get("responseJsonSchema") or config.get("responseSchema")
        text = json.dumps(_sample_from_schema(schema)) if schema else AUXILIARY_TEXT
        part = {"text": text}
    else:
        step = _gemini_count(body)
        action = _action(script, step, body)
        if isinstance(action, Shell):
            name, schema = shell_tool
            part = {
                "functionCall": {
                    "name": name,
                    "args": _shell_arguments(name, schema, action.command),
                }
            }
        else:
            part = {"text": action.text}
    response = {
        "candidates": [
            {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": INPUT_TOKENS,
            "candidatesTokenCount": OUTPUT_TOKENS,
            "totalTokenCount": INPUT_TOKENS + OUTPUT_TOKENS,
        },
        "modelVersion": model,
        "responseId": _new_id("resp-"),
    }
    if method == "streamGenerateContent":
        if (query.get("alt") or [""])[0] == "sse":
            return _sse_reply(_sse([(None, response)]), protocol="gemini", step=step)
        return _json_reply([response], protocol="gemini", step=step, stream=True)
    return _json_reply(response, protocol="gemini", step=step)


# --------------------------------------------------------------------------------------------
# HTTP

_GEMINI_PATH = re.compile(r"/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")


def _route(
    script: Script, method: str, path: str, query: dict[str, list[str]], body: Any
) -> _Reply:
    if method in ("HEAD", "GET"):
        if path.rstrip("/") in ("", "/v1", "/v1beta"):
            return _json_reply({"ok": True})
        if path.endswith("/models"):
            entry = {
                "id": "scripted",
                "object": "model",
                "owned_by": "bugbout",
                "name": "models/scripted",
            }
            return _json_reply({"object": "list", "data": [entry], "models": [entry]})
        return _json_reply({"error": {"message": f"no route for {method} {path}"}}, status=404)
    if method != "POST":
        return _json_reply({"error": {"message": f"method {method} not allowed"}}, status=405)
    if not isinstance(body, Mapping):
        return _json_reply(
            {"error": {"type": "invalid_request_error", "message": "expected a JSON object body"}},
            status=400,
        )
    if path.endswith("/messages/count_tokens"):
        return _json_reply({"input_tokens": INPUT_TOKENS}, protocol="anthropic")
    if path.endswith("/messages"):
        return _anthropic(script, body)
    if path.endswith("/responses"):
        return _responses(script, body)
    if path.endswith("/chat/completions"):
        return _chat(script, body)
    match = _GEMINI_PATH.search(path)
    if match:
        return _gemini(script, body, match["model"], match["method"], query)
    return _json_reply({"error": {"message": f"no route for POST {path}"}}, status=404)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            data = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                data += self.rfile.read(size)
                self.rfile.readline()
            raw = bytes(data)
        else:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        encoding = self.headers.get("Content-Encoding", "").lower()
        if encoding == "gzip":
            raw = gzip.decompress(raw)
        elif encoding == "deflate":
            raw = zlib.decompress(raw)
        return raw

    def _handle(self) -> None:
        split = urlsplit(self.path)
        query = parse_qs(split.query)
        body: Any = None
        reply: _Reply | None = None
        try:
            raw = self._read_body() if self.command not in ("GET", "HEAD") else b""
            if raw:
                body = json.loads(raw)
        except (ValueError, OSError, zlib.error) as error:
            message = f"cannot read the request body: {error!r}"
            reply = _json_reply(
                {"error": {"type": "invalid_request_error", "message": message}}, status=400
            )
        if reply is None:
            try:
                reply = _route(self.server.script, self.command, split.path, query, body)
            except Exception as error:  # a bug here must reach the test, not hang the agent
                reply = _json_reply(
                    {"error": {"type": "api_error", "message": repr(error)}}, status=500
                )
        self.server.owner._record(
            RecordedRequest(
                method=self.command,
                path=split.path,
                body=body,
                query=query,
                headers={k.lower(): v for k, v in self.headers.items()},
                protocol=reply.protocol,
                step=reply.step,
                stream=reply.stream,
            )
        )
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        if reply.stream:
            self.send_header("Cache-Control", "no-cache")
        if reply.protocol == "anthropic":
            self.send_header("request-id", _new_id("req_"))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(reply.body)
            self.wfile.flush()

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = _handle


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], owner: ModelServer) -> None:
        self.owner = owner
        super().__init__(address, _Handler)

    @property
    def script(self) -> Script:
        return self.owner.script


class ModelServer:
    """Serves a :class:`Script` on ``host:port`` (0: any free port) from a background thread.

    Use as a context manager, or call :meth:`start` and :meth:`stop`. ``url`` has no trailing
    slash; the OpenAI-style base URL is ``url + "/v1"``.
    """

    def __init__(
        self, script: Script | Iterable[Step], *, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.script = script if isinstance(script, Script) else Script(script)
        self.host = host
        self._port = port
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle -----------------------------------------------------------------------------

    def start(self) -> ModelServer:
        """Bind and serve in a daemon thread; returns self."""
        if self._httpd is not None:
            raise RuntimeError("the model server is already running")
        self._httpd = _HTTPServer((self.host, self._port), self)
        self._port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.1},
            name=f"model-server:{self._port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and free the port."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def wait(self) -> None:
        """Block until the server stops (or the caller is interrupted)."""
        while self._thread is not None and self._thread.is_alive():
            self._thread.join(timeout=0.5)

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    # addresses -----------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port (known once started)."""
        return self._port

    @property
    def url(self) -> str:
        """``http://host:port``, without a trailing slash."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self._port}"

    # recording -----------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """A copy of every request received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def scripted_requests(self) -> list[RecordedRequest]:
        """The requests that were answered from the script (side requests left out)."""
        return [r for r in self.requests if r.step is not None]

    def clear(self) -> None:
        """Forget the recorded requests."""
        with self._lock:
            self._requests.clear()

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)


# --------------------------------------------------------------------------------------------
# Command line


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bugbout.testing.model_server --script FILE.json [--host H] [--port N]``."""
    parser = argparse.ArgumentParser(
        prog="python -m bugbout.testing.model_server",
        description="Serve a scripted model over the Anthropic, OpenAI and Gemini HTTP APIs.",
    )
    parser.add_argument(
        "--script",
        required=True,
        type=Path,
        help='JSON list of steps: [{"shell": "cmd"}, {"say": "text"}]',
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    args = parser.parse_args(argv)
    try:
        script = Script.load(args.script)
    except (OSError, ValueError) as error:
        parser.error(f"cannot load {args.script}: {error}")
    server = ModelServer(script, host=args.host, port=args.port).start()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stop cleanly when killed
    print(server.url, flush=True)
    try:
        server.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
