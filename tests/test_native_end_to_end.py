"""Native contestants for real: Claude Code, Codex and Gemini CLI each run a bout in
bugbout's sandbox with the team's setup (an instruction file and an MCP server), their
model the scripted server. The records show that each CLI loaded both inside the sandbox
(the model saw the MCP server's tool and said back the code seeded into the instruction
file) and that the MCP server, a child of the CLI, could neither read the real HOME nor
reach a port the contestant does not declare, while the URL of an MCP server the setup
declares is open to it."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

import components
from bugbout.testing.model_server import ModelServer, Say, Script, Shell

FIXED_FMT = 'def fmt(x):\n    """Format x."""\n    return "%g" % x\n'
SECRET = "SECRET-3b1f-of-the-real-home"
ECHO = r"bugbout-[0-9a-f]{16}|bugbout_probe_[a-z_]+"
"""What the scripted model says back: the probe's code and the MCP server's tool."""
SCRIPT = Script(
    [
        Shell(f"cat > src/calc/fmt.py <<'EOF'\n{FIXED_FMT}EOF"),
        Say("Fixed fmt().", echo=ECHO),
    ]
)
SERVER = textwrap.dedent(
    """\
    import json, socket, sys

    try:
        open(sys.argv[1]).close()
        seen = "visible"
    except OSError:
        seen = "hidden"
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=5).close()
        seen += "_reached"
    except OSError:
        seen += "_closed"
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[3])), timeout=5).close()
        seen += "_open"
    except OSError:
        seen += "_shut"
    open("mcp-started-" + seen, "w").close()  # in its working folder, the checkout
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        if message["method"] == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "probe", "version": "1"},
            }
        elif message["method"] == "tools/list":
            schema = {"type": "object", "properties": {}}
            tool = {"name": "bugbout_probe_" + seen, "description": "HOME", "inputSchema": schema}
            result = {"tools": [tool]}
        else:
            result = {}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
    """
)


def native_setups(root: Path, secret: Path, port: int, declared: str) -> dict[str, Path]:
    """Each CLI's setup folder: an instruction file, the MCP server, which is told to read
    ``secret``, a file in the real HOME, to reach ``port``, which no contestant declares,
    and the port of ``declared``, the URL of a second MCP server the setup declares."""
    server = root / "mcp" / "server.py"
    server.parent.mkdir(parents=True)
    server.write_text(SERVER)
    command = {"command": shutil.which("python3") or sys.executable}
    command["args"] = [str(server), str(secret), str(port), str(urlsplit(declared).port)]
    folders = {}
    for agent, instructions, config in (
        ("claude-code", "CLAUDE.md", "mcp.json"),
        ("codex", "AGENTS.md", "config.toml"),
        ("gemini-cli", "GEMINI.md", "settings.json"),
    ):
        folder = root / agent
        folder.mkdir()
        # an import of the real HOME's file (Claude Code and Gemini CLI expand `@path`)
        (folder / instructions).write_text(f"Keep functions short.\n\n@{secret}\n")
        if config == "config.toml":
            args = ", ".join(json.dumps(arg) for arg in command["args"])
            text = f"[mcp_servers.probe]\ncommand = {json.dumps(command['command'])}\n"
            text += f"args = [{args}]\nstartup_timeout_sec = 30\n"
            text += f"[mcp_servers.docs]\nurl = {json.dumps(declared)}\n"
        else:
            remote = {"type": "http", "url": declared} if agent == "claude-code" else {}
            remote = remote or {"httpUrl": declared}
            text = json.dumps({"mcpServers": {"probe": command, "docs": remote}})
        (folder / config).write_text(text)
        folders[agent] = folder
    return folders


@pytest.fixture
def secret() -> Iterator[Path]:
    """A file in the real HOME, for the test's length: what no agent may read."""
    path = Path.home() / f".bugbout-secret-{os.getpid()}"
    path.write_text(f"{SECRET}\n")
    yield path
    path.unlink()


def bugbout(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bugbout", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=1200, check=False,
    )  # fmt: skip


@pytest.mark.slow
def test_three_clis_load_the_teams_setup_inside_the_sandbox(
    calc_repo: tuple[Path, dict[str, str]], tmp_path: Path, secret: Path
) -> None:
    for program in ("claude", "codex", "gemini"):
        if shutil.which(program) is None:
            components.missing("agent-clis", f"{program} is not on PATH")
    repo = tmp_path / "calc"
    shutil.copytree(calc_repo[0], repo)
    listener = socket.create_server(("127.0.0.1", 0))
    remote = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    threading.Thread(target=remote.serve_forever, daemon=True).start()
    declared = f"http://127.0.0.1:{remote.server_address[1]}/mcp"
    setups = native_setups(tmp_path / "setups", secret, listener.getsockname()[1], declared)
    env = {
        **os.environ,
        "ANTHROPIC_API_KEY": "sk-ant-scripted",
        "OPENAI_API_KEY": "sk-scripted",
        "GEMINI_API_KEY": "gemini-scripted",
    }
    assert bugbout("init", cwd=repo, env=env).returncode == 0
    with ModelServer(SCRIPT) as server:
        urls = {"claude-code": server.url, "codex": f"{server.url}/v1", "gemini-cli": server.url}
        overrides = [
            f"contestant.{agent}.{option}={value}"
            for agent, setup in setups.items()
            for option, value in (("base-url", urls[agent]), ("native", setup))
        ]
        run = bugbout(
            "run", "contestant=[claude-code,codex,gemini-cli]", "contestant.codex.model=gpt-5.5",
            "contestant.gemini-cli.model=gemini-2.5-flash", *overrides, "miner.limit=1",
            "--quiet", cwd=repo, env=env,
        )  # fmt: skip
        assert run.returncode == 0, run.stdout + run.stderr
        bodies = json.dumps([request.body for request in server.scripted_requests])
    listener.close()
    remote.shutdown()
    attempts = {
        record["contestant"]: record
        for path in (repo / ".bugbout").glob("**/attempts/*/*/*.json")
        if "contestant" in (record := json.loads(path.read_text()))
    }
    assert set(attempts) == {"claude-code", "codex", "gemini-cli"}
    opened = f"http://127.0.0.1:{remote.server_address[1]}"  # the declared MCP server's
    report = json.loads((repo / ".bugbout" / "report.json").read_text())
    assert {row["contestant"]: row["opened"] for row in report["agents"]} == {
        name: [opened] for name in attempts
    }
    for name, attempt in attempts.items():
        assert attempt["status"] == "finished", (name, attempt)
        assert attempt["guidance_read"] is True, (name, attempt)
        assert attempt["opened"] == [opened], (name, attempt)
        patch = json.dumps(attempt["patch"])  # its MCP server started, in the sandbox
        assert "mcp-started-hidden_closed_open" in patch, (name, patch)
    for name in ("claude-code", "gemini-cli"):  # Codex defers MCP tools to a search
        assert "bugbout_probe_hidden_closed_open" in attempts[name]["summary"], attempts[name]
    assert "bugbout_probe_visible" not in bodies  # the real HOME: never seen
    assert "_reached" not in bodies  # nor an undeclared port
    assert SECRET not in bodies
