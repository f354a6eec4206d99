"""The public plugin API: one module per kind, the only bugbout modules plugins import,
light to import; plugins reach each other, and applications reach plugins, by name."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import bugbout
from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.types import KINDS, SandboxPlugin
from plugin_sites import install_distribution

SRC = Path(bugbout.__file__).parent
PUBLIC = {
    "miner": "bugbout.miners",
    "issue-source": "bugbout.issue_sources",
    "environment": "bugbout.environments",
    "test-runner": "bugbout.test_runners",
    "agent": "bugbout.agents",
    "sandbox": "bugbout.sandboxes",
    "executor": "bugbout.executors",
    "assignment": "bugbout.assignments",
    "judge": "bugbout.judges",
    "auditor": "bugbout.auditors",
    "reporter": "bugbout.reporters",
}
"""Each plugin kind's public module."""
ALLOWED = {"bugbout", *PUBLIC.values()}


def bugbout_imports(path: Path) -> list[tuple[int, str]]:
    """Every ``bugbout`` module ``path`` imports (at any depth, ``TYPE_CHECKING`` too)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found += [(node.lineno, n) for n in names if n.split(".")[0] == "bugbout"]
    return found


def loaded_after(statement: str) -> set[str]:
    code = f"import sys, json; {statement}; print(json.dumps(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return set(json.loads(result.stdout))


def test_every_kind_has_one_public_module() -> None:
    assert list(PUBLIC) == list(KINDS)


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_has_a_public_module_with_its_record_hookimpl_and_options(kind: str) -> None:
    module = importlib.import_module(PUBLIC[kind])
    assert module.__doc__ and "stable API" in module.__doc__
    assert {KINDS[kind].__name__, "hookimpl", "Options", "create_plugin"} <= set(module.__all__)
    assert getattr(module, KINDS[kind].__name__) is KINDS[kind]
    assert sorted(module.__all__) == dir(module)
    for name in module.__all__:
        assert getattr(module, name) is not None, name
    with pytest.raises(AttributeError, match=f"{PUBLIC[kind]}' has no attribute 'nothing'"):
        module.nothing  # noqa: B018


@pytest.mark.parametrize("kind", list(KINDS))
def test_importing_a_public_module_loads_nothing_of_the_core(kind: str) -> None:
    loaded = {m for m in loaded_after(f"import {PUBLIC[kind]}") if m.split(".")[0] == "bugbout"}
    assert loaded == {
        "bugbout", PUBLIC[kind], "bugbout.core", "bugbout.core.contract",
        "bugbout.core.contract.exports",
    }  # fmt: skip


def _own_package(path: Path) -> str | None:
    """The package a plugin module belongs to beside its kind's folder (its own private
    modules, as a third party's plugin package has), or ``None``."""
    parts = path.relative_to(SRC).parts
    return "bugbout." + ".".join(parts[:3]) if len(parts) > 3 else None


def test_a_built_in_plugin_module_imports_only_the_public_api() -> None:
    """... or its own package's modules: the JavaScript runners share theirs."""
    wrong = [
        f"{path.relative_to(SRC)}:{line} imports {module}"
        for path in sorted((SRC / "plugins").rglob("*.py"))
        for line, module in bugbout_imports(path)
        if module not in ALLOWED
        and not ((own := _own_package(path)) and (module == own or module.startswith(own + ".")))
    ]
    assert wrong == []


def test_an_application_module_chooses_plugins_by_name_never_by_class() -> None:
    applications = [
        path
        for path in sorted(SRC.rglob("*.py"))
        if path.relative_to(SRC).parts[0] not in ("plugins", "core", "scaffold")
    ]
    wrong = [
        f"{path.relative_to(SRC)}:{line} imports {module}"
        for path in applications
        for line, module in bugbout_imports(path)
        if module.startswith("bugbout.plugins")
    ]
    assert wrong == []


def test_a_plugin_builds_another_by_name_through_the_registry() -> None:
    from bugbout.plugins.sandboxes.none import NoSandbox
    from bugbout.sandboxes import create_plugin

    assert isinstance(create_plugin(SandboxPlugin, "none"), NoSandbox)
    with pytest.raises(ConfigError, match="no sandbox plugin named 'nowhere'; choose one of: "):
        create_plugin(SandboxPlugin, "nowhere")


THIRD_PARTY_SANDBOX = """
from bugbout.sandboxes import NoOptions, SandboxPlugin, hookimpl


class Jail:
    name = "jail"

    def __init__(self, options=None):
        pass

    def problem(self):
        return None

    def wrap(self, argv, confinement):
        return ["jail", *argv]


@hookimpl
def bugbout_sandboxes():
    yield SandboxPlugin(name="jail", factory=Jail, options=NoOptions)
"""


def test_auto_reaches_its_sandboxes_through_the_registry(
    site: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A sandbox ``auto`` prefers is found by name among the installed plugins, so a
    third-party one stands in as well as a built-in."""
    from bugbout.plugins.sandboxes import auto
    from bugbout.sandboxes import Confinement

    install_distribution(site, "bugbout-jail", "1.0", {"jail": "bugbout_jail"},
                         {"bugbout_jail": THIRD_PARTY_SANDBOX})  # fmt: skip
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setitem(auto.PLATFORM_SANDBOXES, "linux", ("jail",))
    sandbox = auto.Auto()
    assert sandbox.problem() is None
    assert sandbox.wrap(["true"], Confinement(workdir=tmp_path)) == ["jail", "true"]


@pytest.mark.parametrize(
    ("old", "public", "names"),
    [
        ("bugbout.core.judging", "bugbout.judges", ["Judge", "PatchEvidence", "decide"]),
        ("bugbout.core.agents", "bugbout.agents", ["CodingAgent", "AgentOptions", "Session"]),
    ],
)
def test_a_removed_module_still_imports_and_names_its_public_replacement(
    old: str, public: str, names: list[str]
) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} is private and gone; import {public}"):
        module = importlib.import_module(old)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in names:
            assert getattr(module, name) is not None
    with pytest.raises(AttributeError, match=f"see {public}"):
        module.nothing  # noqa: B018
