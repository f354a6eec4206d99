"""The race end to end with scripted ``command`` contestants: real git, real checkouts,
real bubblewrap, real pytest; only the agents are scripts."""

from __future__ import annotations

import itertools
import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import components
from bugbout.testing import RepositoryBuilder

BUGGY = "def middle(values):\n    ordered = sorted(values)\n    return ordered[len(ordered) // 2]\n"
FIXED = (
    "def middle(values):\n    ordered = sorted(values)\n    half = len(ordered) // 2\n"
    "    if len(ordered) % 2 == 0:\n        return (ordered[half - 1] + ordered[half]) / 2\n"
    "    return ordered[half]\n"
)
TESTS = "from mid.core import middle\n\n\ndef test_odd():\n    assert middle([3, 1, 2]) == 2\n"
FIX_TEST = TESTS + "\n\ndef test_even():\n    assert middle([4, 1, 3, 2]) == 2.5\n"

AGENTS = {
    "good": f"""
        from pathlib import Path
        Path("src/mid/core.py").write_text({FIXED!r})
        Path("tests/test_regression.py").write_text(
            "from mid.core import middle\\n\\n"
            "def test_even():\\n    assert middle([1, 2]) == 1.5\\n")
        print("Fixed middle() for even-length input.")
    """,
    "empty": """
        print("I looked around and changed nothing.")
    """,
    "broken": """
        import sys
        print("something went wrong", file=sys.stderr)
        sys.exit(3)
    """,
    "sleepy": """
        import subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        time.sleep(600)
    """,
    "limited": """
        import sys
        print("Error: You've hit your usage limit. Try again later.", file=sys.stderr)
        sys.exit(1)
    """,
}


def write_agent(directory: Path, name: str, source: str) -> Path:
    path = directory / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return path


def one_bug_repository(path: Path) -> RepositoryBuilder:
    """A repository with one bug, ``middle()`` of even-length lists, fixed with a test (#1)."""
    repo = RepositoryBuilder(path)
    repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "mid"\nrequires-python = ">=3.9"\n',
            "src/mid/__init__.py": "",
            "src/mid/core.py": BUGGY,
            "tests/test_core.py": TESTS,
        },
    )
    repo.commit(
        "Fix middle of even-length lists (#1)",
        {"src/mid/core.py": FIXED, "tests/test_core.py": FIX_TEST},
    )
    return repo


@pytest.fixture
def bout_repo(tmp_path: Path) -> Path:
    """A one-bug repository with contestants defined in its bugbout.yaml."""
    repo = one_bug_repository(tmp_path / "repo")
    agents = tmp_path / "agents"
    agents.mkdir()
    contestants = {
        name: {
            "agent": "command",
            "command": [sys.executable, str(write_agent(agents, name, source))],
        }
        for name, source in AGENTS.items()
    }
    config = {
        "defaults": ["base", "_self_"],
        "project": {"source": "src/mid", "tests": "tests"},
        "issue-sources": {"github": None, "file": None},
        "run": {"timeout": 5, "quotas": {"command": 4}},
        "contestants": contestants,
    }
    (repo.path / "bugbout.yaml").write_text(json.dumps(config))
    return repo.path


def bugbout(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bugbout", *args, "environment=interpreter"],
        cwd=cwd, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip


def attempts(repo: Path) -> dict[str, dict]:
    folder = repo / ".bugbout" / "attempts"
    (task,) = list(folder.iterdir())
    return {
        path.parent.name: json.loads(path.read_text())
        for path in task.glob("*/*.json")
        if ".round" not in path.name
    }


@pytest.mark.slow
def test_race_records_every_attempt_and_resumes(bout_repo: Path) -> None:
    result = bugbout("run", cwd=bout_repo)
    assert result.returncode == 0, result.stderr
    found = attempts(bout_repo)
    assert {name: a["status"] for name, a in found.items()} == {
        "good": "finished",
        "empty": "finished",
        "broken": "agent-error",
        "sleepy": "timeout",
        "limited": "quota",
    }
    good = found["good"]
    assert [f["path"] for f in good["patch"]["files"]] == [
        "src/mid/core.py",
        "tests/test_regression.py",
    ]
    assert "+    if len(ordered) % 2 == 0:" in good["patch"]["source"]
    assert "def test_even" in good["patch"]["tests"]
    assert good["patch"]["other"] == ""
    assert "Fixed middle()" in good["summary"]
    assert found["empty"]["patch"]["files"] == []
    assert found["broken"]["error"] == "something went wrong"

    again = bugbout("run", cwd=bout_repo)
    assert again.returncode == 0, again.stderr
    assert "no new attempts" in again.stdout
    assert attempts(bout_repo) == found

    retried = bugbout("run", "--retry-failed", cwd=bout_repo)
    assert retried.returncode == 0, retried.stderr
    after = attempts(bout_repo)
    assert after["limited"]["logdir"] != found["limited"]["logdir"]  # it ran again
    for name in ("good", "empty", "broken", "sleepy"):
        assert after[name] == found[name]


@pytest.mark.slow
def test_choosing_contestants_on_the_command_line(bout_repo: Path) -> None:
    result = bugbout("run", "contestant=[good,empty]", cwd=bout_repo)
    assert result.returncode == 0, result.stderr
    assert set(attempts(bout_repo)) == {"good", "empty"}
    unknown = bugbout("run", "contestant=nobody", cwd=bout_repo)
    assert unknown.returncode == 2
    assert "contestant=nobody: no such contestant" in unknown.stderr


@pytest.mark.slow
def test_attempts_run_under_the_compiled_guard_or_under_guard_py_without_a_compiler(
    bout_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    guards = tmp_path / "home" / "guard"
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CC", "/bin/false")  # the compile fails: guard.py runs, unsaid
    result = bugbout("run", "contestant=[good,broken]", cwd=bout_repo)
    assert result.returncode == 0, result.stderr
    assert "compil" not in result.stdout + result.stderr
    found = {name: record["status"] for name, record in attempts(bout_repo).items()}
    assert found == {"good": "finished", "broken": "agent-error"}
    assert list(guards.glob("guard-*")) == []
    monkeypatch.delenv("CC")
    if not components.FOUND["compiler"]():
        components.missing("compiler", "no C compiler (cc) to compile the guard")
    result = bugbout("run", "contestant=[good,broken,empty]", cwd=bout_repo)
    assert result.returncode == 0, result.stderr
    assert attempts(bout_repo)["empty"]["status"] == "finished"
    assert len(list(guards.glob("guard-*"))) == 1  # compiled at the attempt, kept


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
        "network": evidence["network"] if evidence["network"].startswith("blocked") else "blocked",
        "openai-key": "ALLOWED: sk-openai-own",
        "store": "blocked: FileNotFoundError",
        "write-elsewhere": evidence["write-elsewhere"],
        "write-repo": evidence["write-repo"],
    }
    listed = set(eval(evidence["home"].removeprefix("ALLOWED: ")))  # only toolchains show
    assert listed <= {".pyenv", ".cargo", ".local", ".nvm", ".rustup", ".npm-global"}
    assert evidence["write-repo"].startswith("blocked")
    assert evidence["write-elsewhere"].startswith("blocked")
    assert not (bout_repo / "pwned.txt").exists()
    assert not outside.exists()


@pytest.mark.slow
def test_a_bout_killed_mid_race_resumes_without_rerunning_finished_attempts(
    bout_repo: Path, tmp_path: Path
) -> None:
    slow = write_agent(tmp_path / "agents", "slow", "import time\ntime.sleep(3)\nprint('done')\n")
    config = json.loads((bout_repo / "bugbout.yaml").read_text())
    config["contestants"] = {
        "a-empty": config["contestants"]["empty"],
        "b-slow": {"agent": "command", "command": [sys.executable, str(slow)]},
    }
    config["run"] = {"timeout": 60, "quotas": {"command": 1}}
    (bout_repo / "bugbout.yaml").write_text(json.dumps(config))
    process = subprocess.Popen(
        [sys.executable, "-m", "bugbout", "run", "environment=interpreter"],
        cwd=bout_repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    store = bout_repo / ".bugbout" / "attempts"
    deadline = time.monotonic() + 120
    while not list(store.glob("*/a-empty/*.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    process.kill()
    process.wait()
    first = attempts(bout_repo)
    assert set(first) == {"a-empty"}
    result = bugbout("run", cwd=bout_repo)
    assert result.returncode == 0, result.stderr
    second = attempts(bout_repo)
    assert second["a-empty"] == first["a-empty"]
    assert second["b-slow"]["status"] == "finished"


@pytest.mark.slow
def test_python_api_with_an_adapter_written_in_python(bout_repo: Path, tmp_path: Path) -> None:
    from bugbout import Bout, CodingAgent, Invocation, Project, Session

    script = write_agent(tmp_path / "agents", "mine", AGENTS["good"])

    class MyAgent(CodingAgent):
        harness = "my-agent"
        executable = sys.executable

        def invocation(self, session: Session) -> Invocation:
            return Invocation([self.command(), str(script)], stdin=session.prompt)

        def parse(self, logdir: Path) -> tuple[str, dict[str, int]]:
            return (logdir / "stdout.log").read_text().strip(), {"output_tokens": 7}

    project = Project.load(bout_repo, overrides=["environment=interpreter"])
    result = Bout(project, contestants=[MyAgent("my-model")]).run()
    (attempt,) = result.attempts
    assert attempt.contestant == "my-agent/my-model"
    assert attempt.vendor is None
    assert attempt.status == "finished"
    assert attempt.summary == "Fixed middle() for even-length input."
    assert attempt.usage == {"output_tokens": 7}
    assert [change.path for change in attempt.patch.files] == [
        "src/mid/core.py",
        "tests/test_regression.py",
    ]
    assert [task.id for task in result.tasks.tasks] == [attempt.task_id]


@pytest.mark.slow
def test_examiners_write_tests_that_are_checked_on_the_unfixed_code(
    bout_repo: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "agents"
    strong = write_agent(
        folder,
        "strong",
        """
        from pathlib import Path
        Path("tests/test_examined.py").write_text(
            "from mid.core import middle\\n\\n"
            "def test_even():\\n    assert middle([1, 2, 3, 4]) == 2.5\\n\\n"
            "def test_odd_still_works():\\n    assert middle([5, 1, 3]) == 3\\n")
        """,
    )
    weak = write_agent(
        folder,
        "weak",
        """
        from pathlib import Path
        Path("tests/test_weak.py").write_text("def test_nothing():\\n    assert True\\n")
        """,
    )
    config = json.loads((bout_repo / "bugbout.yaml").read_text())
    config["contestants"] = {"good": config["contestants"]["good"]}
    config["examiners"] = {
        "spec": {
            "agent": "command",
            "assignment": "specify",
            "command": [sys.executable, str(strong)],
        },
        "repro": {"agent": "command", "command": [sys.executable, str(weak)]},
    }
    (bout_repo / "bugbout.yaml").write_text(json.dumps(config))
    result = bugbout("run", cwd=bout_repo)
    assert result.returncode == 0, result.stderr
    found = attempts(bout_repo)
    assert set(found) == {"good", "spec", "repro"}
    assert found["good"]["role"] == "contestant"
    spec, repro = found["spec"], found["repro"]
    assert (spec["role"], spec["assignment"], repro["assignment"]) == (
        "examiner",
        "specify",
        "reproduce",
    )
    assert spec["reproductions"] == ["tests/test_examined.py::test_even"]
    assert spec["rejected_tests"] == []
    assert (
        spec["validation"]["outcomes"]["tests/test_examined.py::test_odd_still_works"] == "passed"
    )
    assert "Do NOT fix the issue" in (Path(spec["logdir"]) / "prompt.md").read_text()
    assert "Do NOT fix" not in (Path(found["good"]["logdir"]) / "prompt.md").read_text()
    assert repro["reproductions"] == []
    assert repro["rejected_tests"] == ["tests/test_weak.py::test_nothing"]
    only = bugbout("run", "examiner=[repro]", "contestant=[good]", "--cfg", "job", cwd=bout_repo)
    import yaml

    composed = yaml.safe_load(only.stdout)
    assert set(composed["examiner"]) == {"repro"}
    assert set(composed["contestant"]) == {"good"}


@pytest.mark.slow
def test_adding_a_contestant_runs_only_it_and_logs_are_capped(
    bout_repo: Path, tmp_path: Path
) -> None:
    config = json.loads((bout_repo / "bugbout.yaml").read_text())
    config["contestants"] = {"empty": config["contestants"]["empty"]}
    config["run"]["log-limit"] = 1000
    (bout_repo / "bugbout.yaml").write_text(json.dumps(config))
    assert bugbout("run", cwd=bout_repo).returncode == 0
    first = attempts(bout_repo)
    chatty = write_agent(tmp_path / "agents", "chatty", "print('x' * 100_000)\n")
    config["contestants"]["chatty"] = {"agent": "command", "command": [sys.executable, str(chatty)]}
    (bout_repo / "bugbout.yaml").write_text(json.dumps(config))
    result = bugbout("run", cwd=bout_repo)
    assert result.returncode == 0, result.stderr
    second = attempts(bout_repo)
    assert second["empty"] == first["empty"]
    log = Path(second["chatty"]["logdir"]) / "stdout.log"
    assert log.read_text().endswith("[bugbout: output truncated]\n")
    assert log.stat().st_size < 1100


@pytest.mark.slow
def test_an_adapter_published_under_the_entry_point_group(bout_repo: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "echo_agent-1.0.dist-info").mkdir(parents=True)
    (site / "echo_agent-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: echo-agent\nVersion: 1.0\n"
    )
    (site / "echo_agent-1.0.dist-info" / "entry_points.txt").write_text(
        "[bugbout]\necho = echo_agent\n"
    )
    (site / "echo_agent.py").write_text(
        textwrap.dedent(
            """
            import sys
            from bugbout import AgentPlugin, CodingAgent, Invocation, hookimpl

            class Echo(CodingAgent):
                harness = "echo"
                executable = sys.executable

                def invocation(self, session):
                    code = "import sys; print(sys.stdin.read().splitlines()[0])"
                    return Invocation([self.command(), "-c", code], stdin=session.prompt)

            @hookimpl
            def bugbout_agents():
                yield AgentPlugin(name="echo", factory=Echo.from_options, options=Echo.Options)
            """
        )
    )
    config = json.loads((bout_repo / "bugbout.yaml").read_text())
    config["contestants"] = {"mine": {"agent": "echo", "model": "claude-opus"}}
    (bout_repo / "bugbout.yaml").write_text(json.dumps(config))
    result = subprocess.run(
        [sys.executable, "-m", "bugbout", "run", "environment=interpreter"],
        cwd=bout_repo, capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": str(site)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    record = attempts(bout_repo)["mine"]
    assert (record["agent"], record["vendor"], record["status"]) == (
        "echo",
        "anthropic",
        "finished",
    )
    assert (
        record["summary"]
        == "You are working in a checkout of a Python project. A user reported this issue:"
    )


def test_own_contestant_named_like_a_packaged_one_is_a_clear_error(bout_repo: Path) -> None:
    config = json.loads((bout_repo / "bugbout.yaml").read_text())
    config["contestants"] = {"codex": {"agent": "codex", "model": "gpt-5"}}
    (bout_repo / "bugbout.yaml").write_text(json.dumps(config))
    result = bugbout("run", cwd=bout_repo)
    assert result.returncode == 2
    assert "contestant 'codex' has the name of a packaged option" in result.stderr


def _interval(attempt: dict) -> tuple[float, float]:
    """When an attempt's agent started (its prompt written) and ended (its output closed)."""
    logs = Path(attempt["logdir"])
    return (logs / "prompt.md").stat().st_mtime, (logs / "stdout.log").stat().st_mtime


def _overlaps(intervals: list[tuple[float, float]]) -> bool:
    ordered = sorted(intervals)
    return any(later[0] < earlier[1] for earlier, later in itertools.pairwise(ordered))


@pytest.mark.slow
def test_a_quota_holds_however_many_workers_the_executor_has(bout_repo: Path) -> None:
    config = json.loads((bout_repo / "bugbout.yaml").read_text())
    nap = "import time\ntime.sleep(1)\n"
    agents = bout_repo.parent / "agents"
    config["contestants"] = {
        name: {"agent": "command", "command": [sys.executable, str(write_agent(agents, name, nap))]}
        for name in ("nap1", "nap2", "nap3")
    }
    config["run"] = {"timeout": 60, "quotas": {"command": 1}}
    (bout_repo / "bugbout.yaml").write_text(json.dumps(config))

    alone = bugbout("run", "executor.workers=8", "verdicts.run-suite=false", cwd=bout_repo)
    assert alone.returncode == 0, alone.stderr
    assert not _overlaps([_interval(a) for a in attempts(bout_repo).values()])

    subprocess.run(["rm", "-rf", str(bout_repo / ".bugbout")], check=True)
    wide = bugbout(
        "run", "executor.workers=8", "run.quotas.command=3", "verdicts.run-suite=false",
        cwd=bout_repo,
    )  # fmt: skip
    assert wide.returncode == 0, wide.stderr
    assert _overlaps([_interval(a) for a in attempts(bout_repo).values()])


@pytest.mark.slow
def test_attempts_run_in_ray_workers(bout_repo: Path) -> None:
    result = bugbout(
        "run", "executor=ray", "executor.num-cpus=2", "contestant=[good,empty]",
        "verdicts.run-suite=false", cwd=bout_repo,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    found = attempts(bout_repo)
    assert {name: a["status"] for name, a in found.items()} == {
        "good": "finished",
        "empty": "finished",
    }
    assert [f["path"] for f in found["good"]["patch"]["files"]] == [
        "src/mid/core.py",
        "tests/test_regression.py",
    ]
    # the verdicts' test runs ran in Ray workers too: the good patch resolves the task
    (scores,) = json.loads((bout_repo / ".bugbout" / "resolutions.json").read_text()).values()
    assert {name: s["score"] for name, s in scores["patches"].items()} == {
        "good": "resolved",
        "empty": "no-fix",
    }
    again = bugbout("run", "executor=ray", "contestant=[good,empty]", cwd=bout_repo)
    assert again.returncode == 0, again.stderr
    assert "reused 2 attempt(s) from the store" in again.stderr


@pytest.mark.slow
def test_a_program_that_vanishes_mid_bout_is_infra_error(bout_repo: Path, tmp_path: Path) -> None:
    """The machine's doing, not the agent's: never scored, and --retry-failed runs it
    again, whatever kind of agent it is."""
    program = tmp_path / "bin" / "vanishing"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\nsleep 4\nexit 1\n")
    program.chmod(0o755)
    config = json.loads((bout_repo / "bugbout.yaml").read_text())
    config["contestants"] = {"vanishing": {"agent": "command", "command": [str(program)]}}
    config["run"]["timeout"] = 60
    (bout_repo / "bugbout.yaml").write_text(json.dumps(config))
    process = subprocess.Popen(
        [sys.executable, "-m", "bugbout", "run", "environment=interpreter", "--quiet"],
        cwd=bout_repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 300
    while not _started("vanishing"):
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.2)
    program.unlink()  # while the agent runs
    _, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    record = attempts(bout_repo)["vanishing"]
    assert record["status"] == "infra-error"
    assert record["error"] == f"its program {str(program)!r} is no longer installed"


def _started(contestant: str) -> bool:
    """Whether an attempt of ``contestant`` has its prompt written (its agent starts)."""
    home = Path(os.environ["BUGBOUT_HOME"])
    return any((home / "attempts").glob(f"*/{contestant}-*/logs/prompt.md"))
