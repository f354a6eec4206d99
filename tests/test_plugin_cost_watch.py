"""The outcome plugin's watch looks for no module of another pluggy than the one pytest
runs on (a module not found is looked for in every folder it could be in), and still
watches the one it runs on, vendored in an old pytest or not."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from bugbout.core.plumbing.tampering.canaries import key_line, read_outcomes
from bugbout.core.plumbing.testruns.testrun import outcomes_plugin_dir
from bugbout.core.store.records import RunStatus
from old_pytests import old_pytest
from test_pytest_eras import HOST, _run, write

OTHER_PLUGGY = (
    "pluggy.callers",
    "pluggy.hooks",
    "pluggy.manager",
    "_pytest.vendored_packages",
)
"""pluggy's modules before 1.0, and pytest's own copy of it before 3.3."""
WRAPPED = """
import importlib

VALUE = 1
_module = importlib.import_module({module!r})
_holder = getattr(_module, {holder!r}) if {holder!r} else _module
_real = getattr(_holder, {name!r})


def _wrapped(*args, **kwargs):
    return _real(*args, **kwargs)


setattr(_holder, {name!r}, _wrapped)
"""
"""A package that wraps a function of pluggy's calling module as it is imported."""


def test_a_run_on_pluggy_1_asks_for_no_module_of_pluggy_0(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_it.py").write_text("def test_it():\n    pass\n")
    key = "k" * 64
    with tempfile.TemporaryFile() as outcomes:
        outcomes.write(key_line(key))
        outcomes.flush()
        env = {
            **os.environ,
            "PYTHONPATH": str(outcomes_plugin_dir()),
            "BUGBOUT_OUTCOMES_FD": str(outcomes.fileno()),
        }
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "pytest", "-p", "bugbout_outcomes",
             "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), "tests"],
            cwd=tmp_path, env=env, pass_fds=(outcomes.fileno(),), capture_output=True,
            text=True, check=False, timeout=120,
        )  # fmt: skip
        outcomes.seek(0)
        stream = read_outcomes(outcomes.read(), key)
    assert "1 passed" in done.stdout, done.stdout + done.stderr
    assert stream.summary is not None and not stream.tampering, stream.tampering
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()]
    assert "bugbout_watch" in imported and "pluggy._callers" in imported
    assert not [name for name in imported if name in OTHER_PLUGGY]


@pytest.mark.parametrize(
    ("version", "module", "holder", "name"),
    [
        ("host", "pluggy._callers", "", "_multicall"),
        ("3.8.2", "pluggy.callers", "", "_multicall"),
        ("3.0.7", "_pytest.vendored_packages.pluggy", "_MultiCall", "execute"),
    ],
)
def test_the_pluggy_pytest_runs_on_is_watched(
    version: str, module: str, holder: str, name: str, tmp_path: Path
) -> None:
    python = HOST if version == "host" else str(old_pytest(version))
    tree = write(
        tmp_path,
        {
            "pkg/__init__.py": WRAPPED.format(module=module, holder=holder, name=name),
            "tests/test_it.py": "import pkg\n\n\ndef test_value():\n    assert pkg.VALUE == 1\n",
        },
    )
    run = _run(python, tree, ["tests/test_it.py"])
    assert run.status == RunStatus.TAMPERED, run.detail
    found = ".".join(part for part in (module, holder, name) if part) + " was replaced"
    assert any(found in why for why in run.tampering), run.tampering


SWAPPED = """
import builtins

import _pytest.runner

VALUE = 1
builtins.all = lambda values: True
_function = _pytest.runner.call_and_report
_function.__code__ = _function.__code__.replace(co_filename=__file__)  # a copy, made here
"""
"""Swaps the code of one of pytest's functions for a copy made in the package, with
``all`` made to say yes to anything."""


def test_a_swapped_code_is_found_when_all_says_yes_to_anything(tmp_path: Path) -> None:
    tree = write(
        tmp_path,
        {
            "pkg/__init__.py": SWAPPED,
            "tests/test_it.py": "import pkg\n\n\ndef test_value():\n    assert pkg.VALUE == 1\n",
        },
    )
    run = _run(HOST, tree, ["tests/test_it.py"])
    assert run.status == RunStatus.TAMPERED, run.detail
    found = "_pytest.runner.call_and_report was replaced"
    assert any(found in why for why in run.tampering), run.tampering
