"""``bugbout init`` on a JavaScript or TypeScript project: the runner, lockfile, tests and
source (as the package's layout had it over its history) found, and settings written that
choose the ``javascript`` runner and the ``npm`` environment."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from bugbout.config import compose_settings
from bugbout.onboarding.javascript import is_javascript
from bugbout.plugins.test_runners.javascript.project import folder_of_tests
from cli_runs import bugbout


def commit(repo: Path, message: str) -> None:
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, check=True)


def test_init_writes_a_javascript_projects_settings(tmp_path: Path) -> None:
    repo = tmp_path / "sums"
    (repo / "test").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    for setting in (("user.name", "M"), ("user.email", "m@example.com")):
        subprocess.run(["git", "config", *setting], cwd=repo, check=True)
    (repo / "index.js").write_text("exports.sum = (a, b) => a + b\n")
    (repo / "package.json").write_text(json.dumps({"scripts": {"test": "mocha"}}))
    (repo / "test" / "index.js").write_text("it('adds', () => {})\n")
    commit(repo, "one module")
    (repo / "src").mkdir()
    (repo / "index.js").rename(repo / "src" / "index.ts")
    (repo / "test" / "index.js").unlink()
    (repo / "test" / "sum.test.ts").write_text(
        "import { it } from 'vitest'\n"
        "it.each([[1, 2], [2, 3], [3, 4]])('adds %i', () => {})\n"
        "describe('sum', () => { it('is a function', () => {}) })\n"
    )
    manifest = {"scripts": {"test": "vitest run"}, "devDependencies": {"vitest": "^3.0.0"}}
    (repo / "package.json").write_text(json.dumps(manifest))
    (repo / "pnpm-lock.yaml").write_text("lockfileVersion: '9.0'\n")
    (repo / "vitest.config.ts").write_text("export default {}\n")
    commit(repo, "TypeScript, Vitest")
    for number in range(12):  # a history long enough to be sampled
        (repo / "README.md").write_text(f"release {number}\n")
        commit(repo, f"release {number}")

    result = bugbout("init", cwd=repo)

    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith(
        f"wrote {repo / 'bugbout.yaml'} (JavaScript/TypeScript, runner: vitest, lockfile: pnpm; "
        "source: src, index, tests: test;"
    )
    settings, _ = compose_settings(repo)
    assert settings.test_runner.name == "javascript"
    assert settings.environment.name == "npm"
    assert list(settings.project.source) == ["src", "index"]
    assert settings.project.tests == "test"
    assert settings.miner.options["source-suffixes"] == [
        ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx",
    ]  # fmt: skip
    config = (repo / "bugbout.yaml").read_text()
    assert "# each era's package.json's (now: vitest)" in config
    assert "(now: pnpm's lockfile)" in config
    given = bugbout("init", "--force", "--source", "src/", "--tests", "spec", cwd=repo)
    assert given.returncode == 0, given.stderr
    settings, _ = compose_settings(repo)
    assert (list(settings.project.source), settings.project.tests) == (["src"], "spec")
    assert settings.test_runner.name == "javascript"


def test_a_python_project_with_a_package_json_stays_python(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text("{}")
    assert is_javascript(tmp_path, ["index.js"])
    assert not is_javascript(tmp_path, ["mypkg/__init__.py", "index.js"])
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert not is_javascript(tmp_path, ["index.js"])
    (tmp_path / "package.json").unlink()
    (tmp_path / "pyproject.toml").unlink()
    assert not is_javascript(tmp_path, ["index.js"])


def test_the_tests_folder_is_where_most_test_files_are() -> None:
    assert folder_of_tests(["tests/a.test.ts", "tests/b.test.ts", "test/c.js"]) == "tests"
    assert folder_of_tests(["packages/core/__tests__/a.js"]) == "packages/core/__tests__"
    assert folder_of_tests(["src/index.spec.ts"]) == "test"
