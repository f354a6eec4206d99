"""The real agent CLIs against the scripted model server: each one runs its script to the
end in a private HOME (the CLIs are installed by .ci/run)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import components
from bugbout.testing.model_server import OUTPUT_TOKENS, ModelServer, Say, Script, Shell

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
