"""Mining JavaScript and TypeScript history: test files by their names, the package's
source by its layout, and the ``git-history`` miner asking the project's test runner
(here a runner installed as a third party would, that knows test files and titles as
the JavaScript runners do) on the real histories of Vitest and Jest projects."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bugbout.core.contract.settings import PluginChoice, ProjectSettings
from bugbout.core.mine.mining import MiningRequest
from bugbout.core.plumbing.trees.patch import diff_trees
from bugbout.core.store.race_records import ChangeArea
from bugbout.plugins.miners.git_history import GitHistoryMiner, GitHistoryOptions
from bugbout.plugins.test_runners.javascript.files import (
    SOURCE_SUFFIXES,
    is_test_file,
    source_roots,
)
from plugin_sites import install_distribution
from test_js_titles import MIRRORS

TITLES_RUNNER = """
from bugbout.plugins.test_runners.javascript import files, titles
from bugbout.test_runners import NoOptions, TestRunnerPlugin, hookimpl


class Titles:
    '''What mining asks of a JavaScript runner: its test files and their tests.'''

    def is_test_file(self, path):
        return files.is_test_file(path)

    def defined_tests(self, path, source):
        return titles.defined_tests(path, source)


@hookimpl
def bugbout_test_runners():
    yield TestRunnerPlugin(
        name="js-titles", factory=lambda options: Titles(), options=NoOptions,
        description="JavaScript test files and titles",
    )
"""


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("test/sum.test.ts", True),
        ("src/sum.spec.js", True),
        ("packages/core/src/sum.test.tsx", True),
        ("src/__tests__/sum.mjs", True),
        ("test/parse.js", True),
        ("tests/unit/helpers.cts", True),
        ("lib/sum.e2e.spec.mts", True),
        ("test.js", True),
        ("packages/a/test.mjs", True),
        ("src/sum.ts", False),
        ("src/testing.ts", False),
        ("src/contest.js", False),
        ("test/index.d.ts", False),
        ("test/fixture/data.json", False),
        ("test/fixtures/project/index.js", False),
        ("src/__tests__/__mocks__/fs.ts", False),
        ("src/__fixtures__/input.spec.ts", True),
        ("node_modules/pkg/test/a.test.js", False),
        ("dist/sum.test.js", False),
        ("tests/test_sum.py", False),
    ],
)
def test_test_files_by_name_and_folder(path: str, expected: bool) -> None:
    assert is_test_file(path) is expected


def mirror(repository: str) -> Path:
    found = MIRRORS / repository.replace("/", "+") / "repo"
    if not found.is_dir():
        pytest.fail(f"no mirror at {found}: fetch github:{repository}")
    return found


def test_source_is_src_or_lib_else_the_root_modules() -> None:
    def layout(paths: list[str], manifest: dict[str, object] | None = None) -> tuple[str, ...]:
        files = {"package.json": json.dumps(manifest or {}).encode()}
        return source_roots([*paths, "package.json"], files.get)

    assert layout(["src/index.ts", "src/index.spec.ts", "lib/old.js"]) == ("src",)
    assert layout(["lib/index.js", "test/index.js", "src/readme.md"]) == ("lib",)
    assert layout(
        ["index.js", "index.browser.js", "test/index.test.js", "test/fixtures/a.js", "x.config.ts"]
    ) == ("index", "index.browser")
    paths = subprocess.run(
        ["git", "--git-dir", str(mirror("ai/nanoid")), "ls-tree", "-r", "--name-only", "07a39d62"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert source_roots(paths, lambda path: None) == (
        "bin", "index", "index.browser", "nanoid", "non-secure", "url-alphabet",
    )  # fmt: skip


def test_workspaces_of_a_monorepo() -> None:
    paths = [
        "package.json",
        "packages/core/package.json",
        "packages/core/src/index.ts",
        "packages/cli/package.json",
        "packages/cli/lib/main.js",
        "packages/legacy/package.json",
        "packages/legacy/src/index.js",
        "docs/package.json",
        "docs/src/site.ts",
    ]
    yarn = {"workspaces": {"packages": ["packages/*", "!packages/legacy"]}}
    files = {"package.json": json.dumps(yarn).encode()}
    assert source_roots(paths, files.get) == ("packages/cli/lib", "packages/core/src")
    pnpm = {"package.json": b"{}", "pnpm-workspace.yaml": b"packages:\n  - 'packages/**'\n"}
    assert source_roots(paths, pnpm.get) == (
        "packages/cli/lib",
        "packages/core/src",
        "packages/legacy/src",
    )


def test_a_patch_s_test_files_are_the_runner_s(tmp_path: Path) -> None:
    base, work = tmp_path / "base", tmp_path / "work"
    for tree in (base, work):
        (tree / "src").mkdir(parents=True)
        (tree / "src" / "sum.ts").write_text("export const sum = (a, b) => a + b;\n")
    (work / "src" / "sum.ts").write_text("export const sum = (a, b) => a + b + 0;\n")
    (work / "src" / "sum.test.ts").write_text('it("adds", () => {});\n')
    patch = diff_trees(base, work, source="src", tests="test", is_test_file=is_test_file)
    areas = {change.path: change.area for change in patch.files}
    assert areas == {"src/sum.test.ts": ChangeArea.TEST, "src/sum.ts": ChangeArea.SOURCE}
    assert "sum.test.ts" in patch.tests and "sum.test.ts" not in patch.source


def test_a_request_names_its_runner_only_when_it_is_not_pytest() -> None:
    project = ProjectSettings(source="src")
    default = MiningRequest(repository=Path("/r"), project=project)
    assert "test_runner" not in default.model_dump()  # stored minings keep their keys
    chosen = MiningRequest(
        repository=Path("/r"), project=project, test_runner=PluginChoice(name="vitest")
    )
    assert chosen.model_dump()["test_runner"] == {"name": "vitest"}


@pytest.fixture
def js_titles(site: Path) -> PluginChoice:
    """A runner of JavaScript test files and titles, installed as a third party's."""
    install_distribution(
        site, "bugbout-js-titles", "1.0", {"js-titles": "bugbout_js_titles"},
        {"bugbout_js_titles": TITLES_RUNNER},
    )  # fmt: skip
    return PluginChoice(name="js-titles")


def mine(repository: str, ref: str, since: str, source: tuple[str, ...], runner: PluginChoice):
    request = MiningRequest(
        repository=mirror(repository),
        project=ProjectSettings(source=source, tests="test"),
        test_runner=runner,
    )
    options = GitHistoryOptions(
        ref=ref,
        since=since,
        limit=None,
        source_suffixes=SOURCE_SUFFIXES,
        tiers=("issue-fix", "fix"),
    )
    return GitHistoryMiner(options).mine(request)


def test_mining_a_vitest_history_finds_the_fixes_that_add_tests(js_titles: PluginChoice) -> None:
    found = mine("pillarjs/path-to-regexp", "cbf30259", "2024-01-01", ("src",), js_titles)
    tasks = {task.sha[:8]: task for task in found.tasks}
    fix = tasks["9a788793"]
    assert (fix.tier, fix.issue.number) == ("issue-fix", 434)
    assert (fix.source_files, fix.test_files) == (["src/index.ts"], ["src/index.spec.ts"])
    parse_errors = "src/index.spec.ts::path-to-regexp > parse errors > "
    assert f"{parse_errors}should throw on eol backslash" in fix.added_tests
    assert f"{parse_errors}should throw on eol backslash in quoted param" in fix.added_tests
    assert len(fix.added_tests) == 7
    assert found.excluded["not-a-fix"] > found.excluded["no-test-added"] > 0


def test_mining_a_jest_history_names_top_level_tests_by_title(js_titles: PluginChoice) -> None:
    found = mine("moment/luxon", "b6b9d037", "2023-11-01", ("src",), js_titles)
    tasks = {task.sha[:8]: task for task in found.tasks}
    fix = tasks["20139a30"]
    assert fix.tier == "fix"
    assert fix.source_files == ["src/datetime.js"]
    assert fix.added_tests == [
        "test/datetime/create.test.js::DateTime.local works even after time zone change"
    ]
    assert tasks["11ad0111"].added_tests == [
        "test/datetime/invalid.test.js::throwOnInvalid throws if year is too big"
    ]
    # pytest's rules find no test in the same history: every fix there adds none
    python = mine("moment/luxon", "b6b9d037", "2023-11-01", ("src",), PluginChoice(name="pytest"))
    assert not python.tasks
    assert python.excluded["no-test-added"] >= len(found.tasks)


def test_mining_a_node_test_history_names_each_pass_of_a_loop(js_titles: PluginChoice) -> None:
    source = ("index", "index.browser", "non-secure", "url-alphabet")
    found = mine("ai/nanoid", "07a39d62", "2024-11-01", source, js_titles)
    fix = {task.sha[:8]: task for task in found.tasks}["0daa00f6"]
    assert fix.issue.number == 508
    # as node --test reported them failing before the fix and passing after, in a real run
    pollution = "customAlphabet / avoids pool pollution, infinite loop"
    assert {
        f"test/index.test.js::node > node / {pollution}",
        f"test/index.test.js::browser > browser / {pollution}",
    } < set(fix.added_tests)
