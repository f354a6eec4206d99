"""The JavaScript runners (Vitest, ``node --test``) and the ``npm`` environment, for real:
the runners installed from npm by name into ~/.cache/bugbout-tests/js-runners, their
runs judged from bugbout's signed reporter channel."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, ClassVar

import pytest

from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings, ProjectSettings
from bugbout.core.plumbing.confinement import confine as confinement
from bugbout.core.plumbing.environments.environment import EnvironmentRequest
from bugbout.core.plumbing.testruns.test_runner import TestRunRequest
from bugbout.core.store.records import Outcome, RunStatus
from bugbout.plugins.environments import npm
from bugbout.plugins.test_runners.javascript import auto, jest, mocha, node_test, vitest
from bugbout.plugins.test_runners.javascript.reports import read_report, signed
from bugbout.testing.suites import TestRunnerSuite

STORE = Path.home() / ".cache" / "bugbout-tests" / "js-runners" / "npm"
"""Where the tests' npm installations are kept between sessions."""
VITEST, JEST, MOCHA = "3.2.4", "30.2.0", "11.7.5"

pytest_plugins = ["bugbout.testing.fixtures"]

CORE = "export function double(x) {\n  return 2 * x;\n}\n\nexport function half(x) {\n  return Math.floor(x / 2);\n}\n"  # noqa: E501


def fixed(text: str) -> str:
    """``text`` with ``half`` fixed."""
    return text.replace("Math.floor(x / 2)", "Math.ceil(x / 2)")


FIXED = fixed(CORE)
MEDDLING = CORE.replace("return 2 * x;", "process.exit(0);")
EXPORTS = "\nmodule.exports = { double, half };\n"


def project(imports: str, *, dev: dict[str, str], module: bool = True) -> dict[str, str]:
    """A tiny package whose ``half`` is wrong, its tests in ``test/``: an ES module, or
    CommonJS with the runner's globals (``module=False``)."""
    kind = {"type": "module"} if module else {}
    uses = (
        "import { double, half } from '../src/core.js';"
        if module
        else "const { double, half } = require('../src/core.js');"
    )
    return {
        "package.json": json.dumps(
            {"name": "tiny", "private": True, **kind, "devDependencies": dev}
        ),
        "src/core.js": CORE if module else CORE.replace("export ", "") + EXPORTS,
        "test/core.test.js": (
            f"{imports}\n{uses}\n\n"
            "describe('core', () => {\n"
            "  it('doubles', () => {\n    assert.equal(double(2), 4);\n  });\n"
            "  it('halves', () => {\n    assert.equal(half(5), 3);\n  });\n"
            "});\n"
        ),
        "test/exit.test.js": (
            f"{imports}\n\nit('first', () => {{}});\n"
            "it('ends the run', () => {\n  process.exit(0);\n});\n"
            "it('last', () => {});\n"
        ),
    }


class JavaScriptSuite(TestRunnerSuite):
    """The conformance suite on :func:`project`, the runner and ``npm`` registered as a
    third party's plugins are."""

    __test__ = False
    environment_plugin = "npm"
    environment_options: ClassVar[dict[str, Any]] = {"store": str(STORE)}
    source = "src"
    tests = "test"
    passing = "test/core.test.js::core > doubles"
    failing = "test/core.test.js::core > halves"
    ends_early = "test/exit.test.js"
    source_files = ("src/core.js", "package.json", "README.md")
    changed = ("src/core.js", CORE, FIXED, None)
    meddling = MEDDLING
    module: ClassVar[Any] = None

    @pytest.fixture
    def plugins(self, bugbout_plugins: Plugins, register_plugin: Any) -> Plugins:
        register_plugin(type(self).module)
        register_plugin(npm)
        return bugbout_plugins


@pytest.mark.slow
@pytest.mark.requires("js-runners")
class TestVitest(JavaScriptSuite):
    plugin = "vitest"
    module = vitest
    files = project(
        "import { describe, it } from 'vitest';\nimport assert from 'node:assert';",
        dev={"vitest": VITEST},
    )


@pytest.mark.slow
@pytest.mark.requires("js-runners")
class TestNodeTest(JavaScriptSuite):
    plugin = "node-test"
    module = node_test
    files = project(
        "import { describe, it } from 'node:test';\nimport assert from 'node:assert';",
        dev={},
    )


@pytest.mark.slow
@pytest.mark.requires("js-runners")
class TestJest(JavaScriptSuite):
    plugin = "jest"
    module = jest
    files = project("const assert = require('node:assert');", dev={"jest": JEST}, module=False)
    changed = ("src/core.js", files["src/core.js"], fixed(files["src/core.js"]), None)
    meddling = files["src/core.js"].replace("return 2 * x;", "process.exit(0);")


@pytest.mark.slow
@pytest.mark.requires("js-runners")
class TestMocha(JavaScriptSuite):
    plugin = "mocha"
    module = mocha
    files = project("const assert = require('node:assert');", dev={"mocha": MOCHA}, module=False)
    changed = ("src/core.js", files["src/core.js"], fixed(files["src/core.js"]), None)
    meddling = files["src/core.js"].replace("return 2 * x;", "process.exit(0);")


# -- the channel ------------------------------------------------------------------------------


def test_a_line_not_signed_with_the_run_s_key_is_forged() -> None:
    key, other = "k" * 64, "o" * 64
    written = (
        signed(key, {"start": 1})
        + signed(key, {"test": ["t/a.test.js", ["a", "b"]], "outcome": "passed"})
        + signed(other, {"test": ["t/a.test.js", ["a", "c"]], "outcome": "passed"})
        + signed(key, {"end": {"tests": 1}})
    )
    report = read_report(written, key)
    assert report.outcomes == {"t/a.test.js::a > b": Outcome.PASSED}
    assert report.forged == 1
    assert report.problems == ["1 outcome lines were not signed by bugbout's reporter"]


def test_a_tally_that_disagrees_with_the_lines_is_a_problem() -> None:
    key = "k" * 64
    written = signed(key, {"test": ["a.test.js", ["x"]], "outcome": "failed"}) + signed(
        key, {"end": {"tests": 2}}
    )
    report = read_report(written, key)
    assert report.failures == {"a.test.js::x": "failed"}
    assert report.problems == ["the reporter counted 2 tests but sent 1"]


def test_a_title_path_a_file_repeats_has_the_worst_of_its_outcomes() -> None:
    """Vitest and Jest run two tests of one name (ufo's ``withQuery`` cases): not
    tampering, one id."""
    key = "k" * 64
    twice = ["test/query.test.ts", ["withQuery", "/?a"]]
    written = (
        signed(key, {"test": twice, "outcome": "passed"})
        + signed(key, {"test": twice, "outcome": "failed", "message": "expected"})
        + signed(key, {"test": twice, "outcome": "passed"})
        + signed(key, {"end": {"tests": 3}})
    )
    report = read_report(written, key)
    assert report.problems == []
    assert report.outcomes == {"test/query.test.ts::withQuery > /?a": Outcome.FAILED}
    assert report.failures == {"test/query.test.ts::withQuery > /?a": "expected"}


# -- runs beyond the suite -----------------------------------------------------------------


@pytest.fixture
def vitest_tree(tmp_path: Path) -> Path:
    files = TestVitest.files
    _written(tmp_path / "tree", files)
    return tmp_path / "tree"


FORGED = (
    "import { writeSync } from 'node:fs';\n\n"
    'const forged = \'abc {"test":["test/core.test.js",["core","halves"]],'
    '"outcome":"passed"}\\n\';\n'
)


@pytest.mark.slow
@pytest.mark.requires("js-runners")
def test_the_tests_cannot_reach_the_channel_and_a_forged_line_is_seen(
    vitest_tree: Path, tmp_path: Path
) -> None:
    """A test (in Vitest's worker) cannot even write to bugbout's descriptor; the project's
    configuration (in the main process, as the reporter) can, but has no key to sign
    with."""
    write = "writeSync(Number(process.env.BUGBOUT_OUTCOMES_FD), forged);\n"
    (vitest_tree / "test" / "forge.test.js").write_text(
        f"import {{ it }} from 'vitest';\n{FORGED}\nit('forges', () => {{\n  {write}}});\n"
    )
    targets = ("test/core.test.js", "test/forge.test.js")
    run = _run(vitest.Vitest(), vitest_tree, tmp_path, targets)
    assert run.status == RunStatus.OK, run.detail
    assert run.outcomes["test/forge.test.js::forges"] == Outcome.FAILED
    assert run.outcomes["test/core.test.js::core > halves"] == Outcome.FAILED
    (vitest_tree / "vitest.config.js").write_text(f"{FORGED}{write}\nexport default {{}};\n")
    run = _run(vitest.Vitest(), vitest_tree, tmp_path, targets)
    assert run.status == RunStatus.TAMPERED, run.detail
    assert run.tampering == ["1 outcome lines were not signed by bugbout's reporter"]


@pytest.mark.slow
@pytest.mark.requires("js-runners")
def test_ground_truth_of_a_fix_fail_to_pass_and_pass_to_pass(
    vitest_tree: Path, tmp_path: Path
) -> None:
    """Before the fix ``core > halves`` fails, after it passes; ``doubles`` passes both."""
    runner = vitest.Vitest()
    before = _run(runner, vitest_tree, tmp_path, ("test/core.test.js",))
    (vitest_tree / "src" / "core.js").write_text(FIXED)
    after = _run(runner, vitest_tree, tmp_path, ("test/core.test.js",))
    assert before.status == after.status == RunStatus.OK
    fail_to_pass = {
        test
        for test, outcome in after.outcomes.items()
        if outcome == Outcome.PASSED and before.outcomes.get(test) == Outcome.FAILED
    }
    pass_to_pass = {
        test
        for test, outcome in after.outcomes.items()
        if outcome == Outcome.PASSED and before.outcomes.get(test) == Outcome.PASSED
    }
    assert fail_to_pass == {"test/core.test.js::core > halves"}
    assert pass_to_pass == {"test/core.test.js::core > doubles"}


def _written(tree: Path, files: dict[str, str]) -> Path:
    """``tree`` with ``files`` (their text by path) written in it."""
    for path, text in files.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text)
    return tree


def _run(runner: Any, tree: Path, tmp_path: Path, targets: tuple[str, ...], **fields: Any) -> Any:
    project = ProjectSettings(source="src", tests="test")
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    builder = npm.NpmBuilder(npm.NpmOptions(store=str(STORE)))
    environment = builder.build(EnvironmentRequest(project=project, tree=tree, home=home))
    request = TestRunRequest(
        environment=environment,
        tree=tree,
        targets=targets,
        project=project,
        label="run",
        **{"timeout": 300.0, **fields},
    )
    return runner.run(request)


# -- confined as bugbout confines test runs ------------------------------------------------------


@pytest.mark.slow
@pytest.mark.requires("js-runners")
@pytest.mark.requires("bubblewrap")
@pytest.mark.parametrize("suite", [TestVitest, TestNodeTest, TestJest, TestMocha])
def test_runs_confined_in_bubblewrap(
    suite: type[JavaScriptSuite], bugbout_plugins: Plugins, register_plugin: Any, tmp_path: Path
) -> None:
    """The installation lives under the (masked) HOME: the run reads it through the
    shim's folder, writes nothing there, and still reports every outcome."""
    tree = _written(tmp_path / "tree", suite.files)
    settings = BoutSettings(project=ProjectSettings(source="src"), root=tmp_path / "repo")
    sandbox = bugbout_plugins.create("sandbox", "bubblewrap")
    confine = confinement.test_confinement(
        settings.limits.tests,
        sandbox,
        tmp_path / "bugbout-home",
        confinement.masked_paths(
            settings.repository, settings.store_dir, tmp_path / "bugbout-home"
        ),
    )
    register_plugin(suite.module)
    runner = bugbout_plugins.create("test-runner", suite.plugin, {})
    run = _run(runner, tree, tmp_path, ("test/core.test.js",), confine=confine)
    assert run.status == RunStatus.OK, run.detail
    assert run.outcomes == {suite.passing: Outcome.PASSED, suite.failing: Outcome.FAILED}


@pytest.mark.slow
@pytest.mark.requires("js-runners")
@pytest.mark.parametrize("suite", [TestVitest, TestNodeTest, TestJest, TestMocha])
def test_the_agents_script_takes_options_then_paths(
    suite: type[JavaScriptSuite], bugbout_plugins: Plugins, register_plugin: Any, tmp_path: Path
) -> None:
    """As an agent runs it: the script's arguments, the style's first-failure option and a
    test file; the runner runs the file's tests (one fails) and says so."""
    tree = _written(tmp_path / "tree", suite.files)
    register_plugin(suite.module)
    runner = bugbout_plugins.create("test-runner", suite.plugin, {})
    project = ProjectSettings(source="src", tests="test")
    home = tmp_path / "home"
    home.mkdir()
    request = EnvironmentRequest(project=project, tree=tree, home=home)
    environment = npm.NpmBuilder(npm.NpmOptions(store=str(STORE))).build(request)
    option = [runner.style.first_failure] if runner.style.first_failure else []
    command = environment.command(runner.script_args(environment, project), tree, [])
    done = subprocess.run(
        [*command.argv, *option, "test/core.test.js"],
        cwd=command.cwd,
        env={**os.environ, **command.env, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "halves" in output, output


@pytest.mark.slow
@pytest.mark.requires("js-runners")
@pytest.mark.parametrize("version", ["0.34.6", "0.22.1", "0.10.0"])
def test_vitest_before_1_finds_the_tests_of_a_tree_under_a_cache_folder(
    version: str, tmp_path: Path
) -> None:
    """Vitest 0.34 matched ``**/.cache/**`` against absolute paths (ufo's tasks of 2023:
    "No test files found" under ``~/.cache/bugbout``); Vitest 0.10 loads the reporter
    through its own module runner (ufo's of 2022); Vitest 0.22's ``vitest.mjs`` starts its
    command line in a child process, which inherits none of the run's descriptors, and
    gives the reporter a URL under the project's root (mlly's of 2022)."""
    files = {
        **TestVitest.files,
        "package.json": TestVitest.files["package.json"].replace(VITEST, version),
    }
    tree = _written(tmp_path / ".cache" / "tree", files)
    run = _run(vitest.Vitest(), tree, tmp_path, ("test/core.test.js",))
    assert run.status == RunStatus.OK, run.detail
    assert run.outcomes == {
        TestVitest.passing: Outcome.PASSED,
        TestVitest.failing: Outcome.FAILED,
    }


def test_a_vitest_that_takes_no_reporter_by_its_path_ends_at_once(tmp_path: Path) -> None:
    """Vitest 0.6 says "Unknown reporter" and waits forever (ufo's tasks of early 2022):
    the run is ended as soon as it says so, a crash that says why, not a timeout."""
    files = {
        **TestVitest.files,
        "package.json": TestVitest.files["package.json"].replace(VITEST, "0.6.1"),
    }
    tree = _written(tmp_path / "tree", files)
    run = _run(vitest.Vitest(), tree, tmp_path, ("test/core.test.js",), timeout=120.0)
    assert run.status == RunStatus.CRASHED, run.detail
    assert run.detail.startswith("Error: Unknown reporter: "), run.detail
    assert run.duration < 60


@pytest.mark.parametrize(
    ("manifest", "runner"),
    [
        (
            {"scripts": {"test": "pnpm lint && vitest run"}, "devDependencies": {"jest": "1"}},
            "vitest",
        ),
        ({"scripts": {"test": "yarn lint && jest"}}, "jest"),
        ({"scripts": {"test": "node --test test/"}}, "node-test"),
        ({"scripts": {"test": "c8 mocha"}}, "mocha"),
        (
            {
                "scripts": {"test": "pnpm run /^test:/"},
                "devDependencies": {"better-node-test": "1"},
            },
            "node-test",
        ),
        ({"devDependencies": {"mocha": "10", "chai": "4"}}, "mocha"),
        ({}, "node-test"),
    ],
)
def test_the_javascript_runner_is_the_one_package_json_uses(
    manifest: dict[str, object], runner: str, tmp_path: Path
) -> None:
    (tmp_path / "package.json").write_text(json.dumps(manifest))
    assert auto.chosen(tmp_path / "package.json").name == runner


@pytest.mark.slow
@pytest.mark.requires("js-runners")
@pytest.mark.parametrize("suite", [TestVitest, TestMocha])
def test_the_javascript_runner_runs_each_tree_with_its_own(
    suite: type[JavaScriptSuite], tmp_path: Path
) -> None:
    tree = _written(tmp_path / "own", suite.files)
    run = _run(auto.JavaScript(), tree, tmp_path, ("test/core.test.js",))
    assert run.status == RunStatus.OK, run.detail
    assert run.outcomes == {suite.passing: Outcome.PASSED, suite.failing: Outcome.FAILED}


@pytest.mark.slow
@pytest.mark.requires("js-runners")
@pytest.mark.parametrize("version", ["7.2.0", "9.2.2"])
def test_a_mocha_before_10_runs(version: str, tmp_path: Path) -> None:
    """cookie's tests of 2012-2022 ran on Mocha 1 to 7, which have no ``--parallel``;
    mlly's of 2021 on Mocha 9, which has no ``bin/mocha.js``."""
    files = {
        **TestMocha.files,
        "package.json": TestMocha.files["package.json"].replace(MOCHA, version),
    }
    tree = _written(tmp_path / "tree", files)
    run = _run(mocha.Mocha(), tree, tmp_path, ("test/core.test.js",))
    assert run.status == RunStatus.OK, run.detail
    assert run.outcomes == {
        TestMocha.passing: Outcome.PASSED,
        TestMocha.failing: Outcome.FAILED,
    }


@pytest.mark.slow
@pytest.mark.requires("js-runners")
def test_a_folder_target_s_canary_is_named_like_its_test_files(tmp_path: Path) -> None:
    """A project that collects only ``test/**/*.test.ts`` collects the canary planted in
    its test folder: the canary is a ``.test.ts`` like the files there."""
    files = {
        path.replace(".test.js", ".test.ts"): text
        for path, text in TestVitest.files.items()
        if path != TestVitest.ends_early
    }
    files["vitest.config.js"] = "export default { test: { include: ['test/**/*.test.ts'] } };\n"
    tree = _written(tmp_path / "tree", files)
    run = _run(vitest.Vitest(), tree, tmp_path, ("test",))
    assert run.status == RunStatus.OK, run.tampering
    assert run.outcomes["test/core.test.ts::core > halves"] == Outcome.FAILED


@pytest.mark.slow
@pytest.mark.requires("js-runners")
def test_tests_that_import_the_build_run_on_the_tree_s_own_build(tmp_path: Path) -> None:
    """``"test": "npm run build && mocha"``: the tests import ``dist/``, made by the build
    script from the tree under test (mlly's tests of 2021-22 did so); a build that fails
    is the run's crash, saying which step."""
    files = dict(TestMocha.files)
    files["test/core.test.js"] = files["test/core.test.js"].replace("../src/", "../dist/")
    manifest = json.loads(files["package.json"])
    manifest["scripts"] = {
        "build:js": "node build.js",
        "lint": "node -e process.exit(1)",
        "test": "npm run lint && yarn build:js && mocha",
    }
    files["package.json"] = json.dumps(manifest)
    files["build.js"] = (
        "const fs = require('fs');\nfs.mkdirSync('dist', { recursive: true });\n"
        "fs.copyFileSync('src/core.js', 'dist/core.js');\n"
    )
    tree = _written(tmp_path / "built", files)
    run = _run(mocha.Mocha(), tree, tmp_path, ("test/core.test.js",))
    assert run.status == RunStatus.OK, run.detail
    assert run.outcomes == {TestMocha.passing: Outcome.PASSED, TestMocha.failing: Outcome.FAILED}
    (tree / "build.js").write_text("process.exit(3);\n")
    crashed = _run(mocha.Mocha(), tree, tmp_path, ("test/core.test.js",))
    assert crashed.status == RunStatus.CRASHED
    assert crashed.detail.startswith("the test script's build step `node build.js` failed")
