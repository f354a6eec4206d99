"""A reason names the Python a fix was written for only when the fix shows it: a refactor
whose many hunks include one under ``if PY2:``, or a fix that defines a flag from
``sys.version_info``, is not a fix of Python 2 alone (toolz 2021, attrs 2018); tests that
``inspect.getargspec`` a builtin fail on Python 3.4 and later, which gives builtins
signatures (toolz 2014). Real git, real pytest (of the era for the last)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.contract.settings import PluginChoice
from bugbout.core.store.records import Oracle
from bugbout.core.truth.python2 import stdlib_note
from bugbout.testing import RepositoryBuilder
from history import calc_settings, ground_truth
from old_pytests import old_pytest

PASSED_BEFORE = (
    "no test failed before the fix and passed after it: the test the fix added or changed "
    "passed before it too: in this environment no test in its history fails without the fix"
)
WARN = """\
import sys
import warnings

warnings.warn("calc.compat is deprecated", DeprecationWarning{level})
"""
RENAMED = """\
import sys

PY2 = sys.version_info[0] == 2


def {name}(value):
    return value.strip()


if PY2:

    def {name}_bytes(value):
        return value.strip()


def shout(value):
    return {name}(value).upper()
{tail}"""
TEST = """\
from calc.text import shout


def test_shout():
    assert shout(" a ") == "A"
"""


def _fix(tmp_path: Path, before: dict[str, str], after: dict[str, str]) -> str:
    """The reason of the fix from ``before`` to ``after`` (with ``TEST`` added)."""
    repo = RepositoryBuilder(tmp_path / "repo")
    files = {"pyproject.toml": '[project]\nname = "calc"\n', "src/calc/__init__.py": ""}
    repo.commit("Initial", files | before)
    fix = repo.commit("Fix the text helpers (#1)", after | {"tests/test_text.py": TEST})
    oracle = ground_truth(calc_settings(repo.path)).root[fix[:12]]
    assert oracle.status == "no-fail-to-pass", oracle.reason
    return oracle.reason or ""


@pytest.mark.slow
def test_a_flag_defined_from_the_version_is_not_a_python_2_fix(tmp_path: Path) -> None:
    """toolz 55c60e9da05f: a warning's stacklevel, and ``PYPY`` defined in another module."""
    text = RENAMED.format(name="clean", tail="")
    reason = _fix(
        tmp_path,
        {"src/calc/compat.py": WARN.format(level=""), "src/calc/text.py": text},
        {
            "src/calc/compat.py": WARN.format(level=", stacklevel=2"),
            "src/calc/text.py": text.replace(
                "PY2 = ", "PYPY = hasattr(sys, 'pypy_version_info') and sys.version_info[0] > 2\n"
                "PY2 = ",
            ),
        },
    )  # fmt: skip
    assert reason == PASSED_BEFORE


@pytest.mark.slow
def test_a_refactor_with_one_hunk_under_py2_is_not_a_python_2_fix(tmp_path: Path) -> None:
    """attrs 73ae718ec5f4: a rename whose hunks include one under ``if PY2:``."""
    tail = "\n" * 8 + "\ndef whisper(value):\n    return {name}(value).lower()\n"
    reason = _fix(
        tmp_path,
        {"src/calc/text.py": RENAMED.format(name="clean", tail=tail.format(name="clean"))},
        {"src/calc/text.py": RENAMED.format(name="tidy", tail=tail.format(name="tidy"))},
    )
    assert reason == PASSED_BEFORE


@pytest.mark.slow
def test_a_fix_behind_py2_still_says_so(tmp_path: Path) -> None:
    """Every hunk of the source under the switch: the note stays."""
    reason = _fix(
        tmp_path,
        {"src/calc/text.py": RENAMED.format(name="clean", tail="")},
        {
            "src/calc/text.py": RENAMED.format(name="clean", tail="").replace(
                "        return value.strip()", "        return value.strip(b' ')"
            )
        },
    )
    assert reason == (
        f"{PASSED_BEFORE}; the fix's lines test for Python 2 (`PY2` in src/calc/text.py): it "
        "may fix a bug of Python 2 alone, which no Python bugbout runs tests on (3.6 and "
        "later) has"
    )


ARITY = """\
import inspect


def arity(func):
    try:
        return len(inspect.getargspec(func).args){fixed}
    except TypeError:  # a builtin, until Python 3.4 gave builtins signatures
        return None
"""
ARITY_TEST = """\
from calc.arity import arity

BUILTINS = {name: arity(func) for name, func in [("sorted", sorted), ("len", len)]}


def test_arity():
    assert arity(lambda a, b: 0) == 2
"""


def _fixed_on_pytest_4(tmp_path: Path, name: str, code: str, bug: str, test: str) -> Oracle:
    """The ground truth, on Python 3.6 with pytest 4.6, of a fix of module ``name`` (its
    ``code`` with ``{fixed}`` the ``bug`` before the fix, nothing after) adding ``test``."""
    repo = RepositoryBuilder(tmp_path / "repo")
    files = {"pyproject.toml": '[project]\nname = "calc"\n', "src/calc/__init__.py": ""}
    module = f"src/calc/{name}.py"
    repo.commit("Initial", files | {module: code.format(fixed=bug)})
    fix = repo.commit(
        f"Fix {name} (#1)", {module: code.format(fixed=""), f"tests/test_{name}.py": test}
    )
    settings = calc_settings(repo.path).model_copy(
        update={"environment": PluginChoice(name="interpreter", path=str(old_pytest("4.6.11")))}
    )
    return ground_truth(settings).root[fix[:12]]


@pytest.mark.slow
def test_getargspec_of_a_builtin_names_the_python_it_was_written_for(tmp_path: Path) -> None:
    """toolz 230dc7f20551 (2014) on Python 3.6 with the pytest of its era."""
    oracle = _fixed_on_pytest_4(tmp_path, "arity", ARITY, " - 1", ARITY_TEST)
    assert oracle.status == "environment-error"
    assert (oracle.reason or "").endswith(
        "could not collect any test (tests/test_arity.py: ValueError: Function has "
        "keyword-only parameters or annotations, use getfullargspec() API which can support "
        "them): `inspect.getargspec` refuses a callable with keyword-only parameters or "
        "annotations, as builtins have on Python 3.4 and later: the code was written for an "
        "older Python (3.3 or 2), which bugbout cannot run tests on (3.6 and later)"
    ), oracle.reason


SIGN = """\
from itertools import izip


def sign(value, key):
    return "".join(a + b for a, b in izip(value, key)){fixed}
"""
SIGN_TEST = """\
from calc.sign import sign


def test_sign():
    assert sign("ab", "cd") == "acbd"
"""


@pytest.mark.slow
def test_an_import_python_36_names_no_module_of_is_read_from_the_run(tmp_path: Path) -> None:
    """itsdangerous d5b350b46bc2 (2011): Python 3.6's ImportError says ``cannot import name
    'izip'``, not from which module; the run's traceback holds the import line."""
    oracle = _fixed_on_pytest_4(tmp_path, "sign", SIGN, "[::-1]", SIGN_TEST)
    assert oracle.status == "environment-error"
    assert (oracle.reason or "").endswith(
        "could not collect any test (tests/test_sign.py: ImportError: cannot import name "
        "'izip'): `itertools.izip` is a name of Python 2's standard library alone, so the code "
        "at this fix runs on Python 2 only, and bugbout runs tests on Python 3.6 and later: "
        "this era cannot be reproduced"
    ), oracle.reason


def test_only_a_name_of_python_2_alone_says_the_era_cannot_be_reproduced() -> None:
    """``sys.maxint`` is Python 2's alone; ``types.NoneType`` came back in Python 3.10."""
    python2 = stdlib_note("AttributeError: module 'sys' has no attribute 'maxint'")
    elsewhere = stdlib_note("AttributeError: module 'types' has no attribute 'NoneType'")
    assert python2.endswith("runs on Python 2 only, and bugbout runs tests on Python 3.6 and "
                            "later: this era cannot be reproduced")  # fmt: skip
    assert elsewhere.endswith("so the code was written for another Python (Python 2, for a "
                              "fix of its era)")  # fmt: skip
