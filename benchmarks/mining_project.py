"""The project the mining benchmark generates: source modules made of functions, test
modules made of tests, and the commits that change them (fixes of every kind the miner
tells apart, ordinary changes, releases, renames). ``mining_history`` writes them out."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

# Bump when the generated history changes, so cached repositories are not reused.
GENERATOR_VERSION = 3

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
            cases = [f"({i}, {i * 3 + 1})" for i in range(self.cases)]
            if self.cases < 3:
                decorator = [f'@pytest.mark.parametrize("value, expected", [{", ".join(cases)}])']
            else:  # as formatters write it: one case a line, the bracket closed at column 0
                decorator = ["@pytest.mark.parametrize(", '    ("value", "expected"),', "    ["]
                decorator += [f"        {case}," for case in cases] + ["    ],", ")"]
            self.text = "\n".join(
                [
                    *decorator,
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
