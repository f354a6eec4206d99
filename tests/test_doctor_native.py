"""``bugbout doctor``'s line for each native contestant (what is copied, which MCP servers
start, which endpoints open) and for each instruction arm, and its failures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from doctor_runs import bugbout, configured_repo, lines


@pytest.mark.slow
def test_doctor_shows_native_setups_and_instruction_arms(tmp_path: Path) -> None:
    setup = tmp_path / "team-claude"
    setup.mkdir()
    (setup / "CLAUDE.md").write_text("House rules.\n")
    servers = {
        "lint": {"command": "python3", "args": ["/opt/lint/server.py"]},
        "docs": {"type": "http", "url": "https://docs.example.com/mcp"},
    }
    (setup / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "CLAUDE.md").symlink_to(tmp_path / "elsewhere.md")
    repo = configured_repo(
        tmp_path / "repo",
        contestants={
            "ours": {
                "agent": "claude-code",
                "native": str(setup),
                "base-url": "http://127.0.0.1:9",
            },
            "bad": {
                "agent": "claude-code",
                "native": str(linked),
                "base-url": "http://127.0.0.1:9",
            },
            "bare": {"agent": "command", "command": ["/bin/true"], "instructions": "remove"},
            "lost": {"agent": "command", "command": ["/bin/true"], "instructions": "/no/such.md"},
        },
    )
    found = lines(bugbout(cwd=repo))
    assert found["ours native setup"] == (
        f"ok    ours native setup: copies 2 file(s) from {setup} into ~/.claude; MCP servers "
        "started: lint; endpoints opened: https://docs.example.com"
    )
    assert found["bad native setup"].startswith("FAIL  bad native setup: native setup ")
    assert "CLAUDE.md is a symlink" in found["bad native setup"]
    assert found["bare instructions"] == (
        "ok    bare instructions: the checkout's instruction files are removed"
    )
    assert found["lost instructions"].startswith("FAIL  lost instructions: instructions")
