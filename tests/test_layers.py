"""The layers point one way, and importing a plugin module does not load the pipeline."""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_import_contracts_hold() -> None:
    """import-linter checks pyproject.toml's contracts (core imports no plugin, no CLI,
    no Hydra; sandbox no plugin; the Python API no CLI)."""
    program = shutil.which("lint-imports")
    if program is None:
        pytest.fail("lint-imports is not installed: pip install -e '.[dev]'")
    result = subprocess.run(
        [program], cwd=ROOT, capture_output=True, text=True, check=False, timeout=120
    )
    assert result.returncode == 0, result.stdout[-3000:]


def _loaded_after(statement: str) -> list[str]:
    code = f"import sys; {statement}; import json; print(json.dumps(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return json.loads(result.stdout)


@pytest.mark.parametrize(
    "statement",
    [
        "import bugbout",
        "import bugbout.plugins.judges.strict",
        "import bugbout.plugins.reporters.json",
        "import bugbout.core.store.records",
    ],
)
def test_importing_a_module_does_not_load_the_pipeline(statement: str) -> None:
    loaded = _loaded_after(statement)
    heavy = {"hydra", "omegaconf", "bugbout.bout", "bugbout.cli", "bugbout.core.race.race"}
    assert heavy.isdisjoint(loaded), sorted(heavy.intersection(loaded))


@pytest.mark.parametrize("module", ["strict", "majority", "cross_vendor", "unanimous"])
def test_a_judge_plugin_module_loads_no_record(module: str) -> None:
    """Making a plugin manager imports every plugin module: a judge's loads its options
    and the policies' base, and the records and the evidence wait until it judges."""
    loaded = _loaded_after(f"import bugbout.plugins.judges.{module}")
    assert {
        "bugbout.core.store.records",
        "bugbout.core.store.race_records",
        "bugbout.core.judge.judging",
    }.isdisjoint(loaded)


def test_help_loads_neither_pydantic_nor_rich() -> None:
    """``bugbout --help`` (and a mistyped command's usage) answers at once."""
    loaded = _loaded_after(
        "import io, sys; sys.stdout = io.StringIO(); from bugbout.cli import main; "
        "main(['--help']); sys.stdout = sys.__stdout__"
    )
    assert {"pydantic", "rich", "hydra"}.isdisjoint(loaded)


def test_the_public_api_is_still_importable_by_name() -> None:
    import bugbout

    assert set(bugbout.__all__) == {*bugbout._EXPORTS, "__version__"}
    for name, where in bugbout._EXPORTS.items():
        module, _, attribute = where.partition(":")  # "module:defined_name" when renamed
        defined = getattr(importlib.import_module(module), attribute or name)
        assert getattr(bugbout, name) is defined, name
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        bugbout.nothing  # noqa: B018
