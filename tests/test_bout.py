"""A whole bout on the example repository: scripted contestants (correct, wrong,
breaking, empty) and a scripted examiner, through judging, scoring, auditing and reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from bugbout.example import build_example

pytestmark = pytest.mark.slow  # every test here runs or reads a whole demo bout


def bugbout(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bugbout", *args],
        cwd=cwd, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def bout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo repository after one whole bout with the default judge (majority)."""
    repo = build_example(tmp_path_factory.mktemp("bout") / "tally")
    result = bugbout("run", cwd=repo)
    assert result.returncode == 0, result.stderr
    return repo


def stored(repo: Path, name: str) -> dict:
    return json.loads((repo / ".bugbout" / name).read_text())


def test_every_patch_gets_the_expected_score_and_audit(bout: Path) -> None:
    resolutions, audits = stored(bout, "resolutions.json"), stored(bout, "audits.json")
    assert len(resolutions) == 3
    for task_id, scores in resolutions.items():
        assert {name: r["score"] for name, r in scores["patches"].items()} == {
            "correct": "resolved",
            "breaking": "fixed-but-broke",
            "wrong": "wrong-fix",
            "empty": "no-fix",
        }
        assert {name: (a["verdict"], a["route"]) for name, a in audits[task_id].items()} == {
            "correct": ("resolved", "none"),
            "breaking": ("fixed-but-broke", "craft"),
            "wrong": ("wrong-fix", "recon"),
            "empty": ("no-fix", "craft"),
        }
        assert scores["picks"] == {"majority": "resolved"}


def test_the_matrix_holds_one_pytest_run_per_patch(bout: Path) -> None:
    for path in (bout / ".bugbout" / "matrices").glob("*.json"):
        matrix = json.loads(path.read_text())
        assert set(matrix["patches"]) == {"(unfixed)", "correct", "breaking", "wrong"}
        assert set(matrix["runs"]) == set(matrix["patches"])
        assert set(matrix["authors"]) == {"(suite)", "correct", "breaking", "wrong", "reproducer"}


@pytest.mark.parametrize("policy", ["majority", "unanimous", "strict", "cross-vendor"])
def test_each_policy_picks_the_correct_patch_without_rerunning_agents(
    bout: Path, policy: str
) -> None:
    before = {p: p.stat().st_mtime_ns for p in (bout / ".bugbout" / "attempts").glob("*/*/*.json")}
    result = bugbout("run", f"judge={policy}", cwd=bout)
    assert result.returncode == 0, result.stderr
    after = {p: p.stat().st_mtime_ns for p in (bout / ".bugbout" / "attempts").glob("*/*/*.json")}
    assert after == before
    verdicts = stored(bout, "verdicts.json")
    for by_policy in verdicts.values():
        verdict = by_policy[policy]
        assert verdict["pick"] == "correct", verdict["reason"]
        assert "breaking" not in verdict["approved"]
        assert "wrong" not in verdict["approved"]
        assert verdict["cells"]


def test_a_sweep_over_judges_runs_no_test_again(bout: Path) -> None:
    """Matrices, scores and audits are kept in the store by what determines them: sweep
    jobs that change only the judge reuse every one, and still report in full."""
    evidence = bout / ".bugbout" / "evidence"
    before = {p: p.stat().st_mtime_ns for p in evidence.glob("*/*.json")}
    assert before, "the first bout left its evidence in the store"
    result = bugbout("-m", "judge=strict,unanimous", cwd=bout)
    assert result.returncode == 0, result.stderr
    jobs = sorted((bout / ".bugbout" / "sweeps").glob("*/*/job.json"))[-2:]
    assert len(jobs) == 2
    for path in jobs:
        job = json.loads(path.read_text())
        assert (job["evidence_made"], job["evidence_reused"] > 0) == (0, True), path
        report = json.loads((path.parent / "report.json").read_text())
        assert {row["contestant"]: row["resolved"] for row in report["agents"]}["correct"] > 0
        assert sorted(path.parent.glob("matrices/*.json")), "each job has its matrices"
    assert {p: p.stat().st_mtime_ns for p in evidence.glob("*/*.json")} == before


def test_a_judge_abstains_when_no_patch_is_supported(bout: Path) -> None:
    result = bugbout("run", "contestant=[wrong,empty]", "examiner=[reproducer]", cwd=bout)
    assert result.returncode == 0, result.stderr
    for by_policy in stored(bout, "verdicts.json").values():
        assert by_policy["majority"]["pick"] is None
        assert set(by_policy) == {"majority"}  # verdicts on the old matrix are dropped


def test_reports_are_written_and_rerendered(bout: Path) -> None:
    store = bout / ".bugbout"
    assert "## Agents" in (store / "report.md").read_text()
    report = json.loads((store / "report.json").read_text())
    assert report["schema"]
    assert (store / "report.html").read_text().lstrip().lower().startswith("<!doctype html")
    again = bugbout("report", "--format", "markdown", cwd=bout)
    assert again.returncode == 0, again.stderr
    assert "## Picking one patch per bug" in again.stdout


class _Page(HTMLParser):
    """A report page's ids, links and diff lines (as text)."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []
        self.diff_lines: set[str] = set()
        self._diff = False
        self._line: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(str(found["id"]))
        if found.get("href"):
            self.hrefs.append(str(found["href"]))
        if tag == "pre" and found.get("class") == "diff":
            self._diff = True
        elif tag == "span" and self._diff:
            self._line = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre":
            self._diff = False
        elif tag == "span" and self._line is not None:
            self.diff_lines.add("".join(self._line))
            self._line = None

    def handle_data(self, data: str) -> None:
        if self._line is not None:
            self._line.append(data)


def test_the_html_report_shows_every_task_patch_and_fix_and_its_links_resolve(
    bout: Path, tmp_path: Path
) -> None:
    from browser import _console_problems, read_png, screenshot

    store = bout / ".bugbout"
    html = store / "report.html"
    page = _Page()
    page.feed(html.read_text("utf-8"))
    job = stored(bout, "job.json")
    diffs = []
    for task in job["tasks"]["tasks"]:
        assert f"task-{task['id']}" in page.ids
        fix = subprocess.run(
            ["git", "-C", str(bout), "diff", "--no-color", "--binary", task["parent"], task["sha"]],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        diffs.append(fix)
    for used in job["attempts"]:
        patch = stored(bout, used["path"])["patch"]
        diffs.append(patch["source"] + patch["tests"] + patch["other"])
    tasks = len(job["tasks"]["tasks"])
    assert tasks == 3 and all(diffs[:tasks])  # every fix, and a patch per task at least,
    assert sum(bool(diff) for diff in diffs[tasks:]) >= tasks  # whichever bout ran last
    for diff in diffs:
        missing = [line for line in diff.splitlines() if (line or " ") not in page.diff_lines]
        assert not missing, missing[:3]
    assert page.hrefs
    for href in page.hrefs:  # self-contained: no link into the store or the logs
        assert href.startswith("#") and href[1:] in page.ids, href
    first = job["tasks"]["tasks"][0]["id"]
    shot, log = screenshot(html, tmp_path, f"task-{first}")
    assert _console_problems(log) == [], log[-3000:]
    _, _, rows = read_png(shot)
    added = bytes((0xDA, 0xFB, 0xE1))  # the task page's diffs and grid are shown
    assert any(row[i : i + 3] == added for row in rows for i in range(0, len(row), 3))


def test_python_api_returns_the_report(bout: Path) -> None:
    from bugbout import Bout, render_markdown

    result = Bout.load(bout).run()
    assert result.report is not None
    assert "## Agents" in render_markdown(result)


def test_a_stored_report_renders_from_python_through_any_reporter(bout: Path) -> None:
    from bugbout import BugboutError, read_report, render_report

    report = read_report(bout / ".bugbout")
    assert report.agents
    html = render_report(report, "html", title="tally, November")
    assert "<title>tally, November</title>" in html
    narrow, wide = (render_report(report, "terminal", width=w) for w in (60, 160))
    assert report.agents[0].contestant in narrow and narrow != wide
    assert render_report(report, "json", indent=None).count("\n") <= 1
    with pytest.raises(BugboutError, match="no-such"):
        render_report(report, "no-such")


def test_retry_rounds_use_visible_evidence_and_keep_every_round(tmp_path: Path) -> None:
    repo = build_example(tmp_path / "tally")
    result = bugbout("run", "run.rounds=3", "miner.limit=1", "verdicts.run-suite=false", cwd=repo)
    assert result.returncode == 0, result.stderr
    (task,) = list((repo / ".bugbout" / "attempts").iterdir())
    rounds = {folder.name: sorted(p.name for p in folder.iterdir()) for folder in task.iterdir()}
    assert len(rounds["correct"]) == 1  # approved on visible evidence: one round
    for name in ("breaking", "empty", "wrong"):
        (latest_name,) = [file for file in rounds[name] if ".round" not in file]
        stem = latest_name.removesuffix(".json")
        assert {f"{stem}.round1.json", f"{stem}.round2.json"} <= set(rounds[name])
    breaking = task / "breaking"
    (latest_path,) = [p for p in breaking.glob("*.json") if ".round" not in p.name]
    latest = json.loads(latest_path.read_text())
    assert latest["round"] == 3
    first = json.loads(latest_path.with_suffix(".round1.json").read_text())
    assert first["review"]["visible_only"] is True
    assert first["review"]["route"] == "craft"
    second = json.loads(latest_path.with_suffix(".round2.json").read_text())
    assert "Your diagnosis looked right" in (Path(second["logdir"]) / "prompt.md").read_text()
    third_prompt = (Path(latest["logdir"]) / "prompt.md").read_text()
    assert "<review>" in third_prompt
    assert "diagnose it again" in third_prompt  # a second craft escalates to recon
    hidden = json.loads((repo / ".bugbout" / "oracles.json").read_text())
    for test in next(iter(hidden.values()))["fail_to_pass"]:
        assert test not in third_prompt
    # every round's patch is scored: pass@k over the one task, per contestant
    report = json.loads((repo / ".bugbout" / "report.json").read_text())
    passed = {
        row["contestant"]: (row["tasks"], row["left_out"], [r["resolved"] for r in row["rounds"]])
        for row in report["rounds"]["agents"]
    }
    assert passed == {
        "breaking": (1, 0, [0, 0, 0]),
        "correct": (1, 0, [1, 1, 1]),
        "empty": (1, 0, [0, 0, 0]),
        "wrong": (1, 0, [0, 0, 0]),
    }


CRASHY = """
from bugbout import JudgePlugin, ReporterPlugin, hookimpl


class Crashy:
    name = "crashy"

    def __init__(self, options=None):
        pass

    def judge(self, matrix, context):
        raise RuntimeError("boom")


class Broken:
    filename = "broken.txt"

    def __init__(self, options=None):
        pass

    def render(self, report):
        raise ValueError("cannot render")


@hookimpl
def bugbout_judges():
    yield JudgePlugin(name="crashy", factory=Crashy)


@hookimpl
def bugbout_reporters():
    yield ReporterPlugin(name="broken", factory=Broken)
"""


def test_a_crashing_plugin_is_recorded_against_it_and_spares_the_rest(
    bout: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    (site / "bugbout_crashy-1.0.dist-info").mkdir(parents=True)
    (site / "bugbout_crashy-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: bugbout-crashy\nVersion: 1.0\n"
    )
    (site / "bugbout_crashy-1.0.dist-info" / "entry_points.txt").write_text(
        "[bugbout]\ncrashy = bugbout_crashy\n"
    )
    (site / "bugbout_crashy.py").write_text(CRASHY)
    (bout / ".bugbout" / "report.md").unlink()
    paths = [os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []
    result = subprocess.run(
        [sys.executable, "-m", "bugbout", "run", "judge=crashy",
         "+reporters.broken={reporter: broken}"],
        cwd=bout, capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *paths])},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    for by_policy in stored(bout, "verdicts.json").values():
        verdict = by_policy["crashy"]
        assert verdict["pick"] is None
        assert (
            verdict["reason"]
            == "judge 'crashy' from bugbout-crashy 1.0 crashed: RuntimeError: boom"
        )
    assert (
        "reporters.broken (broken from bugbout-crashy 1.0) failed: ValueError: cannot render"
        in result.stderr
    )
    assert (bout / ".bugbout" / "report.md").exists()


@pytest.mark.slow
def test_reporters_set_on_the_command_line_and_in_bugbout_yaml_reach_the_html(
    bout: Path,
) -> None:
    """``reporters.html.title=...`` on the command line or in ``bugbout.yaml``, a second
    instance of a reporter, one removed, and the old spellings: through ``bugbout run``."""
    store, config = bout / ".bugbout", bout / "bugbout.yaml"
    original = config.read_text()
    (store / "report.md").unlink()
    result = bugbout(
        "run", "reporters.html.title=From the line",
        "+reporters.short={reporter: html, title: Short}", "~reporters.markdown", cwd=bout,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "<title>From the line</title>" in (store / "report.html").read_text()
    assert "<title>Short</title>" in (store / "short.html").read_text()
    assert not (store / "report.md").exists()
    assert "report.json, report.html, short.html" in result.stderr
    short = "+reporters.short={reporter: html, title: Short}"
    result = bugbout("report", "--format", "short", short, cwd=bout)
    assert result.returncode == 0, result.stderr
    assert "<title>Short</title>" in result.stdout
    try:
        config.write_text(original + "reporters:\n  html: {title: From the file}\n")
        result = bugbout("run", "reporters.markdown=null", cwd=bout)
        assert result.returncode == 0, result.stderr
        assert "<title>From the file</title>" in (store / "report.html").read_text()
        config.write_text(original + "reporters: [html]\nreporter: {html: {title: Old}}\n")
        result = bugbout("run", cwd=bout)
        assert result.returncode == 0, result.stderr
        assert "<title>Old</title>" in (store / "report.html").read_text()
        assert "`reporters: [...]` is now `reporters: {terminal: null" in result.stderr
        assert not (store / "report.md").exists()
    finally:
        config.write_text(original)


def test_a_reporter_taken_out_leaves_no_stale_file(bout: Path) -> None:
    """The next bout removes the files the last one wrote and it does not write again;
    a file bugbout did not write stays."""
    store = bout / ".bugbout"
    (store / "notes.json").write_text("{}\n")  # the user's own
    result = bugbout("run", "+reporters.short={reporter: html, title: Short}", cwd=bout)
    assert result.returncode == 0, result.stderr
    assert (store / "short.html").exists() and (store / "report.json").exists()
    result = bugbout("run", "~reporters.json", cwd=bout)
    assert result.returncode == 0, result.stderr
    assert not (store / "short.html").exists()
    assert not (store / "report.json").exists()
    assert (store / "report.md").exists() and (store / "notes.json").exists()
    assert stored(bout, "job.json")["reports"] == ["report.md", "report.html"]
