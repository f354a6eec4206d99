"""Raw HTTP requests to the scripted model server, the script it serves in its tests
(the ``server`` fixture, in conftest.py) and an Anthropic request body."""

from __future__ import annotations

import http.client
import json
from typing import Any

from bugbout.testing.model_server import ModelServer, Say, Script, Shell

SCRIPT = Script([Shell("ls"), Shell("echo fixed > proof.txt"), Say("Fixed.")])


def request(
    server: ModelServer, method: str, path: str, body: Any = None
) -> tuple[int, str, bytes]:
    """Send one request; return the status, content type and raw body."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        payload = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if payload is not None else {}
        connection.request(method, path, body=payload, headers=headers)
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type", ""), response.read()
    finally:
        connection.close()


def post(server: ModelServer, path: str, body: Any) -> Any:
    """POST JSON and return the parsed JSON answer (which must be 200)."""
    status, kind, raw = request(server, "POST", path, body)
    assert status == 200, raw
    assert kind == "application/json"
    return json.loads(raw)


def post_sse(server: ModelServer, path: str, body: Any) -> list[tuple[str | None, Any]]:
    """POST JSON and return the server-sent events as ``(event name, parsed data)`` pairs."""
    status, kind, raw = request(server, "POST", path, body)
    assert status == 200, raw
    assert kind == "text/event-stream"
    events: list[tuple[str | None, Any]] = []
    for block in raw.decode().split("\n\n"):
        if not block.strip():
            continue
        name, data = None, None
        for line in block.splitlines():
            if line.startswith("event: "):
                name = line.removeprefix("event: ")
            elif line.startswith("data: "):
                text = line.removeprefix("data: ")
                data = text if text == "[DONE]" else json.loads(text)
        events.append((name, data))
    return events


BASH_TOOL = {
    "name": "Bash",
    "description": "Run a command",
    "input_schema": {
        "type": "object",
        "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}},
        "required": ["command"],
    },
}
READ_TOOL = {"name": "Read", "input_schema": {"type": "object", "properties": {}}}


def anthropic_body(n_results: int, *, tools: list[Any], stream: bool = False) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Fix the bug."}]
    for number in range(n_results):
        messages.append(
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": f"t{number}", "name": "Bash", "input": {}}],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"t{number}", "content": ""}],
            }
        )
    return {
        "model": "claude-x",
        "max_tokens": 100,
        "messages": messages,
        "tools": tools,
        "stream": stream,
    }
