"""A project's own autouse fixture may parametrize every test, the canaries too, and skip
one of its cases (markupsafe skips its C speedups' case where they are not built): the
canary that must pass then passes in one case and is skipped in the other, as the
project's own tests are, and the run is honest. A conftest that skips the canary's every
case, or skips a case of it for a reason none of the run's own tests was skipped for, is
still caught. Real pytest runs, today's and an old one."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.store.records import Outcome, RunStatus
from old_pytests import old_pytest
from test_pytest_eras import HOST, _run, write

FLAVOURS = """
    import pytest

    BUILT = False


    @pytest.fixture(scope="session", autouse=True, params=["plain", "built"])
    def flavour(request):
        if request.param == "built" and not BUILT:
            pytest.skip("the extension is not built")
        return request.param
"""
TESTS = """
    import pkg


    def test_fixed():
        assert pkg.VALUE == 2


    def test_kept():
        assert pkg.VALUE == 1
"""
SKIP_ALL = """

    def pytest_collection_modifyitems(items):
        for item in items:
            item.add_marker(pytest.mark.skip(reason="the extension is not built"))
"""
SKIP_STRANGERS = """

    def pytest_runtest_setup(item):
        if "plain" in item.name and "test_it.py" not in str(item.fspath):
            pytest.skip("not here")
"""


def _tree(root: Path, conftest: str) -> Path:
    return write(
        root,
        {
            "pkg/__init__.py": "VALUE = 1\n",
            "tests/conftest.py": conftest,
            "tests/test_it.py": TESTS,
        },
    )


@pytest.mark.parametrize("version", ["today", "3.0.7"])
def test_a_canary_case_the_project_s_fixture_skips_is_no_tampering(
    version: str, tmp_path: Path
) -> None:
    python = HOST if version == "today" else str(old_pytest(version))
    run = _run(python, _tree(tmp_path / "tree", FLAVOURS), ["tests/test_it.py"])
    assert run.status == RunStatus.OK, run.tampering
    assert run.tampering == []
    assert run.outcomes == {
        "tests/test_it.py::test_fixed[plain]": Outcome.FAILED,
        "tests/test_it.py::test_fixed[built]": Outcome.SKIPPED,
        "tests/test_it.py::test_kept[plain]": Outcome.PASSED,
        "tests/test_it.py::test_kept[built]": Outcome.SKIPPED,
    }
    assert set(run.skips) == {
        "tests/test_it.py::test_fixed[built]",
        "tests/test_it.py::test_kept[built]",
    }  # no canary's, no twin's


@pytest.mark.parametrize(
    ("conftest", "why"),
    [(SKIP_ALL, "must pass but skipped"), (SKIP_STRANGERS, "[plain] must pass but skipped")],
)
def test_a_conftest_that_skips_canaries_is_still_caught(
    conftest: str, why: str, tmp_path: Path
) -> None:
    run = _run(HOST, _tree(tmp_path / "tree", FLAVOURS + conftest), ["tests/test_it.py"])
    assert run.status == RunStatus.TAMPERED
    assert any(why in reason for reason in run.tampering), run.tampering
