"""Tests a project runs compiled (uuid's of 2024-26: ``"pretest": "npm run build"``,
``"test": "node --test dist/esm/test"``, its tests written in TypeScript under
``src/test``): a run builds, runs each test file's compiled twin, and names its tests by
the file the project wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bugbout.core.store.records import Outcome, RunStatus
from bugbout.plugins.test_runners.javascript import compiled, mocha, node_test
from test_js_runs import CORE, MOCHA, _run, _written

BUILD = """const fs = require('fs');
fs.mkdirSync('dist/test', { recursive: true });
fs.copyFileSync('src/core.js', 'dist/core.js');
for (const name of fs.readdirSync('src/test')) {
  fs.copyFileSync(`src/test/${name}`, `dist/test/${name.replace(/\\.ts$/, '.js')}`);
}
"""
TESTS = (
    "{imports}\nimport {{ double, half }} from '../core.js';\n\n"
    "describe('core', () => {{\n"
    "  it('doubles', () => {{\n    assert.equal(double(2), 4);\n  }});\n"
    "  it('halves', () => {{\n    assert.equal(half(5), 3);\n  }});\n"
    "}});\n"
)
IMPORTS = {
    "node-test": "import { describe, it } from 'node:test';\nimport assert from 'node:assert';",
    "mocha": "import assert from 'node:assert';",
}


def _project(runner: str) -> dict[str, str]:
    """A package whose TypeScript tests run compiled into ``dist/test``."""
    test = {"node-test": "node --test dist/test", "mocha": "mocha 'dist/test/*.test.js'"}[runner]
    dev = {"mocha": MOCHA} if runner == "mocha" else {}
    manifest = {
        "name": "tiny",
        "private": True,
        "type": "module",
        "scripts": {"build": "node build.cjs", "pretest": "npm run build", "test": test},
        "devDependencies": dev,
    }
    return {
        "package.json": json.dumps(manifest),
        "build.cjs": BUILD,
        "src/core.js": CORE,
        "src/test/core.test.ts": TESTS.format(imports=IMPORTS[runner]),
    }


@pytest.mark.slow
@pytest.mark.requires("js-runners")
@pytest.mark.parametrize(
    ("runner", "made"), [("node-test", node_test.NodeTest), ("mocha", mocha.Mocha)]
)
def test_a_test_file_run_compiled_is_named_as_written(
    runner: str, made: type[node_test.NodeTest] | type[mocha.Mocha], tmp_path: Path
) -> None:
    tree = _written(tmp_path / "tree", _project(runner))
    run = _run(made(), tree, tmp_path, ("src/test/core.test.ts",))
    assert run.status == RunStatus.OK, run.detail
    assert run.outcomes == {
        "src/test/core.test.ts::core > doubles": Outcome.PASSED,
        "src/test/core.test.ts::core > halves": Outcome.FAILED,
    }
    assert (tree / "dist" / "test" / "core.test.js").is_file()


def test_the_twin_is_the_compiled_file_whose_path_ends_as_the_test_file_s(
    tmp_path: Path,
) -> None:
    manifest = {"scripts": {"test": "node --test --enable-source-maps dist-node/test/*.js"}}
    tree = _written(
        tmp_path,
        {
            "package.json": json.dumps(manifest),
            "src/test/v1.test.ts": "",
            "src/test/v4.test.ts": "",
            "src/v1.ts": "",
            "dist-node/test/v1.test.js": "",
            "dist-node/test/v1.test.js.map": "",
            "dist-node/v1.js": "",
            "test/unit/v1.test.js": "",
        },
    )
    assert compiled.script_folders(tree) == ("dist-node/test",)
    targets = ("src/test/v1.test.ts", "src/test/v4.test.ts", "dist-node/test/v1.test.js")
    assert compiled.twins(tree, targets) == {"dist-node/test/v1.test.js": "src/test/v1.test.ts"}
