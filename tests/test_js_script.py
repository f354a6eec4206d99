"""The variables a project's test script sets are its runs' (uuid's Jest of 2020-24:
``BABEL_ENV=commonjsNode node node_modules/.bin/jest test/unit/``, without which Babel
left its tests as ES modules Jest could not load)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bugbout.core.store.records import Outcome, RunStatus
from bugbout.plugins.test_runners.javascript import node_test, script
from test_js_runs import _run, _written

SEES = """import { it } from 'node:test';
import assert from 'node:assert';

it('sees the script s variables', () => {
  assert.equal(process.env.TINY_MODE, 'commonjs');
  assert.equal(process.env.NODE_ENV, 'test');
});
"""


def _manifest(test: str) -> str:
    return json.dumps(
        {"name": "tiny", "private": True, "type": "module", "scripts": {"test": test}}
    )


@pytest.mark.parametrize(
    ("test", "variables"),
    [
        ("BABEL_ENV=commonjsNode node --throw-deprecation node_modules/.bin/jest test/unit/",
         {"BABEL_ENV": "commonjsNode"}),
        ("npm run build && cross-env NODE_ENV=test 'DEBUG=a b' mocha",
         {"NODE_ENV": "test", "DEBUG": "a b"}),
        ("vitest run --mode=ci", {}),
        ("jest 'unclosed", {}),
    ],
)  # fmt: skip
def test_the_variables_a_test_script_sets(
    test: str, variables: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "package.json").write_text(_manifest(test))
    assert script.variables(tmp_path) == variables


@pytest.mark.slow
@pytest.mark.requires("js-runners")
def test_a_run_has_the_variables_its_test_script_sets(tmp_path: Path) -> None:
    files = {
        "package.json": _manifest("TINY_MODE=commonjs NODE_ENV=test node --test test/"),
        "src/core.js": "export const one = 1;\n",
        "test/env.test.js": SEES,
    }
    tree = _written(tmp_path / "tree", files)
    run = _run(node_test.NodeTest(), tree, tmp_path, ("test/env.test.js",))
    assert run.status == RunStatus.OK, run.detail
    assert run.outcomes == {"test/env.test.js::sees the script s variables": Outcome.PASSED}
