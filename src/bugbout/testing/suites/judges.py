"""The conformance suite of judge policies."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from bugbout.core.judge.judging import Judge, JudgeContext, outcome_of
from bugbout.core.store.records import Outcome, RunStatus, TestRun
from bugbout.core.store.verdict_records import SUITE, UNFIXED, Matrix, Verdict
from bugbout.testing.suites.base import PluginSuite

_LETTERS = {
    "P": Outcome.PASSED,
    "F": Outcome.FAILED,
    "E": Outcome.ERROR,
    "S": Outcome.SKIPPED,
    "X": Outcome.XFAILED,
}
TASK_ID = "conformance-task"
EXAMINERS = {"exam": "reproduce", "spec": "specify"}
"""The examiners of every sample matrix, with their assignments."""


def matrix(
    patches: list[str],
    tests: dict[str, str],
    *,
    vendors: dict[str, str | None] | None = None,
    runs: dict[str, TestRun] | None = None,
    task_id: str = TASK_ID,
) -> Matrix:
    """A matrix from one row per test: ``{"exam/test_a.py::t": "FPF"}`` gives the test's
    outcome on ``UNFIXED``, then on each of ``patches`` (``P``assed, ``F``ailed,
    ``E``rror, ``S``kipped, ``X``failed, ``.``: did not run). A test's author is its id's
    first path part (``suite``: the repository's own tests)."""
    columns = [UNFIXED, *patches]
    authors: dict[str, list[str]] = {}
    outcomes: dict[str, dict[str, Outcome]] = {column: {} for column in columns}
    for test, row in tests.items():
        if len(row) != len(columns):
            raise ValueError(f"{test}: {len(row)} outcomes for {len(columns)} columns")
        author = test.split("/", 1)[0]
        authors.setdefault(SUITE if author == "suite" else author, []).append(test)
        for column, letter in zip(columns, row, strict=True):
            if letter != ".":
                outcomes[column][test] = _LETTERS[letter]
    return Matrix(
        task_id=task_id,
        patches=columns,
        authors=authors,
        vendors=vendors or {},
        outcomes=outcomes,
        runs=runs or {},
    )


def sample_matrices() -> dict[str, Matrix]:
    """Matrices that cover what a judge meets: a clear winner, a split, a tie, breakages,
    self-support only, missing outcomes, a column whose test module did not import."""
    vendors: dict[str, str | None] = {
        "alpha": "openai",
        "beta": "anthropic",
        "gamma": "google",
        "exam": "anthropic",
        "spec": "openai",
    }
    return {
        "clear-winner": matrix(
            ["alpha", "beta"],
            {
                "exam/test_e.py::repro": "FPF",
                "spec/test_s.py::repro": "FPF",
                "spec/test_s.py::keeps": "PPP",
                "suite/test_old.py::old": "PPP",
            },
            vendors=vendors,
        ),
        "split": matrix(
            ["alpha", "beta", "gamma"],
            {
                "exam/test_e.py::one": "FPPF",
                "exam/test_e.py::two": "FPFF",
                "spec/test_s.py::one": "FFPP",
                "alpha/test_a.py::own": "FPFF",
                "beta/test_b.py::own": "FFPF",
                "suite/test_old.py::kept": "PPPF",
                "suite/test_old.py::changed": "PFFP",
                "suite/test_old.py::broken": "FFFF",
            },
            vendors=vendors,
        ),
        "tie": matrix(
            ["alpha", "beta"],
            {
                "exam/test_e.py::repro": "FPP",
                "spec/test_s.py::keeps": "PPF",
                "suite/test_old.py::old": "PPP",
            },
            vendors=vendors,
        ),
        "twins": matrix(
            ["beta", "alpha"],
            {"exam/test_e.py::repro": "FPP", "suite/test_old.py::old": "PPP"},
            vendors=vendors,
        ),
        "missing-outcomes": matrix(
            ["alpha", "beta"],
            {
                "exam/test_e.py::repro": "F.P",
                "exam/test_e.py::other": "EPS",
                "suite/test_old.py::old": "P.P",
            },
            vendors=vendors,
        ),
        "collection-error": matrix(
            ["alpha", "beta"],
            {"exam/test_e.py::repro": ".PF", "suite/test_old.py::old": "PPP"},
            runs={
                UNFIXED: TestRun(
                    label=UNFIXED,
                    status=RunStatus.OK,
                    collection_errors={"exam/test_e.py": "ImportError: cannot import name"},
                ),
            },
            vendors=vendors,
        ),
        "no-reproduction": matrix(
            ["alpha", "beta"],
            {
                "exam/test_e.py::passes_already": "PPP",
                "suite/test_old.py::old": "PPF",
            },
            vendors=vendors,
        ),
        "self-support-only": matrix(
            ["alpha", "beta"],
            {
                "alpha/test_a.py::own": "FPF",
                "beta/test_b.py::own": "FFP",
                "suite/test_old.py::old": "PPP",
            },
            vendors=vendors,
        ),
        "lone-patch": matrix(
            ["alpha"],
            {"exam/test_e.py::repro": "FP", "suite/test_old.py::old": "PP"},
            vendors=vendors,
        ),
        "fails-everything": matrix(
            ["alpha", "beta"],
            {
                "exam/test_e.py::one": "FPF",
                "exam/test_e.py::two": "FPF",
                "spec/test_s.py::one": "FPF",
                "suite/test_old.py::old": "PPP",
            },
            vendors=vendors,
        ),
    }


def context(matrix: Matrix, examiners: dict[str, str] | None = None) -> JudgeContext:
    """The judge context of a sample matrix: its examiners are :data:`EXAMINERS`."""
    known = EXAMINERS if examiners is None else examiners
    return JudgeContext(
        task_id=matrix.task_id,
        examiners={name: role for name, role in known.items() if name in matrix.authors},
    )


class JudgeSuite(PluginSuite):
    """Contract tests for a judge policy (``bugbout_judges``).

    The judge reads a cross-examination matrix and returns a
    :class:`~bugbout.core.store.verdict_records.Verdict` for its task and policy: a pick among the
    matrix's patches (never the unfixed code), or an abstention; it never picks a patch
    that only its own author's tests support, abstains when nothing reproduces the bug,
    cites only cells that exist, and is deterministic.
    """

    kind: ClassVar[str] = "judge"

    def judge(self, plugin: Any, matrix: Matrix) -> Verdict:
        """The judge's verdict on ``matrix``, checked to be a verdict for it."""
        verdict = plugin.judge(matrix, context(matrix))
        assert isinstance(verdict, Verdict), f"judge() returned {type(verdict).__name__}"
        return verdict

    @pytest.fixture(params=sorted(sample_matrices()))
    def sample(self, request: pytest.FixtureRequest) -> Matrix:
        """Each sample matrix in turn."""
        return sample_matrices()[request.param]

    def test_implements_the_judge_protocol(self, plugin_under_test: Any) -> None:
        assert isinstance(plugin_under_test, Judge)
        assert plugin_under_test.name == self.plugin

    def test_returns_a_verdict_for_the_task_and_policy(
        self, plugin_under_test: Any, sample: Matrix
    ) -> None:
        verdict = self.judge(plugin_under_test, sample)
        assert verdict.task_id == sample.task_id
        assert verdict.policy == self.plugin
        assert verdict.reason.strip(), "a verdict says why"

    def test_a_pick_is_one_of_the_patches_never_the_unfixed_code(
        self, plugin_under_test: Any, sample: Matrix
    ) -> None:
        verdict = self.judge(plugin_under_test, sample)
        candidates = [patch for patch in sample.patches if patch != UNFIXED]
        if verdict.pick is not None:
            assert verdict.pick in candidates
        assert set(verdict.approved) <= set(candidates)
        assert set(verdict.support) <= set(candidates)

    def test_abstains_when_nothing_reproduces_the_bug(self, plugin_under_test: Any) -> None:
        """No test fails on the unfixed code: no evidence that any patch fixes anything."""
        matrices = sample_matrices()
        for name in ("no-reproduction",):
            verdict = self.judge(plugin_under_test, matrices[name])
            assert verdict.pick is None, f"{name}: picked {verdict.pick!r} without evidence"
        bare = matrix(["alpha", "beta"], {"suite/test_old.py::old": "PPP"})
        assert self.judge(plugin_under_test, bare).pick is None
        empty = matrix(["alpha"], {})
        assert self.judge(plugin_under_test, empty).pick is None

    def test_abstains_without_any_patch(self, plugin_under_test: Any) -> None:
        verdict = self.judge(plugin_under_test, matrix([], {"exam/test_e.py::repro": "F"}))
        assert verdict.pick is None

    def test_never_picks_a_patch_supported_only_by_its_own_tests(
        self, plugin_under_test: Any
    ) -> None:
        """Nobody vouches for themselves: each patch passes only its own author's test."""
        matrices = sample_matrices()
        verdict = self.judge(plugin_under_test, matrices["self-support-only"])
        assert verdict.pick is None, f"picked {verdict.pick!r} on its own tests' word"
        selfish = matrix(
            ["selfish", "honest"],
            {
                "selfish/test_s.py::mine": "FPF",
                "exam/test_e.py::repro": "FFP",
                "suite/test_old.py::old": "PPP",
            },
        )
        assert self.judge(plugin_under_test, selfish).pick != "selfish"

    def test_never_picks_a_patch_that_passes_no_reproduction(self, plugin_under_test: Any) -> None:
        verdict = self.judge(plugin_under_test, sample_matrices()["fails-everything"])
        assert verdict.pick != "beta"

    def test_every_cited_cell_exists_in_the_matrix(
        self, plugin_under_test: Any, sample: Matrix
    ) -> None:
        verdict = self.judge(plugin_under_test, sample)
        tests = {test for tests in sample.authors.values() for test in tests}
        for cell in verdict.cells:
            assert cell.patch in sample.patches, f"{cell}: no such column"
            assert cell.test in tests, f"{cell}: no such test"
            assert cell.outcome == outcome_of(sample, cell.patch, cell.test), (
                f"{cell}: the matrix says {outcome_of(sample, cell.patch, cell.test)}"
            )

    def test_is_deterministic(self, plugins: Any, plugin_under_test: Any, sample: Matrix) -> None:
        first = self.judge(plugin_under_test, sample)
        again = self.judge(plugin_under_test, sample.model_copy(deep=True))
        fresh = self.judge(plugins.create(self.kind, self.plugin, dict(self.options)), sample)
        assert first == again == fresh

    def test_does_not_change_the_matrix(self, plugin_under_test: Any, sample: Matrix) -> None:
        before = sample.model_dump()
        self.judge(plugin_under_test, sample)
        assert sample.model_dump() == before

    def test_never_picks_a_patch_whose_run_was_tampered_with(self, plugin_under_test: Any) -> None:
        """A ``tampered`` column proves nothing, however well its outcomes look: the
        cheat passes everything, the honest patch only what it fixes."""
        tampered = TestRun(
            label="cheat",
            status=RunStatus.TAMPERED,
            tampering=["canary tests/test_x.py::test_y must fail but passed"],
        )
        rows = {"exam/test_e.py::repro": "FPP", "suite/test_old.py::old": "PPP"}
        for order in (["cheat", "honest"], ["honest", "cheat"]):
            sample = matrix(order, rows, runs={"cheat": tampered})
            verdict = self.judge(plugin_under_test, sample)
            assert verdict.pick != "cheat", verdict.reason  # a policy may still abstain
            assert "cheat" not in verdict.approved
        alone = matrix(["cheat"], {"exam/test_e.py::repro": "FP"}, runs={"cheat": tampered})
        assert self.judge(plugin_under_test, alone).pick is None
        unfixed = tampered.model_copy(update={"label": UNFIXED})
        poisoned = matrix(["honest"], {"exam/test_e.py::repro": "FP"}, runs={UNFIXED: unfixed})
        assert self.judge(plugin_under_test, poisoned).pick is None
