"""Instruction arms and native setups, without a model: what each arm does to a checkout
and undoes, the probe, what a native setup copies, refuses and declares, and how both
enter an attempt's key (the keys of contestants using neither stay as they were)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent_sessions import make_session
from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.transcript import Step
from bugbout.core.plumbing.trees.checkout import WorkingCopy
from bugbout.core.race.agent_setup import named_files, native_setup
from bugbout.core.race.instructions import plan_arm
from bugbout.plugins.agents.claude_code import ClaudeCodeAgent
from bugbout.plugins.agents.codex import CodexAgent
from bugbout.plugins.agents.gemini_cli import GeminiCliAgent
from bugbout.plugins.agents.mini_swe_agent import MiniSweAgent
from bugbout.sandbox.overlay import Overlay

GUIDANCE = {
    "AGENTS.md": "Run tox.\n",
    "pkg/CLAUDE.md": "Claude: be brief.\n",
    ".cursor/rules/style.mdc": "Use tabs.\n",
    ".github/copilot-instructions.md": "Copilot: no.\n",
}


def checkout(root: Path) -> Path:
    """A commit's tree with instruction files of four agents beside its code."""
    for name, text in {**GUIDANCE, "pkg/code.py": "x = 1\n"}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def contents(root: Path) -> dict[str, str]:
    return {
        path.relative_to(root).as_posix(): path.read_text()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_each_arm_is_undone_before_the_patch(tmp_path: Path) -> None:
    base = checkout(tmp_path / "base")
    team = tmp_path / "team.md"
    team.write_text("Our rules.\n")
    for given in ("keep", "remove", str(team)):
        tree = tmp_path / f"tree-{len(given)}"
        checkout(tree)
        arm = plan_arm(given, base, "CLAUDE.md")
        arm.apply(tree)
        seen = contents(tree)
        if given == "remove":
            assert seen == {"pkg/code.py": "x = 1\n"}
            assert not arm.probed
        elif given == "keep":
            assert set(seen) == {*GUIDANCE, "pkg/code.py"}
            assert arm.token in seen["AGENTS.md"]
            assert seen["AGENTS.md"].startswith("Run tox.\n")
        else:
            assert set(seen) == {"CLAUDE.md", "pkg/code.py"}
            assert seen["CLAUDE.md"].startswith("Our rules.\n")
            assert arm.token in seen["CLAUDE.md"]
        assert arm.removes == (given != "keep")
        arm.restore(WorkingCopy(tree), base)
        assert contents(tree) == contents(base), given


def test_the_keep_arm_is_written_into_an_overlays_upper_layer_and_taken_back(
    tmp_path: Path,
) -> None:
    """``keep`` only writes (the probe): an attempt's overlay stays, the probed files land
    in its upper layer over the commit's, and restoring takes them out of it, so the
    commit's own files show through and the patch holds nothing of the arm."""
    base = checkout(tmp_path / "base")
    upper = tmp_path / "upper"
    upper.mkdir()
    (upper / "pkg").mkdir()
    (upper / "pkg" / "code.py").write_text("x = 2\n")  # the agent's own change stays
    layered = Overlay(lower=base, upper=upper, work=tmp_path / "work", target=tmp_path / "t")
    arm = plan_arm("keep", base, "CLAUDE.md")
    assert arm.probed and not arm.removes
    arm.apply(upper)
    assert arm.token in (upper / "AGENTS.md").read_text()
    assert arm.token in (upper / "pkg" / "CLAUDE.md").read_text()
    arm.restore(WorkingCopy(tmp_path / "t", layered), base)
    assert contents(upper) == {"pkg/code.py": "x = 2\n"}
    assert contents(base) == {**GUIDANCE, "pkg/code.py": "x = 1\n"}


def test_the_probe_reads_what_the_agent_said(tmp_path: Path) -> None:
    arm = plan_arm("keep", checkout(tmp_path), "AGENTS.md")
    assert arm.read([Step("command", "ls"), Step("final", f"Done. {arm.token}")], "") is True
    assert arm.read([Step("command", "cat AGENTS.md", output=arm.token)], "") is False
    assert arm.read(None, f"Done. {arm.token}") is True  # no transcript: its summary
    assert arm.read(None, "Done.") is False
    bare = tmp_path / "bare"
    bare.mkdir()
    assert plan_arm("keep", bare, "AGENTS.md").read([Step("final", "x")], "x") is None
    other = plan_arm("keep", checkout(tmp_path / "again"), "AGENTS.md")
    assert other.token != arm.token  # random: not derivable from the checkout


def test_a_missing_replacement_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not `keep`, `remove` or an instruction file"):
        ClaudeCodeAgent(instructions=str(tmp_path / "nope.md")).settings_key()


def test_keys_without_the_new_options_stay_as_they_were(tmp_path: Path) -> None:
    for agent in (ClaudeCodeAgent("sonnet"), CodexAgent(), GeminiCliAgent()):
        before = {
            "harness": agent.harness,
            **agent.options.model_dump(
                mode="json", by_alias=True, exclude={"instructions", "native"}
            ),
        }
        assert agent.settings_key() == before
    assert not {"instructions", "native"} & set(MiniSweAgent("openai/gpt-5").settings_key())


def test_the_setup_and_the_arm_are_in_the_key_by_content(tmp_path: Path) -> None:
    setup = tmp_path / "claude"
    setup.mkdir()
    (setup / "CLAUDE.md").write_text("Rule one.\n")
    team = tmp_path / "team.md"
    team.write_text("Ours.\n")
    keys = {
        "plain": ClaudeCodeAgent().settings_key(),
        "native": ClaudeCodeAgent(native=str(setup)).settings_key(),
        "remove": ClaudeCodeAgent(instructions="remove").settings_key(),
        "replace": ClaudeCodeAgent(instructions=str(team)).settings_key(),
    }
    assert len({json.dumps(key, sort_keys=True) for key in keys.values()}) == 4
    assert ClaudeCodeAgent(native=str(setup)).settings_key() == keys["native"]
    (setup / "CLAUDE.md").write_text("Rule two.\n")
    assert ClaudeCodeAgent(native=str(setup)).settings_key() != keys["native"]
    moved = tmp_path / "elsewhere.md"
    moved.write_text("Ours.\n")
    assert ClaudeCodeAgent(instructions=str(moved)).settings_key() == keys["replace"]
    team.write_text("Ours, changed.\n")
    assert ClaudeCodeAgent(instructions=str(team)).settings_key() != keys["replace"]


def test_a_setup_cannot_carry_a_link_or_a_login(tmp_path: Path) -> None:
    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE KEY\n")
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "CLAUDE.md").symlink_to(secret)
    with pytest.raises(ConfigError, match="is a symlink"):
        ClaudeCodeAgent(native=str(linked)).settings_key()
    login = tmp_path / "login"
    (login / "sub").mkdir(parents=True)
    (login / "sub" / "auth.json").write_text("{}")
    with pytest.raises(ConfigError, match="holds a login"):
        CodexAgent(native=str(login)).settings_key()
    with pytest.raises(ConfigError, match="does not exist"):
        GeminiCliAgent(native=str(tmp_path / "missing")).settings_key()
    with pytest.raises(ConfigError, match="cannot run a native setup"):
        MiniSweAgent("openai/gpt-5").native_setup()


def test_a_setup_declares_its_servers_and_endpoints(tmp_path: Path) -> None:
    setup = tmp_path / "gemini"
    setup.mkdir()
    servers = {
        "local": {"command": "python3", "args": ["/opt/team/server.py", "--fast"]},
        "remote": {"httpUrl": "https://mcp.example.com:8443/mcp"},
    }
    (setup / "settings.json").write_text(json.dumps({"mcpServers": servers}))
    native = GeminiCliAgent(native=str(setup)).native()
    assert native is not None
    assert [server.name for server in native.servers] == ["local", "remote"]
    assert native.endpoints() == ("https://mcp.example.com:8443",)
    assert native.programs()[1:] == ("/opt/team/server.py", "--fast")
    assert "MCP servers started: local" in native.describe()
    assert "endpoints opened: https://mcp.example.com:8443" in native.describe()
    (setup / "settings.json").write_text(json.dumps({"mcpServers": {"bad": {"url": "ftp://x"}}}))
    with pytest.raises(ConfigError, match="MCP server 'bad'"):
        GeminiCliAgent(native=str(setup)).native()


def test_a_server_in_the_real_home_stays_hidden(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("KEY\n")
    server = tmp_path / "server.py"
    server.write_text("")
    setup = tmp_path / "claude"
    setup.mkdir()
    declared = {"command": "cat", "args": [str(home / ".ssh" / "id_rsa"), str(server)]}
    (setup / "mcp.json").write_text(json.dumps({"mcpServers": {"x": declared}}))
    native = ClaudeCodeAgent(native=str(setup)).native()
    assert native is not None
    shown = named_files(list(native.programs()), masked=(home.resolve(),))
    assert server.resolve() in shown
    assert not any(path.is_relative_to(home.resolve()) for path in shown)


def test_the_setup_lands_in_the_private_home_with_the_probe(tmp_path: Path, fake_bin: Path) -> None:
    setup = tmp_path / "team"
    (setup / "skills" / "fix").mkdir(parents=True)
    (setup / "CLAUDE.md").write_text("Rule one.\n")
    (setup / "skills" / "fix" / "SKILL.md").write_text("A skill.\n")
    (setup / "mcp.json").write_text(json.dumps({"mcpServers": {}}))
    session = make_session(tmp_path / "attempt")
    agent = ClaudeCodeAgent(native=str(setup))
    arm = native_setup(agent, session.home, plan_arm("keep", session.workdir, "CLAUDE.md"))
    assert arm.probed
    config = session.home / ".claude"
    assert (config / "skills" / "fix" / "SKILL.md").read_text() == "A skill.\n"
    assert arm.token in (config / "CLAUDE.md").read_text()
    assert (setup / "CLAUDE.md").read_text() == "Rule one.\n"  # the team's file: untouched
    argv = agent.invocation(session).argv
    assert "--safe-mode" not in argv
    assert argv[argv.index("--mcp-config") + 1] == str(config / "mcp.json")
    assert "--strict-mcp-config" in argv
    assert "--safe-mode" in ClaudeCodeAgent().invocation(session).argv
    just_a_file = ClaudeCodeAgent(native=str(setup / "CLAUDE.md"))
    assert set(just_a_file.native_setup().files) == {"CLAUDE.md"}
    assert "--mcp-config" not in just_a_file.invocation(session).argv


def test_codex_and_gemini_read_the_copied_user_config(tmp_path: Path, fake_bin: Path) -> None:
    session = make_session(tmp_path)
    setup = tmp_path / "gemini"
    setup.mkdir()
    team = {
        "mcpServers": {"x": {"command": "true"}},
        "tools": {"exclude": ["shell"]},
        "telemetry": {"enabled": True},
    }
    (setup / "settings.json").write_text(json.dumps(team))
    (setup / "GEMINI.md").write_text("Rules.\n")
    gemini = GeminiCliAgent(native=str(setup))
    native_setup(gemini, session.home, plan_arm("keep", session.workdir, "GEMINI.md"))
    gemini.invocation(session)
    written = json.loads((session.home / ".gemini" / "settings.json").read_text())
    assert written["mcpServers"] == team["mcpServers"]
    assert written["telemetry"] == {"enabled": False}  # bugbout's settings win
    assert written["tools"]["exclude"] == ["shell", "web_fetch", "google_web_search"]
    argv = CodexAgent(native=str(setup / "GEMINI.md")).invocation(session).argv
    assert "--ignore-user-config" not in argv
    assert "--ignore-user-config" in CodexAgent().invocation(session).argv
    assert os.environ.get("HOME") != str(session.home)
