"""The scripted model server speaking OpenAI's Responses and Chat Completions APIs (and
mini-swe-agent's text actions) over raw HTTP."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from bugbout.testing.model_server import INPUT_TOKENS, MSWEA_SUBMIT, OUTPUT_TOKENS, ModelServer
from model_requests import post, post_sse

# --------------------------------------------------------------------------------------------
# OpenAI Responses

EXEC_COMMAND = {
    "type": "function",
    "name": "exec_command",
    "parameters": {
        "type": "object",
        "properties": {"cmd": {"type": "string"}, "login": {"type": "boolean"}},
        "required": ["cmd"],
    },
}
SHELL_ARRAY = {
    "type": "function",
    "name": "shell",
    "parameters": {
        "type": "object",
        "properties": {"command": {"type": "array", "items": {"type": "string"}}},
        "required": ["command"],
    },
}


def responses_body(n_results: int, *, tools: list[Any], stream: bool = False) -> dict[str, Any]:
    items: list[dict[str, Any]] = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix."}]}
    ]
    for number in range(n_results):
        items.append(
            {"type": "function_call", "call_id": f"c{number}", "name": "x", "arguments": "{}"}
        )
        items.append({"type": "function_call_output", "call_id": f"c{number}", "output": ""})
    return {"model": "gpt-x", "input": items, "tools": tools, "stream": stream}


def test_responses_exec_command_for_codex(server: ModelServer) -> None:
    answer = post(server, "/v1/responses", responses_body(1, tools=[EXEC_COMMAND]))
    assert answer["status"] == "completed"
    [item] = answer["output"]
    assert item["type"] == "function_call"
    assert item["name"] == "exec_command"
    assert json.loads(item["arguments"]) == {"cmd": "echo fixed > proof.txt", "login": False}
    assert item["call_id"]
    assert answer["usage"]["input_tokens"] == INPUT_TOKENS
    assert answer["usage"]["output_tokens"] == OUTPUT_TOKENS
    assert answer["usage"]["total_tokens"] == INPUT_TOKENS + OUTPUT_TOKENS


def test_responses_shell_with_an_argv_list(server: ModelServer) -> None:
    answer = post(server, "/v1/responses", responses_body(0, tools=[SHELL_ARRAY]))
    assert json.loads(answer["output"][0]["arguments"]) == {"command": ["bash", "-lc", "ls"]}


def test_responses_streams_and_finishes_with_a_message(server: ModelServer) -> None:
    events = post_sse(server, "/v1/responses", responses_body(0, tools=[EXEC_COMMAND], stream=True))
    names = [name for name, _ in events]
    assert names[0] == "response.created"
    assert names[-1] == "response.completed"
    assert "response.output_item.added" in names
    done = [data for name, data in events if name == "response.output_item.done"]
    assert [d["item"]["type"] for d in done] == ["function_call"]
    assert json.loads(done[0]["item"]["arguments"])["cmd"] == "ls"
    assert events[-1][1]["response"]["usage"]["output_tokens"] == OUTPUT_TOKENS
    assert all(data["type"] == name for name, data in events)

    events = post_sse(server, "/v1/responses", responses_body(2, tools=[EXEC_COMMAND], stream=True))
    done = [data for name, data in events if name == "response.output_item.done"]
    [item] = [d["item"] for d in done]
    assert item["type"] == "message"
    assert item["role"] == "assistant"
    assert item["content"][0] == {"type": "output_text", "text": "Fixed.", "annotations": []}
    completed = events[-1][1]["response"]
    assert completed["status"] == "completed"
    assert completed["output"] == [item]
    assert [r.step for r in server.requests] == [0, 2]


def test_responses_without_tools_is_a_side_request(server: ModelServer) -> None:
    answer = post(server, "/v1/responses", responses_body(1, tools=[]))
    assert answer["output"][0]["type"] == "message"
    assert server.requests[-1].step is None


# --------------------------------------------------------------------------------------------
# OpenAI Chat Completions

CHAT_BASH = {
    "type": "function",
    "function": {
        "name": "bash",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    },
}
MSWEA_SYSTEM = f"Finish with: `echo {MSWEA_SUBMIT}`."


def chat_body(
    n_results: int, *, tools: list[Any] | None, system: str = "You help.", stream: bool = False
) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": "Fix the bug."},
    ]
    for number in range(n_results):
        if tools:
            call = {"id": f"c{number}", "type": "function", "function": {"name": "bash"}}
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            messages.append({"role": "tool", "tool_call_id": f"c{number}", "content": "ok"})
        else:
            messages.append({"role": "assistant", "content": "```bash\nls\n```"})
            messages.append({"role": "user", "content": "<output>ok</output>"})
    body: dict[str, Any] = {"model": "x", "messages": messages, "stream": stream}
    if tools is not None:
        body["tools"] = tools
    return body


def test_chat_tool_calls(server: ModelServer) -> None:
    answer = post(server, "/v1/chat/completions", chat_body(1, tools=[CHAT_BASH]))
    [choice] = answer["choices"]
    assert choice["finish_reason"] == "tool_calls"
    [call] = choice["message"]["tool_calls"]
    assert call["type"] == "function"
    assert call["function"]["name"] == "bash"
    assert json.loads(call["function"]["arguments"]) == {"command": "echo fixed > proof.txt"}
    assert answer["usage"] == {
        "prompt_tokens": INPUT_TOKENS,
        "completion_tokens": OUTPUT_TOKENS,
        "total_tokens": INPUT_TOKENS + OUTPUT_TOKENS,
    }
    final = post(server, "/v1/chat/completions", chat_body(2, tools=[CHAT_BASH]))
    assert final["choices"][0]["message"]["content"] == "Fixed."
    assert final["choices"][0]["finish_reason"] == "stop"


def test_chat_text_actions_without_tools(server: ModelServer) -> None:
    answer = post(server, "/v1/chat/completions", chat_body(1, tools=None))
    content = answer["choices"][0]["message"]["content"]
    assert "```bash\necho fixed > proof.txt\n```" in content
    assert "tool_calls" not in answer["choices"][0]["message"]
    final = post(server, "/v1/chat/completions", chat_body(2, tools=None))
    assert final["choices"][0]["message"]["content"] == "Fixed."
    assert [r.step for r in server.requests] == [1, 2]


def test_chat_speaks_mini_swe_agent(server: ModelServer) -> None:
    text = post(server, "/v1/chat/completions", chat_body(0, tools=None, system=MSWEA_SYSTEM))
    content = text["choices"][0]["message"]["content"]
    assert "```mswea_bash_command\nls\n```" in content
    # Its final answer is the submit command, so mini-swe-agent stops cleanly.
    done = post(server, "/v1/chat/completions", chat_body(2, tools=None, system=MSWEA_SYSTEM))
    submit = done["choices"][0]["message"]["content"]
    assert f"```mswea_bash_command\necho {MSWEA_SUBMIT} && " in submit
    tool = post(
        server, "/v1/chat/completions", chat_body(2, tools=[CHAT_BASH], system=MSWEA_SYSTEM)
    )
    command = json.loads(tool["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"])
    output = subprocess.run(
        command["command"], shell=True, capture_output=True, text=True, check=True
    ).stdout
    assert output == f"{MSWEA_SUBMIT}\nFixed.\n"


def test_chat_streams_chunks(server: ModelServer) -> None:
    body = chat_body(0, tools=[CHAT_BASH], stream=True)
    body["stream_options"] = {"include_usage": True}
    events = post_sse(server, "/v1/chat/completions", body)
    assert events[-1] == (None, "[DONE]")
    chunks = [data for _, data in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    calls = [
        call
        for c in chunks
        for choice in c["choices"]
        for call in choice["delta"].get("tool_calls", [])
    ]
    assert len(calls) == 1
    assert calls[0]["index"] == 0
    assert json.loads(calls[0]["function"]["arguments"]) == {"command": "ls"}
    finishes = [ch["finish_reason"] for c in chunks for ch in c["choices"] if ch["finish_reason"]]
    assert finishes == ["tool_calls"]
    assert chunks[-1]["usage"]["completion_tokens"] == OUTPUT_TOKENS

    events = post_sse(server, "/v1/chat/completions", chat_body(2, tools=None, stream=True))
    text = "".join(ch["delta"].get("content") or "" for _, c in events[:-1] for ch in c["choices"])
    assert text == "Fixed."
