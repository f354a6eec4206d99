"""``bugbout doctor``'s pieces (check lines, flags, vendor keys kept), and ``--dry-run``, which
races the real CLIs against the scripted model server."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

import components
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings, ProjectSettings
from bugbout.core.race.agents import VENDOR_KEYS
from bugbout.onboarding import doctor
from bugbout.onboarding.doctor import DUMMY_KEY, KNOWN_AGENTS, SECRET_VARIABLE, Check
from bugbout.onboarding.doctor.clis import build_contestant, listed
from bugbout.onboarding.doctor.known_agents import dry_entry
from bugbout.testing import model_server as model_server_module
from doctor_runs import SECRETS, bugbout, executable, lines

# --------------------------------------------------------------------------------------------
# The pieces


def test_check_lines() -> None:
    assert Check("git", True, "2.39.5").line == "ok    git: 2.39.5"
    assert Check("uv", False, "missing", "pip install uv").line == (
        "FAIL  uv: missing; fix: pip install uv"
    )


def test_flags_are_matched_whole() -> None:
    text = "  --model-class <str>\n  --yolo, -y\n  --disallowedTools, --disallowed-tools"
    assert listed("--yolo", text)
    assert listed("--disallowedTools", text)
    assert not listed("--model", text)
    assert not listed("--disallowed", text)


def test_every_vendor_key_is_kept_from_probes_and_dry_runs() -> None:
    for variable in [*(v for keys in VENDOR_KEYS.values() for v in keys), *SECRETS]:
        assert SECRET_VARIABLE.search(variable), variable
    for known in KNOWN_AGENTS.values():
        for variable in known.keys:
            assert SECRET_VARIABLE.search(variable), variable


@pytest.mark.parametrize("agent", sorted(KNOWN_AGENTS))
def test_a_dry_run_points_each_adapter_at_the_server(
    agent: str, plugins: Plugins, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The URL suffix, model and dummy key of :data:`KNOWN_AGENTS` fit each adapter."""
    stand_ins = tmp_path / "bin"
    stand_ins.mkdir()
    for program in ("claude", "codex", "gemini", "mini"):
        executable(stand_ins / program, "#!/bin/sh\nexit 0\n")
    monkeypatch.setenv("PATH", f"{stand_ins}{os.pathsep}{os.environ['PATH']}")
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    url = "http://127.0.0.1:4321"
    entry = dry_entry({"agent": agent, "env": {"MY_TOKEN": "t", "X": "1"}}, url)
    settings = BoutSettings(project=ProjectSettings(source="src/calc"), root=tmp_path)
    contestant, problem = build_contestant(settings, plugins, "contestant", agent, entry)
    assert contestant is not None, problem
    session = doctor.dummy_session(tmp_path)
    invocation = contestant.agent.invocation(session)
    assert invocation.endpoints == (url,)
    env = {**contestant.agent.environment(session), **invocation.env}
    assert contestant.agent.model == KNOWN_AGENTS[agent].model
    for variable in KNOWN_AGENTS[agent].keys:
        assert env[variable] == DUMMY_KEY
    assert env["X"] == "1"
    assert "MY_TOKEN" not in env
    # Each adapter gets the API base it expects: OpenAI-style ones end in /v1.
    text = json.dumps([invocation.argv, env]) + "".join(
        path.read_text() for path in session.logdir.glob("*.yaml")
    )
    suffix = KNOWN_AGENTS[agent].url_suffix
    assert f"{url}{suffix}" in text
    if not suffix:
        assert f"{url}/v1" not in text


# --------------------------------------------------------------------------------------------
# The real CLIs, raced against the scripted model server (installed by CI)

MODULES = {
    "claude-code": ("bugbout.plugins.agents.claude_code", "claude"),
    "codex": ("bugbout.plugins.agents.codex", "codex"),
    "gemini-cli": ("bugbout.plugins.agents.gemini_cli", "gemini"),
    "mini-swe-agent": ("bugbout.plugins.agents.mini_swe_agent", "mini"),
}


def real_cli(agent: str) -> dict[str, Any]:
    """The contestant entry for ``agent``'s real CLI; skips when it or its adapter is missing."""
    module, program = MODULES[agent]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"the {agent} adapter ({module}) is not there yet")
    entry: dict[str, Any] = {"agent": agent}
    if agent == "mini-swe-agent":
        mini = os.environ.get("BUGBOUT_MINI") or shutil.which("mini")
        if not mini or not os.access(mini, os.X_OK):
            components.missing(
                "agent-clis", "mini is not on PATH and BUGBOUT_MINI does not name it"
            )
        entry.update(executable=mini, model="openai/gpt-5")
    elif shutil.which(program) is None:
        components.missing("agent-clis", f"{program} is not on PATH")
    return entry


@pytest.mark.slow
@pytest.mark.parametrize("agent", sorted(MODULES))
def test_dry_run_with_the_real_cli(
    agent: str, plugins: Plugins, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = real_cli(agent)
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    servers: list[Any] = []

    class RecordingServer(model_server_module.ModelServer):
        def start(self) -> Any:
            servers.append(self)
            return super().start()

    monkeypatch.setattr(model_server_module, "ModelServer", RecordingServer)
    settings = BoutSettings(
        project=ProjectSettings(source="src/calc"), contestant={agent: entry}, root=tmp_path
    )
    before = dict(os.environ)
    (check,) = doctor.dry_run_checks(settings, plugins)
    assert check.ok, check.line
    assert check.line.startswith(f"ok    {agent} dry run: fixed the bug in ")
    assert dict(os.environ) == before  # BUGBOUT_HOME and the keys are back
    (server,) = servers
    assert server.scripted_requests
    seen = json.dumps([[r.headers, r.body, r.path] for r in server.requests])
    for secret in SECRETS.values():
        assert secret not in seen
    assert DUMMY_KEY in seen


@pytest.mark.slow
def test_dry_run_of_every_installed_cli_from_the_command_line(tmp_path: Path) -> None:
    available = {}
    for agent in sorted(MODULES):
        try:
            available[agent] = real_cli(agent)
        except components.Missing:
            continue
    if not available:
        components.missing("agent-clis", "no agent CLI is installed")
    overrides = [f"contestant=[{','.join(available)}]"]
    mini = available.get("mini-swe-agent")
    if mini:
        overrides += [
            f"contestant.mini-swe-agent.executable={mini['executable']}",
            f"contestant.mini-swe-agent.model={mini['model']}",
        ]
    result = bugbout("--dry-run", *overrides, cwd=tmp_path, env=SECRETS)
    assert result.returncode == 0, result.stdout + result.stderr
    found = lines(result)
    for agent in available:
        assert found[f"{agent} dry run"].startswith(f"ok    {agent} dry run: fixed the bug"), (
            result.stdout
        )
    assert not list(tmp_path.iterdir())  # nothing written where it ran
