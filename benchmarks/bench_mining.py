#!/usr/bin/env python
"""Mining benchmark: the ``git-history`` miner's full walk against a plain ``git log``.

Generates (once, cached) a synthetic repository with N first-parent commits through
``git fast-import``, then times, interleaved and repeated, ``git log --first-parent
--numstat`` and ``GitHistoryMiner.mine`` over it and reports the ratio of their medians.
It is a report, not a test: the exit code is 0 whatever the ratio.

    python benchmarks/bench_mining.py [--commits N] [--workdir DIR] [--repeat K]

See ``benchmarks/README.md`` for what is generated and what is measured.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import platform
import pstats
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from timing import Sample, measure, rotations, summary

HERE = Path(__file__).resolve().parent
DEFAULT_WORKDIR = HERE / ".cache"
TARGET_RATIO = 1.5

# Bump when the generated history changes, so cached repositories are not reused.
GENERATOR_VERSION = 2

# The shape of the generated project.
SOURCE_MODULES = 50
TEST_MODULES = 30
INITIAL_SOURCE_MODULES = 20
INITIAL_TEST_MODULES = 10
MAX_FUNCTIONS = 40
"""Per source module; past it an added function replaces an old one (~10 lines each)."""
MAX_TESTS = 55
"""Per test module; past it an added test replaces an old one (modules of 300-600 lines)."""

# The mix of first-parent commits (the rest are ordinary: refactors, features, docs).
MERGE_RATE = 0.03
FIX_RATE = 0.15
MERGE_FIX_SHARE = 0.4
"""Share of merged pull requests whose title is a fix."""
FIX_KINDS = {
    # kind: weight
    "tested": 0.48,  # source change + a new test (or a new parametrize case): a task
    "modified-test": 0.12,  # source change + an existing test rewritten: no test added
    "no-issue": 0.10,  # names no issue
    "many-files": 0.08,  # touches 3-8 source files
    "source-only": 0.10,  # no test change at all
    "tests-only": 0.06,  # a flaky-test fix: no source change
    "duplicate": 0.06,  # a second fix for a recently fixed issue
}

REPO = "acme/pkg"
CONFTEST = "import pytest\n\n\n@pytest.fixture\ndef data():\n    return {{'n': {n}}}\n"
AUTHORS = [
    ("Ada Lovelace", "ada@example.com"),
    ("Grace Hopper", "grace@example.com"),
    ("Linus Torvalds", "linus@example.com"),
    ("Barbara Liskov", "barbara@example.com"),
    ("Guido van Rossum", "guido@example.com"),
    ("Margaret Hamilton", "margaret@example.com"),
    ("Ken Thompson", "ken@example.com"),
    ("Frances Allen", "frances@example.com"),
    ("Donald Knuth", "don@example.com"),
    ("Radia Perlman", "radia@example.com"),
]
VERBS = [
    "parse", "load", "render", "merge", "split", "normalize", "resolve", "encode", "decode",
    "validate", "compute", "format", "collect", "filter", "scan", "build", "apply", "lookup",
    "convert", "flatten", "expand", "group", "sort", "index", "read", "write", "emit", "match",
]  # fmt: skip
NOUNS = [
    "config", "token", "header", "record", "path", "value", "range", "entry", "node",
    "buffer", "schema", "item", "column", "index", "payload", "batch", "window", "key",
    "chunk", "version", "field", "query", "table", "stream", "option", "marker", "scope",
]  # fmt: skip
ADJECTIVES = ["empty", "nested", "unicode", "negative", "large", "missing", "duplicate", "quoted"]
FIX_TITLES = [
    "Fix crash in {mod} when {noun} is {adj}",
    "Fix wrong result from {func} for {adj} input",
    "Fix off-by-one in {func}",
    "Fix {func} failing on {adj} {noun}",
    "Fix incorrect {noun} handling in {mod}",
    "{func} returns wrong {noun} for {adj} values",
    "Fix regression in {func}",
    "Fix error when {noun} is {adj}",
    "Fix broken {noun} lookup in {mod}",
    "Bugfix: {func} ignored {adj} {noun}",
]
FLAKY_TITLES = ["Fix flaky test in {test}", "Fix failing {test} on Windows"]
ORDINARY_TITLES = [
    "Refactor {func} in {mod}",
    "Add {func} to {mod}",
    "Simplify {func}",
    "Improve performance of {func}",
    "Tidy up {mod}",
    "Document {func}",
    "Use a faster {noun} lookup in {mod}",
    "Support {adj} {noun} in {func}",
    "Rewrite {func} for clarity",
]
PARAGRAPHS = [
    "This keeps the {noun} handling in one place and makes {func} easier to test.",
    "The previous implementation walked the {noun} list twice; now it walks it once.",
    "Reported by a user who hit it with {adj} {noun} values in production.",
    "No behaviour change intended apart from the {noun} case described above.",
    "While at it, rename a few local variables in {mod} and drop a dead branch.",
    "Co-authored-by: Someone Else <someone@example.com>",
]


# --------------------------------------------------------------------------------------
# The generated project: source modules made of functions, test modules made of tests.
# --------------------------------------------------------------------------------------


def _function_text(rng: random.Random, name: str) -> str:
    arg = rng.choice(["value", "items", "text", "data", "node"])
    lines = [f"def {name}({arg}, *, limit={rng.randint(1, 99)}):"]
    lines.append(f'    """{rng.choice(VERBS).capitalize()} the {rng.choice(NOUNS)} of {arg}."""')
    lines.append(f"    result = {rng.randint(0, 9)}")
    noun = rng.choice(NOUNS)
    for _ in range(rng.randint(2, 6)):
        lines.extend(
            rng.choice(
                [
                    [f"    if {arg} is None:", f"        return {rng.randint(0, 9)}"],
                    [
                        "    for step in range(limit):",
                        f"        result += step * {rng.randint(1, 9)}",
                    ],
                    [f"    result = _{rng.choice(VERBS)}({arg}, result) or {rng.randint(0, 9)}"],
                    [f"    if result > {rng.randint(10, 999)}:", "        result //= 2"],
                    [
                        f"    {noun} = [x for x in range({rng.randint(2, 20)}) if x % 2]",
                        f"    result += len({noun})",
                    ],
                ]
            )
        )
    lines.append("    return result")
    return "\n".join(lines)


@dataclass
class SourceModule:
    key: int
    path: str
    functions: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return Path(self.path).stem

    def text(self) -> str:
        header = f'"""The {self.name} module of pkg."""\n\nfrom __future__ import annotations\n\n\n'
        return header + "\n\n\n".join(self.functions.values()) + "\n"

    def add_function(self, rng: random.Random, serial: int) -> str:
        if len(self.functions) >= MAX_FUNCTIONS:
            del self.functions[rng.choice(list(self.functions)[:-5])]
        name = f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}_{serial}"
        self.functions[name] = _function_text(rng, name)
        return name

    def change_function(self, rng: random.Random) -> str:
        name = rng.choice(list(self.functions))
        self.functions[name] = _function_text(rng, name)
        return name

    def any_function(self, rng: random.Random) -> str:
        return rng.choice(list(self.functions))


@dataclass
class TestBlock:
    kind: str  # "function", "parametrized" or "class"
    name: str
    module: str
    functions: list[str]
    methods: list[str] = field(default_factory=list)
    cases: int = 1
    text: str = ""

    def render(self, rng: random.Random) -> None:
        func = rng.choice(self.functions) if self.functions else "main"
        if self.kind == "function":
            lines = [f"def {self.name}():"]
            for _ in range(rng.randint(2, 5)):
                lines.append(f"    value = {self.module}.{func}({rng.randint(0, 99)})")
                lines.append(f"    assert value == {rng.randint(0, 99)}")
            self.text = "\n".join(lines)
        elif self.kind == "parametrized":
            cases = ", ".join(f"({i}, {i * 3 + 1})" for i in range(self.cases))
            self.text = "\n".join(
                [
                    f'@pytest.mark.parametrize("value, expected", [{cases}])',
                    f"def {self.name}(value, expected):",
                    f"    assert {self.module}.{func}(value) == expected",
                ]
            )
        else:
            lines = [f"class {self.name}:", f'    """Tests of {self.module}.{func}."""']
            for method in self.methods:
                lines += [
                    "",
                    f"    def {method}(self):",
                    f"        result = {self.module}.{func}({rng.randint(0, 99)})",
                    f"        assert result == {rng.randint(0, 99)}",
                    f"        assert {self.module}.{func}(None) == {rng.randint(0, 9)}",
                ]
            self.text = "\n".join(lines)


@dataclass
class TestModule:
    key: int
    path: str
    blocks: dict[str, TestBlock] = field(default_factory=dict)

    def text(self) -> str:
        module = f"mod_{self.key}"
        header = f'"""Tests of pkg.{module}."""\n\nimport pytest\n\nfrom pkg import {module}\n\n\n'
        return header + "\n\n\n".join(b.text for b in self.blocks.values()) + "\n"

    def add_test(self, rng: random.Random, serial: int, functions: list[str]) -> None:
        """Adds a test function, a parametrized test, a class, a method or a case."""
        module = f"mod_{self.key}"
        roll = rng.random()
        classes = [b for b in self.blocks.values() if b.kind == "class"]
        params = [b for b in self.blocks.values() if b.kind == "parametrized"]
        if roll < 0.12 and classes:
            block = rng.choice(classes)
            block.methods.append(f"test_{rng.choice(ADJECTIVES)}_{rng.choice(NOUNS)}_{serial}")
            block.render(rng)
            return
        if roll < 0.22 and params:
            block = rng.choice(params)
            block.cases += 1
            block.render(rng)
            return
        if len(self.blocks) >= MAX_TESTS:
            del self.blocks[rng.choice(list(self.blocks)[:-5])]
        suffix = f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}_{serial}"
        if roll < 0.32:
            methods = [f"test_{rng.choice(ADJECTIVES)}_{i}" for i in range(rng.randint(2, 4))]
            camel = "".join(part.capitalize() for part in suffix.split("_"))
            block = TestBlock("class", f"Test{camel}", module, functions, methods)
        elif roll < 0.45:
            block = TestBlock("parametrized", f"test_{suffix}", module, functions, cases=2)
        else:
            block = TestBlock("function", f"test_{suffix}", module, functions)
        block.render(rng)
        self.blocks[block.name] = block

    def change_test(self, rng: random.Random) -> str:
        """Rewrites an existing test's body: no test is added."""
        block = rng.choice(list(self.blocks.values()))
        block.render(rng)
        return block.name


# --------------------------------------------------------------------------------------
# The fast-import stream.
# --------------------------------------------------------------------------------------


@dataclass
class Change:
    path: str
    content: bytes | None = None  # None: deleted
    old_path: str | None = None  # a pure rename


class HistoryWriter:
    """Writes a fast-import stream: blobs with marks, then commits referring to them."""

    def __init__(self, out: io.BufferedIOBase) -> None:
        self.out = out
        self.next_mark = 1
        self.when = 1_420_070_400  # 2015-01-01

    def _mark(self) -> int:
        mark = self.next_mark
        self.next_mark += 1
        return mark

    def blob(self, content: bytes) -> int:
        mark = self._mark()
        self.out.write(b"blob\nmark :%d\ndata %d\n" % (mark, len(content)))
        self.out.write(content)
        self.out.write(b"\n")
        return mark

    def commit(  # noqa: PLR0917
        self,
        branch: str,
        message: str,
        author: tuple[str, str],
        files: list[tuple[str, int | None, str | None]],
        parent: int | None = None,
        merge: int | None = None,
        advance: bool = True,
    ) -> int:
        """``files``: (path, blob mark or None to delete, old path for a rename)."""
        if advance:
            self.when += random.Random(self.next_mark).randint(300, 28_800)
        mark = self._mark()
        data = message.encode()
        who = f"{author[0]} <{author[1]}> {self.when} +0000".encode()
        out = [b"commit refs/heads/%s\nmark :%d\n" % (branch.encode(), mark)]
        out.append(b"author %s\ncommitter %s\ndata %d\n" % (who, who, len(data)))
        out.append(data + b"\n")
        if parent is not None:
            out.append(b"from :%d\n" % parent)
        if merge is not None:
            out.append(b"merge :%d\n" % merge)
        for path, blob, old_path in files:
            if old_path is not None:
                out.append(f"R {old_path} {path}\n".encode())
            elif blob is None:
                out.append(f"D {path}\n".encode())
            else:
                out.append(b"M 100644 :%d %s\n" % (blob, path.encode()))
        out.append(b"\n")
        self.out.write(b"".join(out))
        return mark


class Project:
    """The generated project's state and the commits that change it."""

    def __init__(self, rng: random.Random, commits: int) -> None:
        self.rng = rng
        self.commits = commits
        self.serial = 0
        self.issue = 0
        self.recent_issues: list[int] = []
        self.sources: dict[int, SourceModule] = {}
        self.tests: dict[int, TestModule] = {}
        self.changelog: list[str] = []
        self.version = [0, 1, 0]
        # Modules added over the first 60% of history, evenly.
        pending = [("source", k) for k in range(INITIAL_SOURCE_MODULES, SOURCE_MODULES)]
        pending += [("tests", k) for k in range(INITIAL_TEST_MODULES, TEST_MODULES)]
        rng.shuffle(pending)
        span = max(1, int(commits * 0.6))
        self.scheduled = [
            (1 + (i * span) // max(1, len(pending)), item) for i, item in enumerate(pending)
        ]
        self.stats: dict[str, int] = {}

    # -- small helpers -------------------------------------------------------------

    def next_serial(self) -> int:
        self.serial += 1
        return self.serial

    def next_issue(self) -> int:
        self.issue += self.rng.randint(1, 4)
        return self.issue

    def count(self, what: str) -> None:
        self.stats[what] = self.stats.get(what, 0) + 1

    def words(self, module: SourceModule | None = None) -> dict[str, str]:
        module = module or self.rng.choice(list(self.sources.values()))
        tests = self.tests.get(module.key) or self.rng.choice(list(self.tests.values()))
        return {
            "mod": module.name,
            "func": module.any_function(self.rng),
            "noun": self.rng.choice(NOUNS),
            "adj": self.rng.choice(ADJECTIVES),
            "test": Path(tests.path).stem,
        }

    def body(self, module: SourceModule | None = None) -> str:
        if self.rng.random() < 0.45:
            return ""
        count = self.rng.randint(1, 3)
        words = self.words(module)
        return "\n\n".join(self.rng.choice(PARAGRAPHS).format(**words) for _ in range(count))

    def source_text(self, module: SourceModule) -> tuple[str, bytes]:
        return module.path, module.text().encode()

    def test_text(self, module: TestModule) -> tuple[str, bytes]:
        return module.path, module.text().encode()

    def test_module_for(self, source: SourceModule) -> TestModule:
        return self.tests.get(source.key) or self.rng.choice(list(self.tests.values()))

    def add_test(self, module: TestModule) -> None:
        functions = list(self.sources[module.key].functions)[-8:]
        module.add_test(self.rng, self.next_serial(), functions)

    # -- the initial tree ----------------------------------------------------------

    def initial(self) -> list[tuple[str, bytes]]:
        for key in range(INITIAL_SOURCE_MODULES):
            self.new_source(key)
        for key in range(INITIAL_TEST_MODULES):
            self.new_tests(key)
        files = [self.source_text(m) for m in self.sources.values()]
        files += [self.test_text(m) for m in self.tests.values()]
        files += [
            ("src/pkg/__init__.py", b'"""pkg."""\n\n__version__ = "0.1.0"\n'),
            ("tests/conftest.py", CONFTEST.format(n=0).encode()),
            ("tests/helpers.py", b"def make(value):\n    return value\n"),
            ("README.md", b"# pkg\n\nA package.\n"),
            ("pyproject.toml", b'[project]\nname = "pkg"\nversion = "0.1.0"\n'),
            ("CHANGELOG.md", b"# Changelog\n"),
        ]
        return files

    def new_source(self, key: int) -> SourceModule:
        module = SourceModule(key, f"src/pkg/mod_{key}.py")
        for _ in range(self.rng.randint(4, 8)):
            module.add_function(self.rng, self.next_serial())
        self.sources[key] = module
        return module

    def new_tests(self, key: int) -> TestModule:
        if key not in self.sources:
            self.new_source(key)
        module = TestModule(key, f"tests/test_mod_{key}.py")
        for _ in range(self.rng.randint(4, 8)):
            self.add_test(module)
        self.tests[key] = module
        return module

    # -- commits -------------------------------------------------------------------

    def issue_reference(self, title: str, body: str, number: int) -> tuple[str, str]:
        style = self.rng.random()
        if style < 0.45:
            return f"{title} (#{number})", body
        if style < 0.50:
            return f"{title} (gh-{number})", body
        if style < 0.75:
            closing = f"Fixes #{number}"
        elif style < 0.85:
            closing = f"Closes #{number}."
        elif style < 0.95:
            closing = f"Fixes https://github.com/{REPO}/issues/{number}"
        else:
            closing = f"Fixes {REPO}#{number}"
        return title, f"{body}\n\n{closing}" if body else closing

    def fix(self) -> tuple[str, list[tuple[str, bytes]]]:
        """A fix-titled commit: its message and the files it writes."""
        rng = self.rng
        kind = rng.choices(list(FIX_KINDS), weights=list(FIX_KINDS.values()))[0]
        self.count(f"fix:{kind}")
        source = rng.choice(list(self.sources.values()))
        words = self.words(source)
        title = rng.choice(FIX_TITLES).format(**words)
        body = self.body(source)
        files: list[tuple[str, bytes]] = []
        if kind == "tests-only":
            title = rng.choice(FLAKY_TITLES).format(**words)
            tests = self.test_module_for(source)
            if rng.random() < 0.5:
                self.add_test(tests)
            else:
                tests.change_test(rng)
            files.append(self.test_text(tests))
        else:
            count = rng.randint(3, 8) if kind == "many-files" else rng.choice([1, 1, 1, 2])
            touched = [source, *rng.sample(list(self.sources.values()), count - 1)]
            for module in {m.key: m for m in touched}.values():
                module.change_function(rng)
                files.append(self.source_text(module))
            tests = self.test_module_for(source)
            if kind == "modified-test":
                tests.change_test(rng)
                files.append(self.test_text(tests))
            elif kind != "source-only" and (kind != "no-issue" or rng.random() < 0.5):
                self.add_test(tests)
                files.append(self.test_text(tests))
                if rng.random() < 0.1:
                    files.append(("tests/conftest.py", self.conftest()))
        if kind == "no-issue":
            return "\n\n".join(p for p in (title, body) if p), files
        if kind == "duplicate" and self.recent_issues:
            number = rng.choice(self.recent_issues)
        else:
            number = self.next_issue()
            self.recent_issues = [*self.recent_issues[-30:], number]
        title, body = self.issue_reference(title, body, number)
        return "\n\n".join(p for p in (title, body) if p), files

    def conftest(self) -> bytes:
        return CONFTEST.format(n=self.next_serial()).encode()

    def ordinary(  # noqa: PLR0915
        self, index: int
    ) -> tuple[str, list[tuple[str, bytes]], list[tuple[str, str]]]:
        """An ordinary commit: message, files written, renames (new path, old path)."""
        rng = self.rng
        # A module due by now is added by the first ordinary commit that comes along.
        while self.scheduled and self.scheduled[0][0] <= index:
            what, key = self.scheduled.pop(0)[1]
            if what == "source" and key not in self.sources:
                module = self.new_source(key)
                self.count("add-module")
                return f"Add {module.name}", [self.source_text(module)], []
            if what == "tests":
                tests = self.new_tests(key)  # adds the source module too, when missing
                self.count("add-test-module")
                files = [self.test_text(tests), self.source_text(self.sources[key])]
                return f"Add tests for mod_{key}", files, []
        roll = rng.random()
        source = rng.choice(list(self.sources.values()))
        words = self.words(source)
        suffix = f" (#{self.next_issue()})" if rng.random() < 0.3 else ""
        if roll < 0.002:
            self.count("rename")
            old = source.path
            source.path = f"src/pkg/{source.name}_impl.py" if "_impl" not in old else old
            if source.path != old:
                return f"Rename {Path(old).stem} to {source.name}{suffix}", [], [(source.path, old)]
        if roll < 0.10:
            self.count("add-tests")
            tests = self.test_module_for(source)
            for _ in range(rng.randint(1, 3)):
                self.add_test(tests)
            return f"Add tests for {words['func']}{suffix}", [self.test_text(tests)], []
        if roll < 0.16:
            self.count("docs")
            text = f"# {source.name}\n\n" + self.body(source) + f"\n\nSee {words['func']}.\n"
            path = f"docs/{source.name}.md"
            return f"Update docs for {source.name}{suffix}", [(path, text.encode())], []
        if roll < 0.19:
            self.count("release")
            self.version[2] += 1
            if self.version[2] > 9:
                self.version[1:] = [self.version[1] + 1, 0]
            version = ".".join(map(str, self.version))
            self.changelog = [*self.changelog[-200:], f"- {version}: {words['func']}"]
            changelog = ("# Changelog\n\n" + "\n".join(reversed(self.changelog)) + "\n").encode()
            files = [
                ("CHANGELOG.md", changelog),
                ("src/pkg/__init__.py", f'"""pkg."""\n\n__version__ = "{version}"\n'.encode()),
                ("pyproject.toml", f'[project]\nname = "pkg"\nversion = "{version}"\n'.encode()),
            ]
            return f"Release {version}", files, []
        self.count("change")
        title = rng.choice(ORDINARY_TITLES).format(**words) + suffix
        files = []
        others = rng.sample(list(self.sources.values()), rng.choice([0, 0, 1, 2]))
        for module in {m.key: m for m in [source, *others]}.values():
            if title.startswith(("Add ", "Support ")) or rng.random() < 0.3:
                module.add_function(rng, self.next_serial())
            else:
                module.change_function(rng)
            files.append(self.source_text(module))
        if rng.random() < 0.2:
            tests = self.test_module_for(source)
            self.add_test(tests)
            files.append(self.test_text(tests))
        body = self.body(source)
        return f"{title}\n\n{body}" if body else title, files, []


def generate(repo: Path, commits: int, seed: int) -> dict[str, Any]:
    """Writes a repository with ``commits`` first-parent commits on ``main``."""
    rng = random.Random(seed)
    project = Project(rng, commits)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    process = subprocess.Popen(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "core.compression=1",
            "fast-import",
            "--quiet",
            "--done",
            "--depth=0",
        ],
        stdin=subprocess.PIPE,
    )
    assert process.stdin is not None
    out = io.BufferedWriter(process.stdin, buffer_size=1 << 20)
    writer = HistoryWriter(out)
    author = AUTHORS[0]
    tip = writer.commit("main", "Initial commit", author, _changes(writer, project.initial(), []))
    side_commits = 0
    for index in range(1, commits):
        author = rng.choice(AUTHORS)
        if rng.random() < MERGE_RATE:
            project.count("merge")
            number = project.next_issue()
            if rng.random() < MERGE_FIX_SHARE:
                project.count("merge:fix")
                message, files = project.fix()
                renames: list[tuple[str, str]] = []
                pr_title = message.split("\n", 1)[0]
            else:
                message, files, renames = project.ordinary(index)
                pr_title = message.split("\n", 1)[0]
            changes = _changes(writer, files, renames)
            side = writer.commit("pr", message, author, changes, parent=tip)
            side_commits += 1
            branch = f"{author[1].split('@')[0]}/{rng.choice(VERBS)}-{rng.choice(NOUNS)}"
            merge_message = f"Merge pull request #{number} from {branch}\n\n{pr_title}"
            tip = writer.commit("main", merge_message, AUTHORS[1], changes, merge=side)
        elif rng.random() < FIX_RATE / (1 - MERGE_RATE):
            message, files = project.fix()
            tip = writer.commit("main", message, author, _changes(writer, files, []))
        else:
            message, files, renames = project.ordinary(index)
            tip = writer.commit("main", message, author, _changes(writer, files, renames))
    out.write(b"done\n")
    out.flush()
    process.stdin.close()
    if process.wait() != 0:
        raise SystemExit("git fast-import failed")
    return {"side_commits": side_commits, "mix": dict(sorted(project.stats.items()))}


def _changes(
    writer: HistoryWriter, files: list[tuple[str, bytes]], renames: list[tuple[str, str]]
) -> list[tuple[str, int | None, str | None]]:
    changes: list[tuple[str, int | None, str | None]] = [(new, None, old) for new, old in renames]
    changes += [(path, writer.blob(content), None) for path, content in files]
    return changes


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def prepare(workdir: Path, commits: int, seed: int) -> tuple[Path, dict[str, Any]]:
    """The cached repository for ``commits`` and ``seed``, generated when missing."""
    repo = workdir / f"repo-n{commits}-s{seed}-g{GENERATOR_VERSION}"
    info_path = repo / ".git" / "bench-info.json"
    if info_path.exists():
        info = json.loads(info_path.read_text())
        info["cached"] = True
        return repo, info
    building = repo.with_name(repo.name + ".tmp")
    shutil.rmtree(building, ignore_errors=True)
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"generating {commits} commits into {repo} ...", flush=True)
    started = time.perf_counter()
    info = generate(building, commits, seed)
    imported = time.perf_counter()
    _git(building, "update-ref", "-d", "refs/heads/pr")
    # Like a clone after gc: one delta-compressed pack and a commit-graph.
    _git(building, "repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=10")
    _git(building, "commit-graph", "write", "--reachable")
    _git(building, "gc", "--quiet", "--prune=now")
    finished = time.perf_counter()
    counted = int(_git(building, "rev-list", "--first-parent", "--count", "main"))
    if counted != commits:
        raise SystemExit(f"generated {counted} first-parent commits, expected {commits}")
    tree = _git(building, "ls-tree", "-r", "-l", "main").splitlines()
    tests = [int(line.split()[3]) for line in tree if "/test_" in line]
    info.update(
        commits=commits,
        seed=seed,
        generator_version=GENERATOR_VERSION,
        all_commits=int(_git(building, "rev-list", "--count", "--all")),
        files_at_head=len(tree),
        test_modules_at_head=len(tests),
        mean_test_module_bytes_at_head=int(statistics.mean(tests)) if tests else 0,
        pack_bytes=sum(p.stat().st_size for p in (building / ".git/objects/pack").iterdir()),
        fast_import_seconds=round(imported - started, 2),
        repack_seconds=round(finished - imported, 2),
    )
    (building / ".git" / "bench-info.json").write_text(json.dumps(info, indent=2))
    shutil.rmtree(repo, ignore_errors=True)
    building.rename(repo)
    info["cached"] = False
    return repo, info


# --------------------------------------------------------------------------------------
# Measuring.
# --------------------------------------------------------------------------------------


def _request(repo: Path) -> Any:
    from bugbout.core.mining import MiningRequest
    from bugbout.core.settings import ProjectSettings, TasksSettings

    return MiningRequest(
        repository=repo,
        project=ProjectSettings(source="src/pkg", tests="tests"),
        tasks=TasksSettings(limit=20),
    )


def mine(repo: Path) -> Any:
    from bugbout.plugins.miners.git_history import GitHistoryMiner, GitHistoryOptions

    return GitHistoryMiner(GitHistoryOptions()).mine(_request(repo))


def baseline_command(repo: Path) -> list[str]:
    return ["git", "-C", str(repo), "log", "--first-parent", "--numstat", "main"]


def miner_log_command(repo: Path) -> list[str]:
    """The ``git log`` the miner streams (from ``bugbout.core.git``), output discarded."""
    from bugbout.core.git import log_command

    return log_command(repo, "main", "0" * 32)


def run_command(command: list[str]) -> None:
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True)


def _rss_kib(field_name: str) -> int:
    """``VmRSS`` (now) or ``VmHWM`` (peak) of this process, in KiB (Linux only; else 0)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field_name + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def memory_probe(repo: Path) -> dict[str, Any]:
    """Run in a fresh process: peak RSS of one mine, then the Python heap peak of another."""
    import bugbout.plugins.miners.git_history  # noqa: F401  (imports before the baseline)

    _request(repo)
    gc.collect()
    before = _rss_kib("VmRSS")
    mine(repo)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    git_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    tracemalloc.start()
    mine(repo)
    _, heap_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "rss_before_kib": before,
        "peak_rss_kib": peak,
        "peak_rss_growth_kib": max(0, peak - before) if before else None,
        "git_child_peak_rss_kib": git_peak,
        "python_heap_peak_bytes": heap_peak,
    }


def profile(repo: Path, workdir: Path, commits: int, top: int) -> Path:
    profiler = cProfile.Profile()
    profiler.enable()
    mine(repo)
    profiler.disable()
    path = workdir / f"miner-n{commits}.prof"
    profiler.dump_stats(path)
    for order in ("tottime", "cumulative"):
        print(f"\n--- cProfile of one mine, top {top} by {order} (saved to {path}) ---")
        stream = io.StringIO()
        pstats.Stats(profiler, stream=stream).strip_dirs().sort_stats(order).print_stats(top)
        print("\n".join(line for line in stream.getvalue().splitlines()[6:] if line.strip()))
    return path


def main(argv: list[str] | None = None) -> int:  # noqa: PLR0915
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=20_000, metavar="N")
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR, metavar="DIR")
    parser.add_argument("--repeat", type=int, default=3, metavar="K")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, help="default: DIR/results-mining.json")
    parser.add_argument("--profile", action="store_true", help="also cProfile one mine")
    parser.add_argument("--profile-top", type=int, default=25)
    parser.add_argument("--memory-probe", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.memory_probe is not None:
        print(json.dumps(memory_probe(args.memory_probe)))
        return 0
    if args.commits < 2 or args.repeat < 1:
        parser.error("--commits must be at least 2 and --repeat at least 1")

    workdir = args.workdir.resolve()
    repo, info = prepare(workdir, args.commits, args.seed)
    if not info["cached"]:
        print(
            f"generated in {info['fast_import_seconds']}s (fast-import) + "
            f"{info['repack_seconds']}s (repack, commit-graph)"
        )
    print(f"repository: {repo} ({'cached' if info['cached'] else 'new'})")

    actions: dict[str, Callable[[], Any]] = {
        "git log --first-parent --numstat": lambda: run_command(baseline_command(repo)),
        "git log, the miner's command": lambda: run_command(miner_log_command(repo)),
        "miner (full walk)": lambda: mine(repo),
    }
    names = list(actions)
    print("warming up (one untimed run of each) ...", flush=True)
    result: Any = None
    for name in names:
        _, result = measure(actions[name])
    samples: dict[str, list[Sample]] = {name: [] for name in names}
    for round_index, order in enumerate(rotations(names, args.repeat), start=1):
        for name in order:
            sample, value = measure(actions[name])
            samples[name].append(sample)
            if value is not None:
                result = value
        walls = ", ".join(
            f"{label} {samples[name][-1].wall:.2f}s"
            for label, name in zip(("git-log", "miner's git-log", "miner"), names, strict=True)
        )
        print(f"  round {round_index}/{args.repeat}: {walls}", flush=True)

    probe = subprocess.run(
        [sys.executable, __file__, "--memory-probe", str(repo)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    memory = json.loads(probe.stdout.strip().splitlines()[-1])

    summaries = {name: summary(samples[name], children="git") for name in names}
    baseline = summaries[names[0]]["median_s"]
    miner = summaries[names[2]]["median_s"]
    ratio = miner / baseline if baseline else float("inf")
    # The same ratio in CPU time (user+sys of Python and of the git children): less moved
    # by other load on the machine than wall time, so a cross-check for noisy runs.
    base_cpu = summaries[names[0]]["median_cpu_git_s"] + summaries[names[0]]["median_cpu_python_s"]
    miner_cpu = summaries[names[2]]["median_cpu_git_s"] + summaries[names[2]]["median_cpu_python_s"]
    cpu_ratio = miner_cpu / base_cpu if base_cpu else float("inf")

    print()
    print(f"{'measure':<34} {'median':>8} {'min':>8} {'max':>8} {'py cpu':>8} {'git cpu':>8}")
    for name in names:
        s = summaries[name]
        print(
            f"{name:<34} {s['median_s']:>7.2f}s {s['min_s']:>7.2f}s {s['max_s']:>7.2f}s "
            f"{s['median_cpu_python_s']:>7.2f}s {s['median_cpu_git_s']:>7.2f}s"
        )
    print()
    print(
        f"miner: {len(result.tasks)} tasks, {result.examined} examined, excluded "
        + ", ".join(f"{k}={v}" for k, v in sorted(result.excluded.items()))
    )
    print(
        f"miner memory: peak RSS {memory['peak_rss_kib'] / 1024:.1f} MiB "
        f"(+{(memory['peak_rss_growth_kib'] or 0) / 1024:.1f} MiB over the imported "
        "interpreter), "
        f"Python heap peak {memory['python_heap_peak_bytes'] / 2**20:.1f} MiB, "
        f"git child peak RSS {memory['git_child_peak_rss_kib'] / 1024:.1f} MiB"
    )
    print(f"cpu-time ratio (cross-check, less sensitive to machine load): {cpu_ratio:.2f}x")
    print(f"mining/git-log ratio: {ratio:.2f}x (target <= {TARGET_RATIO}x)")
    if ratio > TARGET_RATIO:
        print(
            f"WARNING: the miner takes {ratio:.2f}x the time of git log --first-parent "
            f"--numstat, over the {TARGET_RATIO}x target (rerun with --profile to see why)"
        )

    report = {
        "benchmark": "mining",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "commits": args.commits,
        "repeat": args.repeat,
        "repository": str(repo),
        "repository_info": info,
        "environment": {
            "python": platform.python_version(),
            "git": _git(repo, "--version").strip(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
        },
        "timings": summaries,
        "miner": {
            "tasks": len(result.tasks),
            "examined": result.examined,
            "excluded": dict(sorted(result.excluded.items())),
            **memory,
        },
        "ratio": round(ratio, 3),
        "cpu_ratio": round(cpu_ratio, 3),
        "target_ratio": TARGET_RATIO,
        "over_target": ratio > TARGET_RATIO,
    }
    if args.profile:
        report["profile"] = str(profile(repo, workdir, args.commits, args.profile_top))
    output = args.output or workdir / "results-mining.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(report, indent=2) + "\n")
    print(f"results written to {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
