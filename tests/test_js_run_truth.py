"""Ground truth of a small JavaScript fix, end to end: a git history mined, its fix's
tests run before and after it by Vitest and by ``node --test`` in ``npm`` environments,
fail-to-pass and pass-to-pass by the runners' own ids."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import BoutSettings, PluginChoice, ProjectSettings
from bugbout.core.pipeline import compute_oracles, mine_tasks
from bugbout.core.store.records import Oracle
from bugbout.core.store.store import Store
from bugbout.plugins.environments import npm
from bugbout.plugins.test_runners.javascript import node_test, vitest
from bugbout.testing import RepositoryBuilder
from history import dated_commit
from test_js_runs import STORE, VITEST

pytestmark = [pytest.mark.slow, pytest.mark.requires("js-runners")]

CORE = "export function half(x) {\n  return Math.floor(x / 2);\n}\n"
IMPORTS = {
    "vitest": "import { describe, it } from 'vitest';",
    "node-test": "import { describe, it } from 'node:test';",
}


def _tests(runner: str, *cases: str) -> str:
    bodies = {
        "rounds down even": "    assert.equal(half(4), 2);",
        "rounds up odd": "    assert.equal(half(5), 3);",
    }
    its = "".join(f"  it('{case}', () => {{\n{bodies[case]}\n  }});\n" for case in cases)
    return (
        f"{IMPORTS[runner]}\nimport assert from 'node:assert';\n"
        f"import {{ half }} from '../src/half.js';\n\ndescribe('half', () => {{\n{its}}});\n"
    )


@pytest.mark.parametrize(("runner", "module"), [("vitest", vitest), ("node-test", node_test)])
def test_a_fix_s_added_test_fails_before_and_passes_after(
    runner: str, module: ModuleType, tmp_path: Path
) -> None:
    dev = {"vitest": VITEST} if runner == "vitest" else {}
    manifest = {"name": "halves", "private": True, "type": "module", "devDependencies": dev}
    repo = RepositoryBuilder(tmp_path / "repo")
    dated_commit(
        repo,
        "Initial",
        {
            "package.json": json.dumps(manifest),
            "src/half.js": CORE,
            "test/half.test.js": _tests(runner, "rounds down even"),
        },
        "2026-11-02T10:00:00+00:00",
    )
    fix = dated_commit(
        repo,
        "Fix half of an odd number (#7)",
        {
            "src/half.js": CORE.replace("Math.floor", "Math.ceil"),
            "test/half.test.js": _tests(runner, "rounds down even", "rounds up odd"),
        },
        "2026-11-03T10:00:00+00:00",
    )
    oracle = fix_oracle(repo.path, runner, module, fix)
    assert oracle.status == "ok", oracle.reason
    assert oracle.fail_to_pass == ["test/half.test.js::half > rounds up odd"]
    assert oracle.pass_to_pass == ["test/half.test.js::half > rounds down even"]


def fix_oracle(repo: Path, runner: str, module: ModuleType, fix: str) -> Oracle:
    """The ground truth of commit ``fix`` of ``repo``, mined and computed with ``runner``
    (its plugin ``module``) in an ``npm`` environment."""
    settings = BoutSettings(
        project=ProjectSettings(source="src", tests="test"),
        issue_sources={"commit": {"issue-source": "commit"}},
        miner=PluginChoice(name="git-history", **{"source-suffixes": [".js"]}),
        environment=PluginChoice(name="npm", store=str(STORE)),
        test_runner=PluginChoice(name=runner),
        root=repo,
    )
    plugins = make_plugins(entry_points=False)
    plugins.register(module, name=runner)
    plugins.register(npm, name="npm")
    store = Store(settings.store_dir)
    oracles = compute_oracles(settings, plugins, store, mine_tasks(settings, plugins, store))
    [oracle] = [oracle for task, oracle in oracles.root.items() if task.startswith(fix[:12])]
    return oracle
