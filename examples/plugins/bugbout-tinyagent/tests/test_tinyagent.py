"""The ``tinyagent`` command line, driven by bugbout's scripted model server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from bugbout.testing.model_server import ModelServer, Say, Script, Shell

StartServer = Callable[[Script], ModelServer]
FIX = Script(
    [
        Shell("cat calc.py"),
        Shell("printf 'def add(a, b):\\n    return a + b\\n' > calc.py"),
        Say("Fixed add(): it subtracted."),
    ]
)


def tinyagent(
    *args: str, cwd: Path, prompt: str = "Fix add() in calc.py."
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bugbout_tinyagent.tinyagent", *args],
        cwd=cwd, input=prompt, capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "OPENAI_API_KEY": "sk-scripted"},
    )  # fmt: skip


def test_runs_the_models_commands_until_it_stops(tmp_path: Path, model_server: StartServer) -> None:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    server = model_server(FIX)
    result = tinyagent("--base-url", f"{server.url}/v1", "--model", "m", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert result.stdout.strip() == "Fixed add(): it subtracted."
    assert "$ cat calc.py" in result.stderr
    requests = server.scripted_requests
    assert [r.step for r in requests] == [0, 1, 2]
    assert {r.path for r in requests} == {"/v1/chat/completions"}
    assert requests[0].headers["authorization"] == "Bearer sk-scripted"
    assert requests[0].body["model"] == "m"
    assert requests[0].body["messages"][1] == {"role": "user", "content": "Fix add() in calc.py."}
    output = requests[1].body["messages"][-1]
    assert output["role"] == "tool"
    assert "return a - b" in output["content"]


def test_json_lines_say_what_happened(tmp_path: Path, model_server: StartServer) -> None:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    server = model_server(FIX)
    result = tinyagent("--json", "--base-url", f"{server.url}/v1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert [event["type"] for event in events] == ["command", "command", "done"]
    assert events[0]["command"] == "cat calc.py"
    assert "(exit status 0)" in events[0]["output"]
    assert events[-1]["text"] == "Fixed add(): it subtracted."
    assert events[-1]["usage"]["prompt_tokens"] > 0


def test_stops_at_its_step_limit(tmp_path: Path, model_server: StartServer) -> None:
    server = model_server(Script([Shell("true")] * 5))
    result = tinyagent("--max-steps", "2", "--base-url", f"{server.url}/v1", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == "tinyagent: stopped after 2 model turns"


def test_an_unreachable_model_is_one_line(tmp_path: Path) -> None:
    result = tinyagent("--base-url", "http://127.0.0.1:9/v1", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("tinyagent: no answer from http://127.0.0.1:9/v1")
    assert len(result.stderr.strip().splitlines()) == 1
