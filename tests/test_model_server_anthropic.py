"""The scripted model server speaking Anthropic's Messages API over raw HTTP."""

from __future__ import annotations

import json

from bugbout.testing.model_server import INPUT_TOKENS, OUTPUT_TOKENS, ModelServer
from model_requests import BASH_TOOL, READ_TOOL, anthropic_body, post, post_sse, request


def test_anthropic_plain_json_advances_by_tool_results(server: ModelServer) -> None:
    first = post(server, "/v1/messages", anthropic_body(0, tools=[READ_TOOL, BASH_TOOL]))
    assert first["type"] == "message"
    assert first["model"] == "claude-x"
    assert first["stop_reason"] == "tool_use"
    [block] = first["content"]
    assert block["type"] == "tool_use"
    assert block["name"] == "Bash"
    assert block["input"] == {"command": "ls"}
    assert first["usage"]["input_tokens"] == INPUT_TOKENS
    assert first["usage"]["output_tokens"] == OUTPUT_TOKENS

    second = post(server, "/v1/messages", anthropic_body(1, tools=[BASH_TOOL]))
    assert second["content"][0]["input"] == {"command": "echo fixed > proof.txt"}
    last = post(server, "/v1/messages", anthropic_body(2, tools=[BASH_TOOL]))
    assert last["stop_reason"] == "end_turn"
    assert last["content"] == [{"type": "text", "text": "Fixed."}]
    # A retry of the first request gets the first step again.
    again = post(server, "/v1/messages", anthropic_body(0, tools=[BASH_TOOL]))
    assert again["content"][0]["input"] == {"command": "ls"}
    assert [r.step for r in server.requests] == [0, 1, 2, 0]
    assert server.requests[0].body["model"] == "claude-x"


def test_anthropic_uses_the_offered_shell_tool_name(server: ModelServer) -> None:
    lower = {**BASH_TOOL, "name": "bash"}
    answer = post(server, "/v1/messages", anthropic_body(0, tools=[lower]))
    assert answer["content"][0]["name"] == "bash"


def test_anthropic_streams_server_sent_events(server: ModelServer) -> None:
    events = post_sse(
        server, "/v1/messages?beta=true", anthropic_body(1, tools=[BASH_TOOL], stream=True)
    )
    names = [name for name, _ in events]
    assert names == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    data = dict(events)
    assert data["content_block_start"]["content_block"]["type"] == "tool_use"
    assert data["content_block_start"]["content_block"]["name"] == "Bash"
    delta = data["content_block_delta"]["delta"]
    assert delta["type"] == "input_json_delta"
    assert json.loads(delta["partial_json"]) == {"command": "echo fixed > proof.txt"}
    assert data["message_delta"]["delta"]["stop_reason"] == "tool_use"
    assert data["message_delta"]["usage"]["output_tokens"] == OUTPUT_TOKENS
    recorded = server.requests[-1]
    assert recorded.path == "/v1/messages"
    assert recorded.query == {"beta": ["true"]}
    assert recorded.stream is True

    final = post_sse(server, "/v1/messages", anthropic_body(2, tools=[BASH_TOOL], stream=True))
    data = dict(final)
    assert data["content_block_delta"]["delta"] == {"type": "text_delta", "text": "Fixed."}
    assert data["message_delta"]["delta"]["stop_reason"] == "end_turn"


def test_anthropic_side_requests_do_not_advance_the_script(server: ModelServer) -> None:
    status, _, _ = request(server, "HEAD", "/")
    assert status == 200
    status, _, _ = request(server, "GET", "/")
    assert status == 200
    title = anthropic_body(3, tools=[])
    title["output_config"] = {
        "format": {
            "type": "json_schema",
            "schema": {"type": "object", "properties": {"title": {"type": "string"}}},
        }
    }
    answer = post(server, "/v1/messages", title)
    assert json.loads(answer["content"][0]["text"]) == {"title": "OK"}
    quota = post(server, "/v1/messages", {"model": "m", "max_tokens": 1, "messages": []})
    assert quota["content"][0]["type"] == "text"
    assert quota["stop_reason"] == "end_turn"
    counted = post(server, "/v1/messages/count_tokens", anthropic_body(0, tools=[BASH_TOOL]))
    assert counted == {"input_tokens": INPUT_TOKENS}
    # No shell tool among the tools (a sub-agent, say): nothing scripted either.
    post(server, "/v1/messages", anthropic_body(0, tools=[READ_TOOL]))
    assert all(r.step is None for r in server.requests)
    assert server.scripted_requests == []
    first = post(server, "/v1/messages", anthropic_body(0, tools=[BASH_TOOL]))
    assert first["content"][0]["input"] == {"command": "ls"}
