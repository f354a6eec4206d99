"""The plumbing is cut into subsystem packages, each in a layer of its import contract."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLUMBING = ROOT / "src" / "bugbout" / "core" / "plumbing"


def _plumbing_layers() -> set[str]:
    """The names the plumbing's ``layers`` contract in pyproject.toml places."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    contracts = [
        contract
        for contract in config["tool"]["importlinter"]["contracts"]
        if contract.get("containers") == ["bugbout.core.plumbing"]
    ]
    assert len(contracts) == 1, "pyproject.toml needs one layers contract over the plumbing"
    return {name.strip() for layer in contracts[0]["layers"] for name in re.split("[|:]", layer)}


def _plumbing_members() -> set[str]:
    """The modules and packages directly in ``bugbout.core.plumbing``."""
    modules = {path.stem for path in PLUMBING.glob("*.py") if path.stem != "__init__"}
    packages = {path.parent.name for path in PLUMBING.glob("*/__init__.py")}
    return modules | packages


def test_every_plumbing_module_sits_in_a_layer() -> None:
    """A module outside every layer would be checked by no contract: it goes into the
    subsystem package it belongs to (or a stage's, when one stage alone uses it)."""
    layers = _plumbing_layers()
    members = _plumbing_members()
    assert members - layers == set(), "plumbing modules in no layer of the contract"
    assert layers - members == set(), "layers naming no plumbing module"


def test_the_plumbing_holds_subsystem_packages() -> None:
    """Beside its packages, the plumbing's root keeps only the bout's tools and its bench."""
    modules = {path.stem for path in PLUMBING.glob("*.py") if path.stem != "__init__"}
    assert modules == {"tools", "bench"}
    assert not list(PLUMBING.glob("*.json")), "data files live beside the module that reads them"
