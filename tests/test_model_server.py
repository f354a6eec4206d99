"""The scripted model server: each vendor's wire format over raw HTTP, then the real CLIs."""

from __future__ import annotations

import gzip
import http.client
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import components
from bugbout.testing.model_server import (
    INPUT_TOKENS,
    MSWEA_SUBMIT,
    OUTPUT_TOKENS,
    ModelServer,
    Say,
    Script,
    Shell,
    main,
)

SCRIPT = Script([Shell("ls"), Shell("echo fixed > proof.txt"), Say("Fixed.")])


@pytest.fixture
def server() -> Any:
    with ModelServer(SCRIPT) as running:
        yield running


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


# --------------------------------------------------------------------------------------------
# Scripts


def test_script_json_round_trip_and_errors(tmp_path: Path) -> None:
    data = [{"shell": "ls -la"}, {"say": "Done here."}]
    script = Script.from_json(data)
    assert list(script) == [Shell("ls -la"), Say("Done here.")]
    assert script.to_json() == data
    assert Script.from_json(json.dumps(data)) == script
    path = tmp_path / "script.json"
    path.write_text(json.dumps(data))
    assert Script.load(path) == script
    for bad in ([{"run": "ls"}], [{"shell": 1}], [{"shell": "a", "say": "b"}], {"shell": "ls"}):
        with pytest.raises(ValueError):
            Script.from_json(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Script(["ls"])  # type: ignore[list-item]


def test_script_past_its_end_says_its_final_words() -> None:
    script = Script([Shell("ls")])
    assert script.step(0) == Shell("ls")
    assert script.step(1) == script.step(7) == Say("Done.")
    assert Script([], final=Say("Bye.")).step(0) == Say("Bye.")


# --------------------------------------------------------------------------------------------
# Anthropic Messages

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


# --------------------------------------------------------------------------------------------
# Gemini

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


# --------------------------------------------------------------------------------------------
# Server behaviour


def test_unknown_routes_and_bad_bodies(server: ModelServer) -> None:
    assert request(server, "POST", "/v1/nothing", {})[0] == 404
    assert request(server, "GET", "/v1/nothing")[0] == 404
    assert request(server, "POST", "/v1/messages", [1, 2])[0] == 400
    status, _, raw = request(server, "GET", "/v1/models")
    assert status == 200
    assert json.loads(raw)["data"][0]["id"]


def test_gzip_and_chunked_request_bodies(server: ModelServer) -> None:
    body = json.dumps(anthropic_body(1, tools=[BASH_TOOL])).encode()
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.request(
        "POST", "/v1/messages", body=gzip.compress(body), headers={"Content-Encoding": "gzip"}
    )
    answer = json.loads(connection.getresponse().read())
    assert answer["content"][0]["input"] == {"command": "echo fixed > proof.txt"}
    # The same connection again (keep-alive), with a chunked body this time.
    connection.request(
        "POST", "/v1/messages", body=iter([body[:10], body[10:]]), encode_chunked=True
    )
    answer = json.loads(connection.getresponse().read())
    assert answer["content"][0]["input"] == {"command": "echo fixed > proof.txt"}
    connection.request("POST", "/v1/messages", body=b"{not json")
    response = connection.getresponse()
    assert response.status == 400
    assert "cannot read" in json.loads(response.read())["error"]["message"]
    connection.close()
    assert [r.step for r in server.requests] == [1, 1, None]


def test_parallel_conversations_get_their_own_steps(server: ModelServer) -> None:
    answers: dict[int, list[str]] = {}

    def converse(n_results: int) -> None:
        got = []
        for _ in range(5):
            answer = post(server, "/v1/messages", anthropic_body(n_results, tools=[BASH_TOOL]))
            block = answer["content"][0]
            got.append(block["input"]["command"] if block["type"] == "tool_use" else block["text"])
        answers[n_results] = got

    threads = [threading.Thread(target=converse, args=(n,)) for n in (0, 1, 2, 3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == {
        0: ["ls"] * 5,
        1: ["echo fixed > proof.txt"] * 5,
        2: ["Fixed."] * 5,
        3: ["Done."] * 5,
    }
    assert len(server.requests) == 20
    server.clear()
    assert server.requests == []


def test_the_port_is_freed_and_a_fixed_port_is_honoured() -> None:
    with ModelServer(SCRIPT) as first:
        port = first.port
        assert first.url == f"http://127.0.0.1:{port}"
    with ModelServer(SCRIPT, port=port) as second:
        assert second.port == port
        assert request(second, "HEAD", "/")[0] == 200


def test_main_serves_a_script_file(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"shell": "pwd"}, {"say": "Bye."}]))
    process = subprocess.Popen(
        [sys.executable, "-m", "bugbout.testing.model_server", "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        connection = http.client.HTTPConnection(url.removeprefix("http://"), timeout=10)
        body = json.dumps(anthropic_body(0, tools=[BASH_TOOL]))
        connection.request("POST", "/v1/messages", body=body)
        answer = json.loads(connection.getresponse().read())
        assert answer["content"][0]["input"] == {"command": "pwd"}
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
    bad = tmp_path / "bad.json"
    bad.write_text('[{"run": "ls"}]')
    with pytest.raises(SystemExit):
        main(["--script", str(bad)])


# --------------------------------------------------------------------------------------------
# The real CLIs, end to end (installed by .ci/run)

PROOF_SCRIPT = Script([Shell("echo fixed > proof.txt"), Say("All fixed.")])
TIMEOUT = 60


def cli(name: str, hint: str = "") -> str:
    found = shutil.which(name)
    if found is None:
        components.missing("agent-clis", f"{name} is not on PATH{hint}")
    return found


def base_env(home: Path) -> dict[str, str]:
    """A clean environment: the caller's PATH, a private HOME, nothing else."""
    home.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TERM": "dumb",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def run_cli(
    command: list[str], env: dict[str, str], work: Path
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        env=env,
        cwd=work,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def assert_proved(
    result: subprocess.CompletedProcess[str], work: Path, server: ModelServer
) -> None:
    detail = f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
    assert result.returncode == 0, detail
    assert (work / "proof.txt").read_text() == "fixed\n", detail
    assert [r.step for r in server.scripted_requests][:2] == [0, 1], server.requests


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.mark.slow
def test_claude_code_end_to_end(tmp_path: Path, work: Path) -> None:
    claude = cli("claude")
    home = tmp_path / "home"
    with ModelServer(PROOF_SCRIPT) as server:
        env = {
            **base_env(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": "sk-ant-fake",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_UPDATES": "1",
            "DISABLE_GROWTHBOOK": "1",
            "IS_SANDBOX": "1",
        }
        result = run_cli(
            [
                claude, "-p", "Fix the bug.", "--bare",
                "--output-format", "stream-json", "--verbose",
                "--permission-mode", "bypassPermissions",
                "--model", "claude-sonnet-4-5", "--no-session-persistence",
            ],
            env,
            work,
        )  # fmt: skip
        assert_proved(result, work, server)
    final = json.loads(result.stdout.strip().splitlines()[-1])
    assert final["type"] == "result"
    assert final["result"] == "All fixed."
    assert final["usage"]["output_tokens"] == 2 * OUTPUT_TOKENS


@pytest.mark.slow
def test_codex_end_to_end(tmp_path: Path, work: Path) -> None:
    codex = cli("codex")
    home = tmp_path / "codex-home"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    last = tmp_path / "last.txt"
    with ModelServer(PROOF_SCRIPT) as server:
        env = {
            **base_env(home),
            "CODEX_HOME": str(home),
            "TMPDIR": str(scratch),
            "FAKE_API_KEY": "x",
        }
        provider = (
            f'{{name="fake", base_url="{server.url}/v1", wire_api="responses", '
            'env_key="FAKE_API_KEY", stream_max_retries=0, request_max_retries=0}'
        )
        result = run_cli(
            [
                codex, "exec", "--json", "-o", str(last), "--skip-git-repo-check",
                "--ephemeral", "--ignore-user-config", "--ignore-rules",
                "-s", "workspace-write", "-m", "gpt-5.5",
                "-c", "model_provider=fake", "-c", f"model_providers.fake={provider}",
                "-c", "model_reasoning_effort=low", "-c", "web_search=disabled",
                "--disable", "plugins", "--disable", "apps", "--disable", "remote_plugin",
                "-c", "analytics.enabled=false",
                "Fix the bug.",
            ],
            env,
            work,
        )  # fmt: skip
        assert_proved(result, work, server)
        assert {r.path for r in server.requests} == {"/v1/responses"}
    assert last.read_text().strip() == "All fixed."
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert events[-1]["type"] == "turn.completed"
    assert events[-1]["usage"]["output_tokens"] == 2 * OUTPUT_TOKENS


@pytest.mark.slow
def test_gemini_cli_end_to_end(tmp_path: Path, work: Path) -> None:
    gemini = cli("gemini")
    home = tmp_path / "home"
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "general": {"enableAutoUpdate": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "tools": {"exclude": ["web_fetch", "google_web_search"]},
    }
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    with ModelServer(PROOF_SCRIPT) as server:
        env = {
            **base_env(home),
            "GEMINI_CLI_HOME": str(home),
            "GOOGLE_GEMINI_BASE_URL": server.url,
            "GEMINI_API_KEY": "dummy",
            "GEMINI_TELEMETRY_ENABLED": "false",
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "NO_BROWSER": "1",
        }
        result = run_cli(
            [gemini, "-p", "Fix the bug.", "--yolo", "--output-format", "json",
             "-m", "gemini-2.5-flash"],
            env,
            work,
        )  # fmt: skip
        assert_proved(result, work, server)
    output = json.loads(result.stdout)
    assert output["response"] == "All fixed."
    assert output["stats"]["tools"]["byName"]["run_shell_command"]["success"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["toolcalls", "textbased"])
def test_mini_swe_agent_end_to_end(tmp_path: Path, work: Path, mode: str) -> None:
    # mini-swe-agent lives in its own virtual environment: BUGBOUT_MINI names its `mini`.
    mini = os.environ.get("BUGBOUT_MINI") or cli("mini", "; or set BUGBOUT_MINI to its path")
    home = tmp_path / "home"
    trajectory = tmp_path / "run.traj.json"
    config = ["-c", "mini.yaml"]
    if mode == "textbased":
        config = ["-c", "mini_textbased.yaml", "--model-class", "litellm_textbased"]
    with ModelServer(PROOF_SCRIPT) as server:
        env = {
            **base_env(home),
            "MSWEA_CONFIGURED": "true",
            "MSWEA_GLOBAL_CONFIG_DIR": str(home / "mswea"),
            "MSWEA_SILENT_STARTUP": "1",
            "MSWEA_COST_TRACKING": "ignore_errors",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "OPENAI_API_KEY": "dummy",
        }
        result = run_cli(
            [
                mini, *config,
                "-c", f"model.model_kwargs.api_base={server.url}/v1",
                "-c", "agent.step_limit=10",
                "-m", "openai/scripted", "-t", "Fix the bug.",
                "--yolo", "--exit-immediately", "--cost-limit", "0",
                "-o", str(trajectory),
            ],
            env,
            work,
        )  # fmt: skip
        assert_proved(result, work, server)
        assert {r.path for r in server.requests} == {"/v1/chat/completions"}
    info = json.loads(trajectory.read_text())["info"]
    assert info["exit_status"] == "Submitted"
    assert info["submission"].strip() == "All fixed."
