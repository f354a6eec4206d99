"""The scripted model server speaking Gemini's generateContent API over raw HTTP."""

from __future__ import annotations

import json
from typing import Any

from bugbout.testing.model_server import INPUT_TOKENS, OUTPUT_TOKENS, ModelServer
from model_requests import post, post_sse

GEMINI_TOOLS = [
    {
        "functionDeclarations": [
            {"name": "read_file", "parametersJsonSchema": {"type": "object"}},
            {
                "name": "run_shell_command",
                "parametersJsonSchema": {
                    "type": "object",
                    "properties": {"command": {"type": "string"}, "dir_path": {"type": "string"}},
                    "required": ["command"],
                },
            },
        ]
    }
]


def gemini_body(n_results: int, *, tools: list[Any] | None = GEMINI_TOOLS) -> dict[str, Any]:
    contents: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": "Fix the bug."}]}]
    for _ in range(n_results):
        call = {"functionCall": {"name": "run_shell_command", "args": {}}}
        contents.append({"role": "model", "parts": [call]})
        result = {"functionResponse": {"name": "run_shell_command", "response": {}}}
        contents.append({"role": "user", "parts": [result]})
    body: dict[str, Any] = {"contents": contents}
    if tools is not None:
        body["tools"] = tools
    return body


def test_gemini_generate_content(server: ModelServer) -> None:
    answer = post(server, "/v1beta/models/gemini-x:generateContent", gemini_body(1))
    [candidate] = answer["candidates"]
    assert candidate["finishReason"] == "STOP"
    [part] = candidate["content"]["parts"]
    assert part["functionCall"] == {
        "name": "run_shell_command",
        "args": {"command": "echo fixed > proof.txt"},
    }
    assert answer["usageMetadata"]["promptTokenCount"] == INPUT_TOKENS
    assert answer["usageMetadata"]["candidatesTokenCount"] == OUTPUT_TOKENS


def test_gemini_streams_server_sent_events(server: ModelServer) -> None:
    path = "/v1beta/models/gemini-x:streamGenerateContent?alt=sse"
    [(name, data)] = post_sse(server, path, gemini_body(0))
    assert name is None
    assert data["candidates"][0]["content"]["parts"][0]["functionCall"]["args"] == {"command": "ls"}
    [(_, final)] = post_sse(server, path, gemini_body(2))
    assert final["candidates"][0]["content"] == {"role": "model", "parts": [{"text": "Fixed."}]}
    # Without alt=sse the stream is one JSON array.
    array = post(server, "/v1beta/models/gemini-x:streamGenerateContent", gemini_body(2))
    assert array[0]["candidates"][0]["content"]["parts"] == [{"text": "Fixed."}]
    assert [r.step for r in server.requests] == [0, 2, 2]


def test_gemini_side_requests(server: ModelServer) -> None:
    counted = post(server, "/v1beta/models/gemini-x:countTokens", gemini_body(0))
    assert counted == {"totalTokens": INPUT_TOKENS}
    router = gemini_body(0, tools=None)
    router["generationConfig"] = {
        "responseMimeType": "application/json",
        "responseJsonSchema": {
            "type": "OBJECT",
            "properties": {
                "reasoning": {"type": "STRING"},
                "model_choice": {"type": "STRING", "enum": ["pro", "flash"]},
                "next_speaker": {"type": "string", "enum": ["model", "user"]},
                "complexity_score": {"type": "INTEGER"},
            },
        },
    }
    answer = post(server, "/v1beta/models/gemini-lite:generateContent", router)
    choice = json.loads(answer["candidates"][0]["content"]["parts"][0]["text"])
    assert choice == {
        "reasoning": "OK",
        "model_choice": "flash",
        "next_speaker": "user",
        "complexity_score": 1,
    }
    assert [r.step for r in server.requests] == [None, None]
    assert [r.protocol for r in server.requests] == ["gemini", "gemini"]
