"""The plugin docs against the code: every hook's signature is documented, every link
leads somewhere, and every example plugin compiles (the judge and reporter examples,
and a few others, are registered and run)."""

from __future__ import annotations

import inspect
import os
import re
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from bugbout.core.audit.auditing import AuditRequest
from bugbout.core.contract import hookspecs
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.types import KINDS
from bugbout.core.judge.judging import JudgeContext
from bugbout.core.mine.issues import IssueRequest
from bugbout.core.report.report import AgentRow, Report
from bugbout.core.store.race_records import Attempt, Audit, Patch
from bugbout.core.store.records import Oracle, Task, TaskIssue, TaskSet, TestRun
from bugbout.core.store.verdict_records import SUITE, UNFIXED, Matrix, Verdict
from runners import pytest_runner

DOCS = Path(__file__).resolve().parent.parent / "docs"
OVERVIEW = DOCS / "plugins.md"
KIND_PAGES = {
    "miner": "miners",
    "issue-source": "issue-sources",
    "environment": "environments",
    "test-runner": "test-runners",
    "agent": "agents",
    "sandbox": "sandboxes",
    "executor": "executors",
    "assignment": "assignments",
    "judge": "judges",
    "auditor": "auditors",
    "reporter": "reporters",
}
"""Each plugin kind's page, ``docs/plugins/<page>.md``."""
LIFECYCLE_PAGE = "lifecycle"
PAGES = [OVERVIEW] + [
    DOCS / "plugins" / f"{page}.md" for page in [*KIND_PAGES.values(), LIFECYCLE_PAGE]
]
"""The overview, then every kind page and the lifecycle page."""

FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<body>.*?)^```\s*$", re.M | re.S)
LINK = re.compile(r"\[[^\]]*\]\((?P<target>[^)\s]+)\)")


# -- what the docs hold -----------------------------------------------------------------------


def hooks() -> dict[str, Any]:
    """Every hook specification in :mod:`bugbout.core.contract.hookspecs`, by name."""
    return {
        name: value
        for name, value in vars(hookspecs).items()
        if name.startswith("bugbout_") and inspect.isfunction(value)
    }


def page_of(hook: str) -> Path:
    """The kind page that documents ``hook``."""
    for kind, spec in KINDS.items():
        if spec.hook == hook:
            return DOCS / "plugins" / f"{KIND_PAGES[kind]}.md"
    return DOCS / "plugins" / f"{LIFECYCLE_PAGE}.md"


def signature(hook: str) -> str:
    """```bugbout_after_mine(tasks)```: the name and the parameter names."""
    parameters = inspect.signature(hooks()[hook]).parameters
    return f"`{hook}({', '.join(parameters)})`"


def code_blocks(path: Path, language: str = "python") -> list[str]:
    return [
        match["body"]
        for match in FENCE.finditer(path.read_text(encoding="utf-8"))
        if match["info"].strip() == language
    ]


def examples(path: Path) -> list[str]:
    """The example plugins on a page: Python blocks that define a hook implementation."""
    return [block for block in code_blocks(path) if "@hookimpl" in block]


def without_code(text: str) -> str:
    return FENCE.sub("", text)


def anchors(path: Path) -> set[str]:
    """The anchors of a page's headings, as GitHub makes them."""
    found = set()
    for line in without_code(path.read_text(encoding="utf-8")).splitlines():
        if line.startswith("#"):
            heading = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", heading).replace(" ", "-"))
    return found


def links(path: Path) -> list[str]:
    return [
        match["target"]
        for match in LINK.finditer(without_code(path.read_text(encoding="utf-8")))
        if not re.match(r"[a-z]+:", match["target"])
    ]


@contextmanager
def example_module(source: str, name: str) -> Iterator[types.ModuleType]:
    """``source`` executed as the module ``name`` (in ``sys.modules`` meanwhile)."""
    module = types.ModuleType(name)
    sys.modules[name] = module
    try:
        exec(compile(source, f"<{name}>", "exec"), module.__dict__)
        yield module
    finally:
        sys.modules.pop(name, None)


def registered(plugins: Plugins, source: str, name: str, kind: str) -> Iterator[tuple[str, Any]]:
    """Register the example ``source`` and yield each of its plugins of ``kind``, built."""
    with example_module(source, name) as module:
        assert plugins.register(module, name=name) == name
        plugins.check_pending()
        mine = [n for n, plugin in plugins.of_kind(kind).items() if plugin.source == name]
        assert plugins.problems == []
        assert mine, f"the example registers no {kind}"
        for plugin_name in mine:
            yield plugin_name, plugins.create(kind, plugin_name)


# -- signatures -------------------------------------------------------------------------------


def test_the_hooks_are_found() -> None:
    names = set(hooks())
    assert {spec.hook for spec in KINDS.values()} <= names
    assert {"bugbout_after_mine", "bugbout_after_oracle"} <= names
    for name, hook in hooks().items():
        assert hasattr(hook, "bugbout_spec"), f"{name} is not marked @hookspec"


@pytest.mark.parametrize("hook", sorted(hooks()))
def test_signature_is_documented(hook: str) -> None:
    expected = signature(hook)
    page = page_of(hook)
    lines = {
        line.strip()
        for path in (OVERVIEW, page)
        if path.exists()
        for line in without_code(path.read_text(encoding="utf-8")).splitlines()
    }
    assert expected in lines, (
        f"{expected} is not on a line of its own in {OVERVIEW.name} or {page.relative_to(DOCS)}"
    )


# -- links ------------------------------------------------------------------------------------


def test_every_kind_page_is_linked_from_the_overview() -> None:
    linked = {
        (OVERVIEW.parent / target.split("#", 1)[0]).resolve()
        for target in links(OVERVIEW)
        if target.split("#", 1)[0]
    }
    for page in PAGES[1:]:
        assert page.resolve() in linked, f"{OVERVIEW.name} does not link {page.name}"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_links_lead_to_existing_pages_and_headings(page: Path) -> None:
    assert page.exists(), f"{page.relative_to(DOCS)} is missing"
    for target in links(page):
        path_part, _, anchor = target.partition("#")
        destination = (page.parent / path_part).resolve() if path_part else page
        assert destination.exists(), f"{page.name} links {target}, which does not exist"
        if anchor and destination.suffix == ".md":
            assert anchor in anchors(destination), (
                f"{page.name} links {target}, but {destination.name} has no such heading"
            )


# -- examples ---------------------------------------------------------------------------------


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_python_blocks_compile(page: Path) -> None:
    for index, block in enumerate(code_blocks(page)):
        compile(block, f"{page.name}[{index}]", "exec")


@pytest.mark.parametrize("page", PAGES[1:], ids=lambda page: page.name)
def test_every_kind_page_has_an_example_plugin(page: Path) -> None:
    assert examples(page), f"{page.name} has no example plugin (a python block with @hookimpl)"


REPRO = "tests/test_bb_prober__repro.py::test_bug"
KEPT = "tests/test_core.py::test_kept"


def small_matrix() -> Matrix:
    """A patch that passes an examiner's reproduction and keeps the suite, one that does
    not reproduce, and one that breaks a project test the others keep."""
    return Matrix.model_validate(
        {
            "task_id": "t1",
            "patches": [UNFIXED, "careful", "idle", "careless"],
            "authors": {"prober": [REPRO], SUITE: [KEPT]},
            "outcomes": {
                UNFIXED: {REPRO: "failed", KEPT: "passed"},
                "careful": {REPRO: "passed", KEPT: "passed"},
                "idle": {REPRO: "failed", KEPT: "passed"},
                "careless": {REPRO: "passed", KEPT: "failed"},
            },
        }
    )


def test_judge_examples_register_and_judge(plugins: Plugins) -> None:
    for index, source in enumerate(examples(DOCS / "plugins" / "judges.md")):
        for name, judge in registered(plugins, source, f"docs_judge_{index}", "judge"):
            matrix = small_matrix()
            context = JudgeContext(task_id="t1", examiners={"prober": "reproduce"})
            verdict = judge.judge(matrix, context)
            assert isinstance(verdict, Verdict)
            assert (verdict.task_id, verdict.policy) == ("t1", name)
            assert verdict.pick == "careful", verdict.reason
            assert matrix == small_matrix()


def test_reporter_examples_register_and_render(plugins: Plugins) -> None:
    report = Report(
        contestants=["fixer", "breaker"],
        agents=[
            AgentRow(contestant="fixer", agent="codex", scored=4, resolved=3, resolve_rate=0.75),
            AgentRow(contestant="breaker", agent="claude-code", scored=0),
        ],
    )
    for index, source in enumerate(examples(DOCS / "plugins" / "reporters.md")):
        for name, reporter in registered(plugins, source, f"docs_reporter_{index}", "reporter"):
            assert reporter.name == name
            assert reporter.filename is None or os.path.basename(reporter.filename) == (
                reporter.filename
            )
            text = reporter.render(report)
            assert isinstance(text, str)
            assert "fixer" in text and "breaker" in text
            assert isinstance(reporter.render(Report()), str)  # an empty report renders


def test_reporter_example_writes_what_the_page_says(plugins: Plugins) -> None:
    (source,) = examples(DOCS / "plugins" / "reporters.md")
    ((_, reporter),) = registered(plugins, source, "docs_csv", "reporter")
    report = Report(
        agents=[
            AgentRow(contestant="fixer", agent="codex", scored=4, resolved=3, resolve_rate=0.75)
        ]
    )
    assert reporter.render(report).splitlines() == [
        "contestant,agent,model,scored,resolved,resolve_rate,tokens",
        "fixer,codex,,4,3,0.7500,0",
    ]


def test_auditor_example_registers_and_audits(plugins: Plugins) -> None:
    flaky, must = "tests/test_net.py::test_fetch", "tests/test_core.py::test_fix"
    task = Task(
        id="t1", sha="b" * 40, parent="a" * 40, date="2024-01-01T00:00:00+00:00",
        title="Fix it (#1)", issue=TaskIssue(number=1), source_files=["src/p/m.py"],
        test_files=["tests/test_core.py"],
    )  # fmt: skip
    patched = Attempt(
        task_id="t1", contestant="fixer", key="k", agent="codex", status="finished",
        patch=Patch(source="diff --git a/src/p/m.py b/src/p/m.py\n"),
    )  # fmt: skip
    request = AuditRequest(
        task=task,
        attempt=patched,
        must_pass=[must],
        oracle=Oracle(task_id="t1", status="ok", fail_to_pass=[must]),
        gate=TestRun.model_validate(
            {"label": "gate", "status": "ok", "outcomes": {must: "passed", flaky: "failed"}}
        ),
        baseline=TestRun.model_validate(
            {"label": "baseline", "status": "ok", "outcomes": {must: "failed", flaky: "passed"}}
        ),
    )
    (source,) = examples(DOCS / "plugins" / "auditors.md")
    ((name, strict_auditor),) = registered(plugins, source, "docs_auditor", "auditor")
    strict = strict_auditor.audit(request)
    quarantined = plugins.create("auditor", name, {"flaky": ["tests/test_net.py::*"]}).audit(
        request
    )
    assert isinstance(strict, Audit)
    assert (strict.auditor, strict.task_id, strict.contestant) == (name, "t1", "fixer")
    assert (strict.verdict.value, strict.regressions) == ("fixed-but-broke", [flaky])
    assert (quarantined.verdict.value, quarantined.route.value) == ("resolved", "none")
    assert quarantined.pre_existing == [flaky]


def test_lifecycle_example_runs(
    plugins: Plugins, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    (source,) = examples(DOCS / "plugins" / "lifecycle.md")
    with example_module(source, "docs_lifecycle") as module:
        plugins.register(module, name="docs_lifecycle")
        plugins.check_pending()
        plugins.notify("bugbout_after_mine", tasks=TaskSet(examined=6))
        oracle = Oracle(task_id="t1", status="ok", unstable=["tests/test_a.py::test_b"])
        plugins.notify("bugbout_after_oracle", oracle=oracle)
    assert plugins.problems == []
    assert capsys.readouterr().out == "0 tasks from 6 commits\n"
    assert (tmp_path / "flaky.txt").read_text() == "t1 tests/test_a.py::test_b\n"


def test_assignment_example_writes_a_prompt(plugins: Plugins) -> None:
    (source,) = examples(DOCS / "plugins" / "assignments.md")
    task = Task(
        id="t1", sha="b" * 40, parent="a" * 40, date="2024-01-01T00:00:00+00:00",
        title="Fix it (#1)", issue=TaskIssue(number=1), problem_statement="It crashes.",
        source_files=["src/p/m.py"], test_files=["tests/test_core.py"],
    )  # fmt: skip
    for name, assignment in registered(plugins, source, "docs_assignment", "assignment"):
        style = pytest_runner().style
        prompt = assignment.prompt(task, tests="tests", test_command="run-tests", style=style)
        assert "It crashes." in prompt and "hypothesis" in prompt
        assert assignment.name == name
        assert assignment.must_fail_on_base() is False


def test_issue_source_example_reads_notes(plugins: Plugins, tmp_path: Path) -> None:
    (tmp_path / "issues").mkdir()
    (tmp_path / "issues" / "7.md").write_text("# Crash on empty input\n\nIt crashes.\n")
    (source,) = examples(DOCS / "plugins" / "issue-sources.md")
    for _, issues in registered(plugins, source, "docs_issues", "issue-source"):
        issue = issues.fetch(IssueRequest(number=7, repository=tmp_path))
        assert (issue.title, issue.body) == ("Crash on empty input", "It crashes.")
        assert issues.fetch(IssueRequest(number=8, repository=tmp_path)) is None


ARCHITECTURE = DOCS / "architecture.md"
_DOTTED = re.compile(r"`(bugbout(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`")
_SOURCE_PATH = re.compile(r"`((?:src|tests)/[^`*<>]+?)`")


def _resolve(dotted: str) -> object:
    """The module or attribute a dotted name in the docs names (``a.b.C.method``)."""
    import importlib

    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:split]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[split:]:
            found = getattr(found, attribute)
        return found
    raise ModuleNotFoundError(dotted)


def test_every_code_reference_in_the_architecture_page_resolves() -> None:
    text = ARCHITECTURE.read_text()
    names = sorted({n for n in _DOTTED.findall(text) if not n.endswith((".yaml", ".json"))})
    paths = sorted(set(_SOURCE_PATH.findall(text)))
    assert len(names) > 30 and paths, "the page names its modules"
    unresolved = []
    for name in names:
        try:
            _resolve(name)
        except (ImportError, AttributeError):
            unresolved.append(name)
    assert not unresolved, f"names in docs/architecture.md that do not exist: {unresolved}"
    root = DOCS.parent
    missing = [path for path in paths if not (root / path).exists()]
    assert not missing, f"paths in docs/architecture.md that do not exist: {missing}"
