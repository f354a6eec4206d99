"""The development sessions (noxfile.py), the lock file behind `nox -s bout`, and the
docs' links that `nox -s docs` checks."""

from __future__ import annotations

import functools
import importlib.util
import inspect
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = ("tests", "lint", "typecheck", "e2e", "bench", "chaos", "docs", "bout")


def noxfile() -> ModuleType:
    pytest.importorskip("nox")
    return _load_noxfile()


@functools.cache
def _load_noxfile() -> ModuleType:
    """Loaded once: nox registers each session when its module runs."""
    spec = importlib.util.spec_from_file_location("bugbout_noxfile", ROOT / "noxfile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_nox_lists_every_session_with_its_docstring() -> None:
    module = noxfile()
    result = subprocess.run(
        [sys.executable, "-m", "nox", "--list", "--no-color"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    listed = {}
    for line in result.stdout.splitlines():
        if line[:2] in ("* ", "- ") and " -> " in line:
            name, description = line[2:].split(" -> ", 1)
            listed[name] = description
    assert set(listed) == set(SESSIONS), result.stdout
    for name in SESSIONS:
        doc = inspect.getdoc(getattr(module, name))
        assert doc, f"session {name} has no docstring"
        assert listed[name] == doc.splitlines()[0], name


def uv(*args: str) -> subprocess.CompletedProcess[str]:
    from uv import find_uv_bin

    return subprocess.run(
        [find_uv_bin(), *args], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )


def test_the_lock_file_matches_pyproject() -> None:
    """`uv lock --check`: offline when the cache holds what it needs, else online; skipped
    only when neither can tell. After changing pyproject.toml's dependencies, `uv lock`."""
    result = uv("lock", "--check", "--offline")
    if result.returncode != 0 and "network was disabled" in result.stderr:
        result = uv("lock", "--check")
        if result.returncode != 0 and "needs to be updated" not in result.stderr:
            pytest.skip(f"uv cannot check the lock offline nor reach the index: {result.stderr}")
    assert result.returncode == 0, f"uv.lock is stale; run `uv lock`\n{result.stderr}"


def test_relative_links_in_the_docs_resolve() -> None:
    assert noxfile().broken_links(ROOT) == []


def test_the_link_check_finds_broken_links(tmp_path: Path) -> None:
    module = noxfile()
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text(
        "# Title\n\n[ok](docs/a.md#the-b-section) [ok](#title) [web](https://example.org/x)\n"
        "[gone](docs/gone.md) [no heading](docs/a.md#nope) `[code](x.md)`\n"
    )
    (tmp_path / "docs" / "a.md").write_text(
        "# A\n\n````markdown\n```text\n# not a heading\n```\n````\n\n## The `b` section\n"
        "[up](../README.md#title) [dir](.)\n"
    )
    assert module.broken_links(tmp_path) == [
        "README.md: docs/gone.md (no such file)",
        "README.md: docs/a.md#nope (no heading #nope)",
    ]
