"""A failing test's report, made without its traceback: bugbout keeps one line of a
failure (the first ``E`` line pytest would show), so pytest is not asked to format what
bugbout throws away. pytest's long traceback reads every frame's source and parses the
whole file around each one: a failure in a 2,000-line test module cost about 20 ms of
CPU, every failing test of a run paid it, and so did every must-fail canary and twin.

Every failing test function of a run is reported so, whatever it is, so nothing about
it tells a canary or a twin from the tests beside it; and only once its call is over.
The lines are pytest's own for the exception and those it was raised from, so the line
bugbout keeps is the one the long traceback held. A failure pytest shows without a
traceback anyway (``pytest.fail(..., pytrace=False)``) and items of other kinds
(doctests, ``unittest`` cases, a plugin's items) are reported by pytest as before.

It runs in the project's own environment, as ``bugbout_outcomes`` does (Python 3.6+,
pytest 3+).
"""

import traceback


def briefly(item, call):
    """Whether ``item``'s failing ``call`` is reported by :func:`brief` (set on the item
    for the time its report is made)."""
    import pytest

    if call.when != "call" or call.excinfo is None or type(item) is not pytest.Function:
        return False
    if "repr_failure" in vars(item) or getattr(call.excinfo.value, "pytrace", True) is False:
        return False
    item.repr_failure = brief
    return True


def brief(excinfo, *args, **kwargs):
    """``excinfo`` as the ``E`` lines pytest's traceback ends each exception of its chain
    with, the earliest first."""
    chain, value = [], excinfo.value
    while value is not None and all(value is not seen for seen in chain):
        chain.append(value)
        cause = getattr(value, "__cause__", None)
        hidden = getattr(value, "__suppress_context__", False)
        value = cause if cause is not None else (None if hidden else value.__context__)
    lines = []
    for earlier in reversed(chain[1:]):
        shown = traceback.format_exception_only(type(earlier), earlier)
        lines += "".join(shown).rstrip().split("\n")
    lines += excinfo.exconly(tryshort=True).split("\n")
    return "\n".join("E   " + line for line in lines)
