"""OpenAI Responses (``POST /v1/responses``): Codex's protocol."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Mapping
from typing import Any

from bugbout.testing.model_server.replies import (
    AUXILIARY_TEXT,
    INPUT_TOKENS,
    OUTPUT_TOKENS,
    Reply,
    json_reply,
    new_id,
    sse_reply,
)
from bugbout.testing.model_server.script import Script, Shell, scripted_action
from bugbout.testing.model_server.tools import pick_shell_tool, sample_from_schema, shell_arguments


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


def reply(script: Script, body: Mapping[str, Any]) -> Reply:
    """The answer to a Responses request: a ``function_call`` item for a ``Shell`` step, a
    message for ``Say`` or a side request; streamed as server-sent events when asked."""
    model = str(body.get("model") or "gpt-scripted")
    tools = _responses_tools(body)
    shell_tool = pick_shell_tool(tools)
    step: int | None = None
    item: dict[str, Any]
    text: str | None = None
    if shell_tool is None:
        text_options = body.get("text")
        text_format = text_options.get("format") if isinstance(text_options, Mapping) else None
        if isinstance(text_format, Mapping) and isinstance(text_format.get("schema"), Mapping):
            text = json.dumps(sample_from_schema(text_format["schema"]))
        else:
            text = AUXILIARY_TEXT
    else:
        step = _responses_count(body)
        action = scripted_action(script, step, body)
        if isinstance(action, Shell):
            name, schema = shell_tool
            item = {
                "type": "function_call",
                "id": new_id("fc_"),
                "call_id": new_id("call_"),
                "name": name,
                "arguments": json.dumps(shell_arguments(name, schema, action.command)),
                "status": "completed",
            }
        else:
            text = action.text
    if text is not None:
        item = {
            "type": "message",
            "id": new_id("msg_"),
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
    response_id = new_id("resp_")
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
        return json_reply(completed, protocol="responses", step=step)
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
    return sse_reply(events, protocol="responses", step=step)
