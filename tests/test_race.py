"""The race end to end with scripted ``command`` contestants (real git, real checkouts, real
bubblewrap, real pytest): records, resuming, choosing contestants, examiners."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

import components
from one_bug import attempts, bugbout, write_agent


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
    spec_exam, repro_exam = spec["examination"], repro["examination"]
    assert (spec["role"], spec_exam["assignment"], repro_exam["assignment"]) == (
        "examiner",
        "specify",
        "reproduce",
    )
    assert spec_exam["reproductions"] == ["tests/test_examined.py::test_even"]
    assert spec_exam["rejected_tests"] == []
    odd = "tests/test_examined.py::test_odd_still_works"
    assert spec_exam["validation"]["outcomes"][odd] == "passed"
    assert "Do NOT fix the issue" in (Path(spec["logdir"]) / "prompt.md").read_text()
    assert "Do NOT fix" not in (Path(found["good"]["logdir"]) / "prompt.md").read_text()
    assert repro_exam["reproductions"] == []
    assert repro_exam["rejected_tests"] == ["tests/test_weak.py::test_nothing"]
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
