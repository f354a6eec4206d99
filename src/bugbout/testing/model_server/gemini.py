"""Gemini (``POST /v1beta/models/<model>:generateContent``, ``:streamGenerateContent``,
``:countTokens``): Gemini CLI's protocol."""

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


def reply(
    script: Script, body: Mapping[str, Any], model: str, method: str, query: Mapping[str, list[str]]
) -> Reply:
    """The answer to a Gemini ``method`` request: a ``functionCall`` part for a ``Shell`` step,
    text for ``Say`` or a side request; a token count for ``countTokens``."""
    if method == "countTokens":
        return json_reply({"totalTokens": INPUT_TOKENS}, protocol="gemini")
    tools = _gemini_tools(body)
    shell_tool = pick_shell_tool(tools)
    step: int | None = None
    part: dict[str, Any]
    if shell_tool is None:
        config = body.get("generationConfig") or body.get("generation_config") or {}
        schema = None
        if isinstance(config, Mapping):
            schema = config.get("responseJsonSchema") or config.get("responseSchema")
        text = json.dumps(sample_from_schema(schema)) if schema else AUXILIARY_TEXT
        part = {"text": text}
    else:
        step = _gemini_count(body)
        action = scripted_action(script, step, body)
        if isinstance(action, Shell):
            name, schema = shell_tool
            part = {
                "functionCall": {
                    "name": name,
                    "args": shell_arguments(name, schema, action.command),
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
        "responseId": new_id("resp-"),
    }
    if method == "streamGenerateContent":
        if (query.get("alt") or [""])[0] == "sse":
            return sse_reply([(None, response)], protocol="gemini", step=step)
        return json_reply([response], protocol="gemini", step=step, stream=True)
    return json_reply(response, protocol="gemini", step=step)
