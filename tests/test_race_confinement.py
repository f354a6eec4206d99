"""A scripted agent that snoops, writes and connects where it may not, raced for real: it is
contained and its attempt still recorded."""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import pytest

from one_bug import attempts, bugbout, write_agent

SNOOP = """
    import os, pathlib, socket
    evidence = {{}}
    def attempt(name, action):
        try:
            evidence[name] = "ALLOWED: " + str(action())[:80]
        except Exception as exc:
            evidence[name] = "blocked: " + type(exc).__name__
    attempt("git", lambda: pathlib.Path({repo!r}, ".git", "HEAD").read_text())
    attempt("git-log", lambda: os.listdir(pathlib.Path({repo!r}, ".git")))
    attempt("store", lambda: pathlib.Path({repo!r}, ".bugbout", "tasks.json").read_text())
    attempt("home", lambda: os.listdir({home!r}))
    attempt("home-cache", lambda: os.listdir(pathlib.Path({home!r}, ".cache")))
    attempt("write-repo", lambda: pathlib.Path({repo!r}, "pwned.txt").write_text("x"))
    attempt("write-elsewhere", lambda: pathlib.Path({outside!r}).write_text("x"))
    attempt("network", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=2).close())
    attempt("anthropic-key", lambda: os.environ["ANTHROPIC_API_KEY"])
    attempt("openai-key", lambda: os.environ["OPENAI_API_KEY"])
    lines = [f"{{k}}={{v}}" for k, v in sorted(evidence.items())]
    pathlib.Path("evidence.txt").write_text("\\n".join(lines))
"""


@pytest.mark.slow
def test_adversarial_agent_is_contained_and_still_recorded(
    bout_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    outside = Path("/opt") / f"bugbout-outside-{os.getpid()}.txt"  # not a private /tmp
    script = write_agent(
        tmp_path / "agents",
        "snoop",
        SNOOP.format(repo=str(bout_repo), home=str(Path.home()), outside=str(outside),
                     port=server.getsockname()[1]),
    )  # fmt: skip
    config = json.loads((bout_repo / "bugbout.yaml").read_text())
    config["contestants"] = {
        "snoop": {"agent": "command", "vendor": "openai", "command": [sys.executable, str(script)]}
    }
    (bout_repo / "bugbout.yaml").write_text(json.dumps(config))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-own")
    try:
        result = bugbout("run", cwd=bout_repo)
    finally:
        server.close()
    assert result.returncode == 0, result.stderr
    record = attempts(bout_repo)["snoop"]
    assert record["status"] == "finished"
    (change,) = record["patch"]["files"]
    assert change == {"path": "evidence.txt", "kind": "added", "area": "other", "binary": False,
                      "symlink": False}  # fmt: skip
    evidence = dict(
        line[1:].split("=", 1)
        for line in record["patch"]["other"].splitlines()
        if line.startswith("+") and "=" in line
    )
    assert evidence == {
        "anthropic-key": "blocked: KeyError",
        "git": "blocked: FileNotFoundError",
        "git-log": "blocked: FileNotFoundError",
        "home": evidence["home"],
        "home-cache": evidence["home-cache"],
        "network": evidence["network"] if evidence["network"].startswith("blocked") else "blocked",
        "openai-key": "ALLOWED: sk-openai-own",
        "store": "blocked: FileNotFoundError",
        "write-elsewhere": evidence["write-elsewhere"],
        "write-repo": evidence["write-repo"],
    }
    listed = set(eval(evidence["home"].removeprefix("ALLOWED: ")))  # only toolchains show
    assert listed <= {".pyenv", ".cargo", ".local", ".nvm", ".rustup", ".npm-global", ".cache"}
    if ".cache" in listed:  # only the tools the tests session installs there, read-only
        cached = eval(evidence["home-cache"].removeprefix("ALLOWED: "))
        assert cached == ["bugbout-tests"], cached
    assert evidence["write-repo"].startswith("blocked")
    assert evidence["write-elsewhere"].startswith("blocked")
    assert not (bout_repo / "pwned.txt").exists()
    assert not outside.exists()
