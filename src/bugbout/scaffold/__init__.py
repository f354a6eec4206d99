"""``bugbout plugins new KIND NAME``: a new plugin package that passes its own tests.

:func:`scaffold` writes an installable package, ``bugbout-NAME/``::

    pyproject.toml              hatchling; the `bugbout` entry point NAME = "bugbout_NAME.plugin"
    README.md                   how to install, select, test and publish it
    src/bugbout_NAME/__init__.py
    src/bugbout_NAME/plugin.py  a small working plugin of KIND, registered by its hook
    tests/conftest.py           loads bugbout's fixtures for plugin authors
    tests/test_plugin.py        the KIND's conformance suite, run on the installed plugin

Each kind's plugin is a minimal one that works as it is, built on bugbout's own helpers,
for its author to change: a judge policy on :mod:`bugbout.judges`, a reporter of a
few lines of text, an agent adapter that runs a configured command, and so on.

The files are package data in ``templates/``, valid Python (and TOML, Markdown) with
placeholders such as ``__NAME__`` and ``__TITLE__`` that :func:`render` fills, so ruff and
mypy check them with the rest of bugbout: the files every kind shares at the top, each
kind's ``plugin.py``, ``test_plugin.py`` (appended to the shared ``test_plugin.py``) and
``usage.md`` (the README's "Use" section) in ``templates/<kind>/``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from bugbout import __version__
from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.types import KINDS, RENAMED_KINDS

NAME = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
"""A normalised plugin name: lowercase words joined by dashes, starting with a letter."""


@dataclass(frozen=True)
class Names:
    """How a new plugin is named in each place."""

    kind: str
    plugin: str
    """The plugin's (and entry point's) name: ``cautious``, ``my-judge``."""

    @property
    def distribution(self) -> str:
        return f"bugbout-{self.plugin}"

    @property
    def module(self) -> str:
        return f"bugbout_{self.plugin.replace('-', '_')}"

    @property
    def title(self) -> str:
        """``my-judge`` → ``MyJudge``: the prefix of the plugin's class names."""
        return "".join(part.capitalize() for part in self.plugin.split("-"))


def normalise(name: str) -> str:
    """``My_Judge`` → ``my-judge``; ``bugbout-cautious`` → ``cautious``; else an error."""
    normal = re.sub(r"[^a-z0-9]+", "-", name.strip().lower()).strip("-")
    normal = normal.removeprefix("bugbout-")
    if not NAME.match(normal):
        raise ConfigError(
            f"{name!r} cannot name a plugin: use letters, digits and dashes, starting with a "
            "letter (e.g. `cautious`, `my-judge`)"
        )
    return normal


def scaffold(kind: str, name: str, directory: Path | None = None) -> Path:
    """Write the package of a new ``kind`` plugin called ``name`` in
    ``directory / bugbout-NAME`` (``directory``: the current one); returns its path."""
    if kind in RENAMED_KINDS:
        new = RENAMED_KINDS[kind]
        raise ConfigError(
            f"the plugin kind {kind!r} is now called {new!r}; run "
            f"`bugbout plugins new {new} {name}`"
        )
    if kind not in TEMPLATES:
        raise ConfigError(f"unknown plugin kind {kind!r}; choose one of {', '.join(TEMPLATES)}")
    names = Names(kind, normalise(name))
    _check_unclaimed(names)
    target = (directory or Path.cwd()).resolve() / names.distribution
    if target.exists():
        raise ConfigError(f"{target} already exists; remove it or choose another --dir or NAME")
    files = render(names)
    _check_class_names(names, files[f"src/{names.module}/plugin.py"])
    for relative, text in files.items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return target


def render(names: Names) -> dict[str, str]:
    """The new package's files by path, relative to the package directory."""
    kind = names.kind.replace("-", "_")
    usage = _template(f"{kind}/usage.md").strip("\n")
    tests = _template("test_plugin.py") + "\n" + _template(f"{kind}/test_plugin.py")
    files = {
        "pyproject.toml": _template("pyproject.template.toml"),
        "README.md": _template("README.md").replace("__USAGE__", usage),
        "src/__MODULE__/__init__.py": _template("init.py"),
        "src/__MODULE__/plugin.py": _template(f"{kind}/plugin.py"),
        "tests/conftest.py": _template("conftest.py"),
        "tests/test_plugin.py": tests,
    }
    return {_fill(path, names): _fill(text, names) for path, text in files.items()}


def _template(relative: str) -> str:
    """The text of ``templates/RELATIVE``, a file of this package's data."""
    template = resources.files(__name__).joinpath("templates", *relative.split("/"))
    return template.read_text(encoding="utf-8")


def _fill(text: str, names: Names) -> str:
    spec = KINDS[names.kind]
    template = TEMPLATES[names.kind]
    values = {
        "__NAME__": names.plugin,
        "__MODULE__": names.module,
        "__DIST__": names.distribution,
        "__TITLE__": names.title,
        "__KIND__": names.kind,
        "__HOOK__": spec.hook,
        "__RECORD__": spec.__name__,
        "__SUITE__": template.suite,
        "__SUMMARY__": template.summary,
        "__BUGBOUT__": __version__,
    }
    for token, value in values.items():
        text = text.replace(token, value)
    return text


def _check_unclaimed(names: Names) -> None:
    """A built-in plugin of the kind with the name would clash with the new one."""
    from bugbout.core.contract.manager import make_plugins

    if names.plugin in make_plugins(entry_points=False).of_kind(names.kind):
        raise ConfigError(
            f"bugbout already has a {names.kind} plugin named {names.plugin!r}; choose another name"
        )


def _check_class_names(names: Names, source: str) -> None:
    """A class named after the plugin must not shadow a name the module imports."""
    import ast

    tree = ast.parse(source)
    imported = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom | ast.Import)
        for alias in node.names
    }
    classes = {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    clashes = sorted(imported & classes)
    if clashes:
        raise ConfigError(
            f"{_article(names.kind)} {names.kind} plugin named {names.plugin!r} would define "
            f"class {clashes[0]}, which the plugin module imports; choose another name"
        )


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def next_steps(kind: str, path: Path) -> str:
    """What to do with a new package, for the command line."""
    return (
        f"created {path} ({_article(kind)} {kind} plugin); next: `pip install -e {path}`, "
        f"`pytest {path / 'tests'}`, then `bugbout plugins` lists it"
    )


# -- each kind's template ------------------------------------------------------------------


@dataclass(frozen=True)
class Template:
    """One kind's template: its conformance suite and its summary line; its files are in
    ``templates/<kind>/`` (the kind's name with ``_`` for ``-``)."""

    suite: str
    summary: str


TEMPLATES: dict[str, Template] = {
    "miner": Template("MinerSuite", "Fixes from the git history, limited to some directories"),
    "issue-source": Template("IssueSourceSuite", "Issues kept as Markdown files in the repository"),
    "environment": Template(
        "EnvironmentSuite", "An existing Python interpreter, with variables for the tests"
    ),
    "test-runner": Template("TestRunnerSuite", "pytest, with variables for every test run"),
    "agent": Template("AgentSuite", "An adapter for a coding agent's command line"),
    "sandbox": Template("SandboxSuite", "The platform's sandbox, at a lower CPU priority"),
    "executor": Template("ExecutorSuite", "A pool of processes on this machine"),
    "assignment": Template("AssignmentSuite", "Reproductions of the issue and its edge cases"),
    "judge": Template("JudgeSuite", "A cautious judge policy"),
    "auditor": Template("AuditorSuite", "The test gate with a short kill report"),
    "reporter": Template("ReporterSuite", "A tiny plain-text report"),
}
"""Each kind's template, in the order of :data:`bugbout.core.contract.types.KINDS`."""
