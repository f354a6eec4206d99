from typing import Any, ClassVar

from bugbout.judges import Judge
from bugbout.testing.suites import JudgeSuite
from bugbout.testing.suites.judges import context, matrix


class Test__TITLE__(JudgeSuite):
    plugin = "__NAME__"
    options: ClassVar[dict[str, Any]] = {}  # what the suite builds it with, as in bugbout.yaml

    def test_abstains_when_every_fix_changes_a_repository_test(
        self, plugin_under_test: Judge
    ) -> None:
        # one row per test: its outcome on the unfixed code, then with each patch
        sample = matrix(
            ["alpha", "beta"],
            {"exam/test_e.py::repro": "FPP", "suite/test_old.py::old": "PFF"},
        )
        verdict = plugin_under_test.judge(sample, context(sample))
        assert verdict.pick is None, verdict.reason
