"""Verdict runs that follow the change: the coverage map of the unfixed code, what a patch
changes, each patch's selection of the suite, and (for real, on a small repository) that
``verdicts.tests=affected`` finds every regression ``all`` finds."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import components
from bugbout.core.audit.audit_gate import run_gate
from bugbout.core.audit.auditing import AuditRequest, classify
from bugbout.core.audit.base_run import run_base
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings, ProjectSettings
from bugbout.core.crossexam.crossexam import cross_examine
from bugbout.core.plumbing.bench import Bench
from bugbout.core.plumbing.confinement import confine as confinement
from bugbout.core.plumbing.environments.environment import Environment, EnvironmentRequest
from bugbout.core.plumbing.selection.affected import (
    BaseRun,
    CoverageMap,
    Selection,
    changed_in_functions,
    read_coverage,
    select,
    selections,
)
from bugbout.core.plumbing.testruns.timeouts import killed, timeouts
from bugbout.core.plumbing.trees.checkout import Checkouts
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.plumbing.trees.patch import diff_trees
from bugbout.core.store.race_records import Attempt, AttemptStatus, ChangeArea
from bugbout.core.store.records import Oracle, Outcome, RunStatus, Task, TaskIssue, TestRun
from bugbout.core.store.verdict_records import SUITE, UNFIXED
from bugbout.testing import RepositoryBuilder
from runners import pytest_runner


def lines(*records: object) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


# -- the map, as the code under test's process wrote it ---------------------------------------


def test_the_map_keeps_well_formed_records_and_drops_the_rest() -> None:
    first = lines(
        {"file": 0, "path": "src/shop/cart.py"},
        {"file": 1, "path": "../outside.py"},  # not inside the tree: dropped
        {"function": 0, "file": 0, "line": 4},
        {"function": 1, "file": 1, "line": 1},  # in a dropped file: dropped
        {"function": 2, "file": 0, "line": "9"},  # not a line number
        {"test": "tests/test_a.py::test_one", "functions": [0]},
        {"test": "tests/test_a.py::test_two", "functions": [1]},  # names a dropped function
        {"test": "tests/test_a.py::test_three", "functions": [7]},  # never announced
        {"test": 5, "functions": []},
        {"outside": [0]},
        {"untraced": [0]},
    )
    second = (
        lines(
            {"file": 4, "path": "src/shop/prices.py"},  # another process numbers its own way
            {"function": 3, "file": 4, "line": 2},
            {"function": 9, "file": 4, "line": 7},
            {"test": "tests/test_a.py::test_one", "functions": [3]},
            {"test": "tests/test_a.py::test_four", "functions": [9]},
            {"test": "tests/test_a.py::test_five", "functions": [9]},
        )
        + b"not json\n"
        + b'["a list"]\n'
    )
    found = read_coverage([first, second])
    assert found.files == ["src/shop/cart.py", "src/shop/prices.py"]
    assert found.functions == [(0, 4), (1, 2), (1, 7)]
    one, four = found.tests["tests/test_a.py::test_one"], found.tests["tests/test_a.py::test_four"]
    assert found.traces[one] == [0, 1]  # both processes' functions
    assert found.tests["tests/test_a.py::test_five"] == four  # one trace for both
    assert set(found.tests) == {f"tests/test_a.py::test_{n}" for n in ("one", "four", "five")}
    assert found.files_of("tests/test_a.py::test_one") == {"src/shop/cart.py", "src/shop/prices.py"}
    assert found.outside == [0] and found.untraced == [0]


def run_of(outcomes: dict[str, Outcome], status: RunStatus = RunStatus.OK) -> TestRun:
    return TestRun(label="baseline", status=status, outcomes=outcomes)


PASSED, FAILED = Outcome.PASSED, Outcome.FAILED
BASE = BaseRun(
    task_id="t",
    run=run_of(
        {
            "tests/test_cart.py::test_total": PASSED,
            "tests/test_cart.py::test_empty": PASSED,
            "tests/test_names.py::test_title": PASSED,
            "tests/test_names.py::test_broken": FAILED,
            "tests/test_names.py::test_untraced": PASSED,
            "tests/test_other.py::test_other": PASSED,
        }
    ),
    coverage=CoverageMap(
        files=["src/shop/cart.py", "src/shop/prices.py", "src/shop/names.py", "src/shop/boot.py"],
        # cart.total, prices.unit_price, prices.discount, names.title, boot.start
        functions=[(0, 4), (1, 4), (1, 9), (2, 1), (3, 1)],
        traces=[[0, 1], [0], [3], [], [0, 2]],
        tests={
            "tests/test_cart.py::test_total": 0,
            "tests/test_cart.py::test_empty": 4,
            "tests/test_names.py::test_title": 2,
            "tests/test_names.py::test_broken": 2,
            "tests/test_other.py::test_other": 3,
        },
        outside=[4],
        untraced=[2],
    ),
)


def test_a_patch_runs_the_tests_that_ran_what_it_changed_and_every_test_not_passing() -> None:
    chosen = select(BASE, {"src/shop/prices.py": frozenset({4})}, suite=("tests",))
    assert not chosen.everything
    runs = {test for test in BASE.run.outcomes if chosen.runs(test)}
    assert runs == {
        "tests/test_cart.py::test_total",  # ran unit_price
        "tests/test_names.py::test_broken",  # failed on the unfixed code
        "tests/test_names.py::test_untraced",  # the map does not know it
    }  # test_empty ran prices.py too, but only discount
    assert set(chosen.targets) == {"tests/test_cart.py", "tests/test_names.py"}
    unstable = select(BASE, {}, suite=("tests",), always=["tests/test_other.py::test_other"])
    assert unstable.runs("tests/test_other.py::test_other")
    nothing_ran_it = select(BASE, {"src/shop/prices.py": frozenset({30})}, suite=("tests",))
    assert not nothing_ran_it.runs("tests/test_cart.py::test_total")


@pytest.mark.parametrize(
    ("scope", "status", "why"),
    [
        ({"src/shop/prices.py": None}, RunStatus.OK, "src/shop/prices.py changes outside"),
        ({"src/shop/boot.py": frozenset({1})}, RunStatus.OK, "src/shop/boot.py runs outside"),
        ({"src/shop/names.py": frozenset({1})}, RunStatus.OK, "src/shop/names.py was imported"),
        ({}, RunStatus.TIMEOUT, "the base run ended timeout"),
    ],
)
def test_what_no_map_can_vouch_for_runs_the_whole_suite(
    scope: dict[str, frozenset[int] | None], status: RunStatus, why: str
) -> None:
    base = BASE.model_copy(update={"run": BASE.run.model_copy(update={"status": status})})
    chosen = select(base, scope, suite=("tests",))
    assert chosen.everything.startswith(why)
    assert chosen.targets == ("tests",) and not chosen.skip


def test_selections_unite_for_the_unfixed_column() -> None:
    one = Selection(("tests/a.py", "tests/b.py"), frozenset({"tests/a.py::x", "tests/b.py::y"}))
    two = Selection(("tests/b.py",), frozenset())
    both = one.union(two)
    assert both.runs("tests/b.py::y") and not both.runs("tests/a.py::x")
    assert both.runs("tests/a.py::z") and not both.runs("tests/c.py::z")


def test_a_patch_changes_the_functions_its_lines_lie_in_or_else_the_module(
    tmp_path: Path,
) -> None:
    base = tmp_path / "base"
    work = tmp_path / "work"
    text = "RATE = 2\n\n\ndef price(x):\n    return x * RATE\n"
    for tree in (base, work):
        (tree / "src/shop").mkdir(parents=True)
        (tree / "src/shop/prices.py").write_text(text)
        (tree / "src/shop/data.json").write_text("{}")

    def scope(files: dict[str, str | None]) -> dict[str, frozenset[int] | None]:
        for path, content in files.items():
            if content is None:
                (work / path).unlink()
            else:
                (work / path).write_text(content)
        patch = diff_trees(base, work, source="src/shop", tests="tests")
        found = changed_in_functions(
            base, patch.source, patch.area(ChangeArea.SOURCE), pytest_runner()
        )
        for path in files:  # back to the base for the next case
            if (base / path).exists():
                (work / path).write_text((base / path).read_text())
            else:
                (work / path).unlink()
        return found

    prices = "src/shop/prices.py"
    assert scope({prices: text.replace("x * RATE", "x * RATE + 1")}) == {prices: frozenset({4})}
    assert scope({prices: text + "\n\ndef helper():\n    return 1\n"}) == {prices: None}
    assert scope({prices: text.replace("RATE = 2", "RATE = 3")}) == {prices: None}
    assert scope({prices: text.replace("def price", "@staticmethod\ndef price")}) == {prices: None}
    assert scope({prices: text.replace("RATE = 2\n", "RATE = 2\n# two\n")}) == {prices: frozenset()}
    assert scope({"src/shop/data.json": '{"a": 1}'}) == {"src/shop/data.json": None}
    assert scope({"src/shop/new.py": "def f():\n    return 1\n"}) == {"src/shop/new.py": None}
    assert scope({"src/shop/sitecustomize.py": "X = 1\n"}) == {"src/shop/sitecustomize.py": None}
    assert scope({prices: None}) == {prices: None}  # deleted


def test_timeouts_are_said_in_one_sentence_with_what_to_do() -> None:
    run = TestRun(label="x", status=RunStatus.TIMEOUT, detail="killed after 600 s\n...")
    assert killed(run) == "killed after 600 s"
    assert killed(run.model_copy(update={"status": RunStatus.OK})) == ""
    assert timeouts([]) is None
    assert timeouts([("a", killed(run)), ("b", killed(run))]) == (
        "suite timed out after 600 s on 2 patches: "
        "raise verdicts.timeout or use verdicts.tests=affected"
    )
    assert timeouts([(f"t/{UNFIXED}", "killed after 60 s")]) == (
        "suite timed out after 60 s on the unfixed code: "
        "raise verdicts.timeout or use verdicts.tests=affected"
    )


# -- for real: affected finds what all finds ---------------------------------------------------

PRICES = "PRICES = {'apple': 3, 'pear': 5}\n\n\ndef unit_price(item):\n    return PRICES[item]\n"
CART = (
    "from shop.prices import unit_price\n\n\n"
    "def total(items):\n    return sum(unit_price(item) for item in items)\n"
)
RECEIPT = (
    "from shop.cart import total\n\n\ndef receipt(items):\n    return 'total: %d' % total(items)\n"
)
NAMES = "def shout(name):\n    return name\n"
TITLES = "def title(name):\n    return name.title()\n"
CONFTEST = (
    "import pytest\n\nfrom shop.cart import total\n\n\n"
    "@pytest.fixture(scope='session')\ndef basket_total():\n    return total(['apple', 'pear'])\n"
)
NAME_TESTS = "".join(
    f"\n\ndef test_title_{n}():\n    assert title('ann {n}') == 'Ann {n}'\n" for n in range(20)
)
SHOP_TESTS = {
    "tests/conftest.py": CONFTEST,
    # three hops from prices.py: receipt -> cart -> prices
    "tests/test_receipt.py": "from shop.receipt import receipt\n\n\n"
    "def test_receipt():\n    assert receipt(['pear']) == 'total: 5'\n",
    # reaches prices.py only through a session fixture computed in another test's setup
    "tests/test_basket.py": "def test_first(basket_total):\n    assert basket_total\n\n\n"
    "def test_basket(basket_total):\n    assert basket_total == 8\n",
    "tests/test_names.py": "from shop.names import shout\nfrom shop.titles import title\n"
    + NAME_TESTS
    + "\n\ndef test_shout():\n    assert shout('a') == 'A'\n",  # fails on the unfixed code
}  # fmt: skip


class Shop:
    """A small shop package with a bug in ``shout`` and a suite that reaches ``unit_price``
    from afar."""

    def __init__(self, root: Path, plugins: Plugins) -> None:
        repo = RepositoryBuilder(root / "repo")
        initial = repo.commit(
            "Initial",
            {
                "pyproject.toml": '[project]\nname = "shop"\nrequires-python = ">=3.9"\n',
                "src/shop/__init__.py": "",
                "src/shop/prices.py": PRICES,
                "src/shop/cart.py": CART,
                "src/shop/receipt.py": RECEIPT,
                "src/shop/names.py": NAMES,
                "src/shop/titles.py": TITLES,
                **SHOP_TESTS,
            },
        )
        fixed = NAMES.replace("return name\n", "return name.upper()\n")
        fix_tests = (
            "from shop.names import shout\nfrom shop.titles import title\n\n\n"
            "def test_loud():\n    assert shout('b') == 'B'\n\n\n"
            "def test_title_kept():\n    assert title('b') == 'B'\n"
        )
        fix = repo.commit(
            "Fix shout (#1)", {"src/shop/names.py": fixed, "tests/test_shout.py": fix_tests}
        )
        self.repo = repo.path
        self.task = Task(
            id=Task.id_for(fix), sha=fix, parent=initial, date="2023-11-14T23:13:20+00:00",
            title="Fix shout (#1)", issue=TaskIssue(number=1),
            source_files=["src/shop/names.py"], test_files=["tests/test_shout.py"],
            changed_test_files=["tests/test_shout.py"],
            added_tests=["tests/test_shout.py::test_loud"],
        )  # fmt: skip
        self.oracle = Oracle(
            task_id=self.task.id,
            status="ok",
            fail_to_pass=["tests/test_shout.py::test_loud"],
            fail_on_base=["tests/test_names.py::test_shout"],
        )
        self.project = ProjectSettings(source="src/shop", tests="tests")
        settings = BoutSettings(project=self.project, root=self.repo)
        self.home = root / "home"
        self.git = Git(self.repo)
        self.checkouts = Checkouts(self.git, self.home / "checkouts")
        self.base = self.checkouts.base(self.task.parent)
        self.environment: Environment = plugins.create("environment", "interpreter").build(
            EnvironmentRequest(project=self.project, tree=self.checkouts.base(fix), home=self.home)
        )
        sandbox = plugins.create("sandbox", "bubblewrap")
        self.confine = confinement.test_confinement(
            settings.limits.tests,
            sandbox,
            self.home,
            confinement.masked_paths(settings.repository, settings.store_dir, self.home),
        )
        self.work = root / "attempts"

    def attempt(self, name: str, files: dict[str, str]) -> Attempt:
        work = self.checkouts.working_copy(self.task.parent, self.work / name)
        for path, text in files.items():
            (work / path).write_text(text)
        patch = diff_trees(self.base, work, source="src/shop", tests="tests")
        return Attempt(
            task_id=self.task.id, contestant=name, key=name, agent="command",
            status=AttemptStatus.FINISHED, patch=patch, logdir=str(work),
        )  # fmt: skip

    @property
    def bench(self) -> Bench:
        return Bench(
            self.checkouts, self.environment, self.project, 120, self.confine, ("tests",),
            pytest_runner(),
        )  # fmt: skip


@pytest.fixture
def shop(tmp_path: Path, plugins: Plugins) -> Iterator[Shop]:
    if not components.FOUND["bubblewrap"]():
        components.missing("bubblewrap", "the test runs are confined by bubblewrap")
    made = Shop(tmp_path, plugins)
    with made.git:
        yield made


@pytest.mark.slow
def test_affected_finds_every_regression_all_finds(shop: Shop) -> None:
    base = run_base(shop.task, shop.bench, coverage=True)
    assert base.run.status == RunStatus.OK
    assert base.coverage.tests  # the map was made, in the tests' own environment
    # a fix that also breaks unit_price: every caller, however far, sees it
    breaking = shop.attempt(
        "breaking",
        {
            "src/shop/names.py": NAMES.replace("return name\n", "return name.upper()\n"),
            "src/shop/prices.py": PRICES.replace("PRICES[item]", "PRICES[item] * 100"),
        },
    )
    chosen = selections(
        base, shop.oracle, [breaking], base_tree=shop.base, suite=("tests",), runner=pytest_runner()
    )
    found = {}
    for mode, selection in (("all", None), ("affected", chosen["breaking"])):
        gate, baseline = run_gate(
            shop.task, breaking, shop.bench, tests=["tests"], baseline=base.run, selection=selection
        )
        found[mode] = (
            classify(
                AuditRequest.hidden(shop.task, shop.oracle, breaking, gate=gate, baseline=baseline)
            ),
            gate,
        )
    (every, every_gate), (affected, affected_gate) = found["all"], found["affected"]
    assert set(every.regressions) == {
        "tests/test_receipt.py::test_receipt",
        "tests/test_basket.py::test_basket",
    }
    assert affected.regressions == every.regressions
    assert affected.passing == every.passing == ["tests/test_shout.py::test_loud"]
    assert affected.verdict == every.verdict
    # and it ran less: the title tests reach no changed function
    assert "tests/test_names.py::test_title_0" in every_gate.outcomes
    assert "tests/test_names.py::test_title_0" not in affected_gate.outcomes
    assert "tests/test_names.py::test_shout" in affected_gate.outcomes  # failing on base
    assert "tests/test_shout.py::test_title_kept" in affected_gate.outcomes  # hidden: all run


@pytest.mark.slow
def test_a_test_that_switches_the_tracer_off_is_run_for_every_patch(shop: Shop) -> None:
    tree = shop.checkouts.working_copy(shop.task.parent, shop.work / "tracer")
    (tree / "tests/test_quiet.py").write_text(
        "import sys\nfrom shop.titles import title\n\n\n"
        "def test_quiet():\n"  # the tracer of every Python: its finder, its monitoring tool
        "    sys.meta_path[:] = [f for f in sys.meta_path if 'bugbout' not in type(f).__module__]\n"
        "    monitoring = getattr(sys, 'monitoring', None)\n"
        "    for tool in range(6) if monitoring else ():\n"
        "        if monitoring.get_tool(tool) == 'bugbout':\n"
        "            monitoring.set_events(tool, 0)\n"
        "    assert title('a') == 'A'\n"
    )
    from bugbout.core.plumbing.testruns.testrun import run_tests

    chunks: list[bytes] = []
    run = run_tests(
        shop.environment, tree, ["tests"], project=shop.project, label="base",
        timeout=120, confine=shop.confine, coverage=chunks,
    )  # fmt: skip
    coverage = read_coverage(chunks)
    assert run.outcomes["tests/test_quiet.py::test_quiet"] == Outcome.PASSED
    assert "tests/test_quiet.py::test_quiet" not in coverage.tests
    basket = coverage.files_of("tests/test_basket.py::test_basket")
    assert {"src/shop/cart.py", "src/shop/prices.py"} <= basket  # through the session fixture
    receipt = coverage.files_of("tests/test_receipt.py::test_receipt")
    assert receipt == {"src/shop/receipt.py", "src/shop/cart.py", "src/shop/prices.py"}
    base = BaseRun(task_id=shop.task.id, run=run, coverage=coverage)
    assert select(base, {"src/shop/prices.py": frozenset({4})}, suite=("tests",)).runs(
        "tests/test_quiet.py::test_quiet"
    )


@pytest.mark.slow
def test_the_matrix_answers_for_the_suite_tests_a_patch_cannot_affect(shop: Shop) -> None:
    base = run_base(shop.task, shop.bench, coverage=True)
    breaking = shop.attempt("breaking", {"src/shop/prices.py": PRICES.replace("]\n", "] * 100\n")})
    fixing = shop.attempt(
        "fixing", {"src/shop/names.py": NAMES.replace("name\n", "name.upper()\n")}
    )
    chosen = selections(
        base,
        shop.oracle,
        [breaking, fixing],
        base_tree=shop.base,
        suite=("tests",),
        runner=pytest_runner(),
    )
    matrix = cross_examine(
        shop.task, [breaking, fixing], shop.bench, run_suite=True, suite=chosen, jobs=2
    )
    receipt, title = "tests/test_receipt.py::test_receipt", "tests/test_names.py::test_title_0"
    assert matrix.outcome(UNFIXED, receipt) == Outcome.PASSED
    assert matrix.outcome("breaking", receipt) == Outcome.FAILED
    assert receipt not in matrix.runs["fixing"].outcomes  # not run: it cannot change
    assert matrix.outcome("fixing", receipt) == Outcome.PASSED  # the unfixed outcome
    shout = "tests/test_names.py::test_shout"
    assert matrix.runs["fixing"].outcomes[shout] == Outcome.PASSED  # names.py changed: run
    assert shout in matrix.runs["breaking"].outcomes  # failing on the unfixed code: run
    assert title not in matrix.authors[SUITE]  # no patch can affect it: in no column
