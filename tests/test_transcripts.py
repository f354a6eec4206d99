"""Why an agent failed: each agent plugin reads its real CLI's own log format into
transcript steps (driven here against the scripted model server, a command that fails
first), the report marks the first failure and the test runs, and the HTML task page
embeds it with no link out of the file."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from agent_sessions import DATA
from bugbout import hookimpl
from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.transcript import Step
from bugbout.core.pipeline import TranscriptHook
from bugbout.core.race.agents import CodingAgent
from bugbout.core.report.transcripts import MAX_STEPS, transcript, transcripts
from bugbout.core.store.race_records import Attempt, AttemptStatus, Score
from bugbout.core.store.store import Store
from bugbout.core.store.verdict_records import ResolutionSet
from bugbout.plugins.agents.claude_code import ClaudeCodeAgent
from bugbout.plugins.agents.codex import CodexAgent
from bugbout.plugins.agents.gemini_cli import GeminiCliAgent
from bugbout.plugins.agents.mini_swe_agent import MiniSweAgent
from bugbout.testing.model_server import ModelServer, Say, Script, Shell
from cli_runs import bugbout
from stored_bouts import store_bout
from test_agents_end_to_end import buggy_checkout, cli, mini_executable, run_agent

CHECK = "python3 -c 'from calc import add; assert add(2, 3) == 5'"
FIX = "sed -i 's/return a - b/return a + b/' calc.py"
TESTS = "python3 -m pytest -q -p no:cacheprovider tests"
SAID = "Fixed add(): it subtracted instead of adding."
STUMBLE = Script([Shell(CHECK), Shell(FIX), Shell(TESTS), Say(SAID)])
"""A session that goes wrong first: the check fails (exit 1) before the fix."""


def _agent(name: str, url: str) -> CodingAgent:
    if name == "claude-code":
        cli("claude")
        return ClaudeCodeAgent("claude-sonnet-4-5", base_url=url)
    if name == "codex":
        cli("codex")
        return CodexAgent("gpt-5.5", base_url=f"{url}/v1", reasoning_effort="low")
    if name == "gemini-cli":
        cli("gemini")
        return GeminiCliAgent("gemini-2.5-flash", base_url=url)
    return MiniSweAgent(
        "openai/scripted", base_url=f"{url}/v1", step_limit=10, executable=mini_executable()
    )


def _run(name: str, root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The real CLI ``name`` through :data:`STUMBLE`; its log folder."""
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(key, "scripted")
    session = buggy_checkout(root)
    with ModelServer(STUMBLE) as server:
        assert run_agent(_agent(name, server.url), session, server) == 0
    return session.logdir


@pytest.mark.slow
@pytest.mark.parametrize("name", ["claude-code", "codex", "mini-swe-agent"])
def test_a_real_session_reads_as_steps(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logdir = _run(name, tmp_path, monkeypatch)
    steps = make_plugins().hook.bugbout_transcript(agent=name, logdir=logdir)
    commands = [(s.text, s.exit_code, s.failed) for s in steps if s.kind == "command"]
    assert commands == [(CHECK, 1, True), (FIX, 0, False), (TESTS, 0, False)], steps
    assert "AssertionError" in steps[0].output
    assert "1 passed" in next(s.output for s in steps if s.text == TESTS)
    assert steps[-1] == Step("final", SAID)

    shown = transcript(steps)
    assert shown.first_failure == 0
    assert [shown.steps[i].text for i in shown.test_runs] == [TESTS]


@pytest.mark.slow
def test_gemini_cli_session_reads_as_steps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Gemini CLI's event stream keeps the commands and their output, not their exit codes."""
    logdir = _run("gemini-cli", tmp_path, monkeypatch)
    steps = make_plugins().hook.bugbout_transcript(agent="gemini-cli", logdir=logdir)
    assert [(s.kind, s.text, s.exit_code) for s in steps] == [
        ("command", CHECK, None),
        ("command", FIX, None),
        ("command", TESTS, None),
        ("final", SAID, None),
    ]
    assert "AssertionError" in steps[0].output
    assert "1 passed" in steps[2].output
    assert [transcript(steps).steps[i].text for i in transcript(steps).test_runs] == [TESTS]


def test_a_recorded_failure_is_a_failed_final_step() -> None:
    hook = make_plugins().hook
    (step,) = hook.bugbout_transcript(agent="gemini-cli", logdir=DATA / "gemini-cli-auth")
    assert step.kind == "final" and step.failed and "GEMINI_API_KEY" in step.text
    steps = hook.bugbout_transcript(
        agent="mini-swe-agent", logdir=DATA / "mini-swe-agent-step-limit"
    )
    assert [s.kind for s in steps] == ["command", "final"]
    assert steps[-1] == Step("final", "LimitsExceeded", failed=True)


def test_edits_and_other_tool_calls_read_as_steps(tmp_path: Path) -> None:
    """Claude Code's and Gemini CLI's file edits are the file changed; their other tool
    calls show their arguments; a failed call is a failed step."""
    claude, gemini = tmp_path / "claude", tmp_path / "gemini"
    claude.mkdir()
    gemini.mkdir()
    calls = [("Edit", {"file_path": "calc.py", "old_string": "-"}, False),
             ("Read", {"file_path": "calc.py"}, True)]  # fmt: skip
    (claude / "stdout.log").write_text(
        "".join(
            json.dumps({"type": "assistant", "message": {"content": [
                {"type": "tool_use", "id": str(i), "name": name, "input": arguments}]}})
            + "\n"
            + json.dumps({"type": "user", "message": {"content": [
                {"type": "tool_result", "tool_use_id": str(i), "content": "done",
                 "is_error": failed}]}})
            + "\n"
            for i, (name, arguments, failed) in enumerate(calls)
        )
    )  # fmt: skip
    calls = [("replace", {"file_path": "calc.py", "old_string": "-"}, False),
             ("read_file", {"file_path": "calc.py"}, True)]  # fmt: skip
    (gemini / "stdout.log").write_text(
        "".join(
            json.dumps({"type": "tool_use", "tool_name": name, "tool_id": str(i),
                        "parameters": arguments}) + "\n"
            + json.dumps({"type": "tool_result", "tool_id": str(i), "output": "done",
                          "status": "error" if failed else "success"}) + "\n"
            for i, (name, arguments, failed) in enumerate(calls)
        )
    )  # fmt: skip
    hook = make_plugins().hook
    assert hook.bugbout_transcript(agent="claude-code", logdir=claude) == [
        Step("edit", "calc.py", "done"),
        Step("tool", "Read(file_path=calc.py)", "done", failed=True),
    ]
    assert hook.bugbout_transcript(agent="gemini-cli", logdir=gemini) == [
        Step("edit", "calc.py", "done"),
        Step("tool", "read_file(file_path=calc.py)", "done", failed=True),
    ]


class _MyAgent:
    """A third-party plugin that reads its own agent's log."""

    @hookimpl
    def bugbout_transcript(self, agent: str, logdir: Path) -> list[Step] | None:
        if agent != "my-agent":
            return None
        return [Step("command", line, exit_code=int(code), failed=code != "0")
                for line, code in (row.rsplit(" ", 1) for row in
                                   (logdir / "run.txt").read_text().splitlines())]  # fmt: skip


def test_hook_transcript(tmp_path: Path) -> None:
    """A plugin's steps are used for its agent; an agent no plugin reads shows the end of
    what it printed."""
    plugins = make_plugins()
    plugins.register(_MyAgent(), name="my-agent-plugin")
    mine, other = tmp_path / "mine", tmp_path / "other"
    mine.mkdir()
    other.mkdir()
    (mine / "run.txt").write_text("ls 0\npytest -q 1\npytest -q 0\n")
    (other / "stdout.log").write_text("x" * 20_000 + "the end")
    attempts = [
        Attempt(
            task_id="t",
            contestant=name,
            key=name,
            agent=agent,
            status=AttemptStatus.FINISHED,
            logdir=str(logdir),
        )
        for name, agent, logdir in (("a", "my-agent", mine), ("b", "unknown", other))
    ]
    found = transcripts(attempts, TranscriptHook(plugins))
    ours = found[attempts[0].revision]
    assert [s.text for s in ours.steps] == ["ls", "pytest -q", "pytest -q"]
    assert ours.first_failure == 1 and ours.test_runs == [1, 2]
    raw = found[attempts[1].revision]
    assert raw.steps == [] and raw.raw.startswith("--- stdout.log\n[")
    assert raw.raw.endswith("the end") and len(raw.raw) < 8_100


def test_a_long_session_keeps_its_ends() -> None:
    steps = [Step("command", f"step {i}", exit_code=0) for i in range(MAX_STEPS + 50)]
    shown = transcript(steps)
    assert shown.left_out == 50 and len(shown.steps) == MAX_STEPS
    assert shown.steps[0].text == "step 0" and shown.steps[-1].text == f"step {MAX_STEPS + 49}"


@pytest.mark.slow
def test_the_task_page_embeds_the_transcript_and_links_nowhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bout whose attempt ran the real Codex CLI: its task page shows the failing
    check first, the test run, and the final message, with no link out of the file."""
    logdir = _run("codex", tmp_path / "run", monkeypatch)
    project = tmp_path / "project"
    store: Store = store_bout(project, {"alpha": {"t00": Score.RESOLVED}})
    path = "attempts/t00/alpha.json"
    attempt = store.read(path, Attempt)
    assert attempt is not None
    kept = project / ".bugbout" / "logs" / "alpha"
    shutil.copytree(logdir, kept)
    store.write(path, attempt.model_copy(update={"agent": "codex", "logdir": str(kept)}))

    ran = bugbout("report", "--format", "html", cwd=project)
    assert ran.returncode == 0, ran.stderr
    html = ran.stdout
    links = re.findall(r'(?:href|src)="([^"]*)"', html)
    assert links and all(link.startswith("#") for link in links), links
    assert "file:" not in html and str(project) not in html and str(tmp_path) not in html
    first = re.search(
        r'<li id="task-t00-1-1" class="command failed first-failure">(.*?)</li>', html, re.S
    )
    assert first is not None, html[-5000:]
    assert "exit 1" in first.group(1) and "AssertionError" in first.group(1)
    assert 'test runs: <a href="#task-t00-1-3"><code>python3 -m pytest' in html
    assert 'First failure: <a href="#task-t00-1-1">step 1</a>' in html
    assert f"final</span> {SAID}</li>" in html

    markdown = bugbout("report", "--format", "markdown", cwd=project).stdout
    assert f"; 1 test runs; first failure, step 1: {CHECK} (exit 1)" in markdown
    assert AttemptStatus.FINISHED.value in html


@pytest.mark.slow
def test_a_real_bouts_task_page_lists_the_hidden_tests_and_shows_each_log(
    bout_repo: Path,
) -> None:
    """A bout on the one-bug repository: its task page names the fail-to-pass test and
    each patch's outcome on it; the command agents' logs, which no plugin reads, show as
    their end; and the page links nothing outside itself."""
    from bugbout import Bout

    Bout(bout_repo).run()
    html = (bout_repo / ".bugbout" / "report.html").read_text()
    hidden = re.search(r"<h3>The hidden tests</h3>\n(.*?)\n<h3>", html, re.S)
    assert hidden is not None
    table = hidden.group(1)
    names = re.findall(r"<th>(\w+)</th>", table.split("</thead>")[0])
    row = re.search(r"<tr><th><code>tests/test_core.py::test_even</code></th>(.*?)</tr>", table)
    assert row is not None, table
    shown = dict(zip(names, re.findall(r'<td class="\w+">([^<]*)</td>', row.group(1)), strict=True))
    scores = Store(bout_repo / ".bugbout").read("resolutions.json", ResolutionSet)
    assert scores is not None
    patches = next(iter(scores.root.values())).patches
    expected = {
        name: (outcome.value if outcome else "did not run")
        for name, resolution in patches.items()
        for outcome in [resolution.fail_to_pass.get("tests/test_core.py::test_even")]
    }
    assert shown == expected
    assert shown["good"] == "passed" and shown["empty"] in {"failed", "did not run"}
    assert "Fixed middle() for even-length input." in html  # good's stdout, embedded
    assert "something went wrong" in html  # broken's stderr
    links = re.findall(r'(?:href|src)="([^"]*)"', html)
    assert links and all(link.startswith("#") for link in links), links
    assert "file:" not in html and str(bout_repo) not in html
