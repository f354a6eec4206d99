"""A test file that cannot load (it imports what only the fix adds) is a load error of
that file, its tests failing, for each JavaScript runner: never a crash of a run in which
the other files ran."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

import test_js_runs as js
from bugbout.core.store.records import Outcome, RunStatus
from bugbout.plugins.test_runners.javascript import jest, mocha, node_test, vitest
from bugbout.testing import RepositoryBuilder
from history import dated_commit
from test_js_run_truth import fix_oracle
from test_js_runs import MOCHA, JavaScriptSuite, _run, _written

pytestmark = [pytest.mark.slow, pytest.mark.requires("js-runners")]

NEW = "test/triple.test.js"
RUNNERS = {
    "vitest": vitest.Vitest,
    "node-test": node_test.NodeTest,
    "jest": jest.Jest,
    "mocha": mocha.Mocha,
}


def _unloadable(suite: type[JavaScriptSuite]) -> dict[str, str]:
    """The suite's project with a test file importing ``src/triple.js``, which is not there."""
    files = {path: text for path, text in suite.files.items() if path != suite.ends_early}
    core = files["test/core.test.js"]
    esm = "import { double, half } from '../src/core.js';"
    if esm in core:
        imported = core.replace(esm, f"{esm}\nimport {{ triple }} from '../src/triple.js';")
    else:
        cjs = "const { double, half } = require('../src/core.js');"
        imported = core.replace(cjs, f"{cjs}\nconst {{ triple }} = require('../src/triple.js');")
    files[NEW] = imported.replace("describe('core'", "describe('triple'")
    return files


@pytest.mark.parametrize(
    ("suite", "version"),
    [
        (js.TestVitest, ""),
        (js.TestNodeTest, ""),
        (js.TestJest, ""),
        (js.TestMocha, ""),
        (js.TestMocha, "9.2.2"),
    ],
)
def test_a_test_file_that_cannot_load_is_its_own_error(
    suite: type[JavaScriptSuite], version: str, tmp_path: Path
) -> None:
    """Mocha 8 and later said "Uncaught error outside test suite", naming no file (mlly's
    tests of 2021 on Mocha 9): the run crashed; ``node --test`` said only "test failed";
    Vitest named the file by the run's temporary path."""
    files = _unloadable(suite)
    if version:
        files["package.json"] = files["package.json"].replace(MOCHA, version)
    tree = _written(tmp_path / "tree", files)
    run = _run(RUNNERS[suite.plugin](), tree, tmp_path, ("test/core.test.js", NEW))
    assert run.status == RunStatus.OK, run.detail
    assert run.outcomes == {suite.passing: Outcome.PASSED, suite.failing: Outcome.FAILED}
    assert list(run.collection_errors) == [NEW]
    error = run.collection_errors[NEW]
    assert "triple.js" in error, error
    assert "/tmp" not in error and "bugbout-home" not in error, error


TRIPLE = "export function triple(x) {\n  return 3 * x;\n}\n"


@pytest.mark.parametrize(
    ("runner", "module"), [("mocha", mocha), ("node-test", node_test)], ids=["mocha", "node-test"]
)
def test_a_fix_s_test_file_that_imports_what_the_fix_adds_is_fail_to_pass(
    runner: str, module: ModuleType, tmp_path: Path
) -> None:
    """The fix adds ``src/triple.js`` and a test file that imports it: before the fix the
    file cannot load, so its tests fail; after it they pass."""
    suite = js.TestMocha if runner == "mocha" else js.TestNodeTest
    files = _unloadable(suite)
    triple = TRIPLE if runner == "node-test" else TRIPLE.replace("export ", "")
    triple += "" if runner == "node-test" else "\nmodule.exports = { triple };\n"
    tested = files[NEW].replace("assert.equal(half(5), 3);", "assert.equal(triple(2), 6);")
    repo = RepositoryBuilder(tmp_path / "repo")
    initial = {path: text for path, text in files.items() if path != NEW}
    dated_commit(repo, "Initial", initial, "2026-11-02T10:00:00+00:00")
    fix = dated_commit(
        repo,
        "Fix the missing triple (#7)",
        {"src/triple.js": triple, NEW: tested},
        "2026-11-03T10:00:00+00:00",
    )
    oracle = fix_oracle(repo.path, runner, module, fix)
    assert oracle.status == "ok", oracle.reason
    assert oracle.fail_to_pass == [f"{NEW}::triple > doubles", f"{NEW}::triple > halves"]
