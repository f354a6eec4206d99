"""The scripted model server as a server: its scripts, routes, request bodies, parallel
conversations, port and command line."""

from __future__ import annotations

import gzip
import http.client
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from bugbout.testing.model_server import ModelServer, Say, Script, Shell, main
from model_requests import BASH_TOOL, SCRIPT, anthropic_body, post, request

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
