"""Anthropic Messages (``POST /v1/messages``): Claude Code's protocol."""

from __future__ import annotations

import json
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


def reply(script: Script, body: Mapping[str, Any]) -> Reply:
    """The answer to a Messages request: a ``tool_use`` block for a ``Shell`` step, text for
    ``Say`` or a side request; streamed as server-sent events when asked."""
    model = str(body.get("model") or "claude-scripted")
    tools = _anthropic_tools(body)
    shell_tool = pick_shell_tool(tools)
    step: int | None = None
    blocks: list[dict[str, Any]]
    if shell_tool is None:
        schema = _anthropic_structured_schema(body)
        text = json.dumps(sample_from_schema(schema)) if schema else AUXILIARY_TEXT
        blocks = [{"type": "text", "text": text}]
    else:
        step = _anthropic_count(body)
        action = scripted_action(script, step, body)
        if isinstance(action, Shell):
            name, schema = shell_tool
            blocks = [
                {
                    "type": "tool_use",
                    "id": new_id("toolu_"),
                    "name": name,
                    "input": shell_arguments(name, schema, action.command),
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
        "id": new_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }
    if not body.get("stream"):
        return json_reply(message, protocol="anthropic", step=step)
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
    return sse_reply(events, protocol="anthropic", step=step)
