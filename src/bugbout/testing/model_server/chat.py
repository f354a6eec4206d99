"""OpenAI Chat Completions (``POST /v1/chat/completions``): tool calls, or mini-swe-agent's
text actions when no tool is offered."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from bugbout.testing.model_server.replies import (
    INPUT_TOKENS,
    OUTPUT_TOKENS,
    Reply,
    json_reply,
    new_id,
    sse_reply,
)
from bugbout.testing.model_server.script import Say, Script, is_mswea, scripted_action
from bugbout.testing.model_server.tools import pick_shell_tool, shell_arguments


def _chat_tools(body: Mapping[str, Any]) -> list[tuple[str, Any]]:
    tools = []
    for tool in body.get("tools") or ():
        if isinstance(tool, Mapping) and isinstance(tool.get("function"), Mapping):
            function = tool["function"]
            if isinstance(function.get("name"), str):
                tools.append((function["name"], function.get("parameters")))
    return tools


def reply(script: Script, body: Mapping[str, Any]) -> Reply:
    """The answer to a Chat Completions request: a tool call for a ``Shell`` step (a fenced
    command when no tool is offered), text for ``Say``; streamed as chunks when asked."""
    model = str(body.get("model") or "gpt-scripted")
    messages = [m for m in body.get("messages") or () if isinstance(m, Mapping)]
    tools = _chat_tools(body)
    shell_tool = pick_shell_tool(tools)
    mswea = is_mswea(body)
    content: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    if shell_tool is not None:
        step = sum(1 for m in messages if m.get("role") == "tool")
    else:
        # Text actions: every earlier assistant turn was one step (its output came back as a
        # user message).
        step = sum(1 for m in messages if m.get("role") == "assistant")
    action = scripted_action(script, step, body)
    if isinstance(action, Say):
        content = action.text
    elif shell_tool is not None:
        name, schema = shell_tool
        tool_calls = [
            {
                "id": new_id("call_"),
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": json.dumps(shell_arguments(name, schema, action.command)),
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
    completion_id = new_id("chatcmpl-")
    created = int(time.time())
    if not body.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = tool_calls
        return json_reply(
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
    return sse_reply(events, protocol="chat", step=step)
