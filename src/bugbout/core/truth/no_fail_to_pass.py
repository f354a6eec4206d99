"""What the reason of a task with no fail-to-pass test says: why no test failed before
the fix and passed after it, when the runs show why (its tests passed before it too, or
skipped themselves, came close, or failed alike for a reason of the environment or of
an older Python)."""

from __future__ import annotations

import re

from bugbout.core.store.records import Outcome, Task, TestRun
from bugbout.core.truth.python2 import NAME_ERROR, PYTHON2_NAMES, older_python_failure

FAILING = (Outcome.FAILED, Outcome.ERROR)


def no_fail_to_pass_reason(task: Task, before: TestRun, after: TestRun) -> str:
    """The reason of a task none of whose tests failed ``before`` the fix and passed
    ``after`` it."""
    return (
        "no test failed before the fix and passed after it"
        + (
            _passed_before(task, before, after)
            or _skipped(task, after)
            or _near_misses(before, after)
        )
        + (_stuck(before, after) or _older_python_tests(task, after))
    )


def _passed_before(task: Task, before: TestRun, after: TestRun) -> str:
    """What a reason says when every test the fix added or changed passed both before
    and after it: the history holds no test that fails without the fix (a refactor, a
    renamed test), nothing to reproduce."""
    named = [*task.added_tests, *task.modified_tests]
    if not all(passed(task, run) for run in (before, after)):
        return ""
    tests = "test" if len(named) == 1 else f"{len(named)} tests"
    return (
        f": the {tests} the fix added or changed passed before it too: in this environment no "
        "test in its history fails without the fix"
    )


def _skipped(task: Task, after: TestRun) -> str:
    """What a reason says when every test the fix added or changed that ran after it was
    skipped: its skip condition holds here, so nothing it checks ran; with pytest's
    reasons when the run recorded them (at most two, quoted)."""
    named = {*task.added_tests, *task.modified_tests}
    ran = [test for test in after.outcomes if test.split("[", 1)[0] in named]
    if not ran or any(after.outcomes[test] != Outcome.SKIPPED for test in ran):
        return ""
    said = list(dict.fromkeys(after.skips[test] for test in ran if after.skips.get(test)))
    saying = (
        f", saying {'; '.join(repr(reason) for reason in said[:2])}"
        + (f" (and {len(said) - 2} more)" if len(said) > 2 else "")
        if said
        else ""
    )
    guess = "" if said else " (a tool, platform or Python it lacks)"
    if len(ran) == 1:
        return (
            f": the test the fix added or changed ({ran[0]}) skipped itself after the fix"
            f"{saying}: its skip condition holds in this environment{guess}, so nothing it "
            "checks ran"
        )
    return (
        f": the {len(ran)} tests the fix added or changed ({', '.join(ran[:3])}) skipped "
        f"themselves after the fix{saying}: their skip conditions hold in this environment"
        f"{guess}, so nothing they check ran"
    )


def passed(task: Task, run: TestRun) -> bool:
    """Whether every test the fix added or changed ran in ``run`` and passed (each case)."""
    named = [*task.added_tests, *task.modified_tests]
    cases = [outcome for test, outcome in run.outcomes.items() if test.split("[", 1)[0] in named]
    ran = {test.split("[", 1)[0] for test in run.outcomes} & set(named)
    return bool(named) and len(ran) == len(set(named)) and set(cases) == {Outcome.PASSED}


def _near_misses(before: TestRun, after: TestRun, shown: int = 3) -> str:
    """The tests that came closest to fail-to-pass, by name: failing before the fix and
    skipped or still failing after it."""
    misses = []
    for name, outcome in after.outcomes.items():
        if before.outcomes.get(name) not in FAILING:
            continue
        if outcome == Outcome.SKIPPED:
            misses.append(f"{name} was skipped after the fix")
        elif outcome in FAILING:
            misses.append(f"{name} failed after the fix too")
    if not misses:
        return ""
    more = f" (and {len(misses) - shown} more)" if len(misses) > shown else ""
    return ": " + "; ".join(misses[:shown]) + more


_IMPORT_FAILURE = re.compile(r"^(?:ModuleNotFoundError|ImportError): ")
_GENERATOR_STOP = re.compile(r"^(?:StopIteration$|RuntimeError: generator raised StopIteration)")
"""How a ``raise StopIteration`` inside a generator fails since Python 3.7 (PEP 479)."""


def _stuck(before: TestRun, after: TestRun) -> str:
    """What a reason adds when tests failed before and after the fix with the same error,
    and that error is the environment's: a module that cannot be imported, a builtin only
    Python 2 has, or a generator ended by ``raise StopIteration`` (the interpreter cannot
    run the era's code)."""
    causes: dict[str, int] = {}
    for name, message in after.failures.items():
        if before.failures.get(name) != message:
            continue
        found = NAME_ERROR.match(message)
        if (
            _IMPORT_FAILURE.match(message)
            or _GENERATOR_STOP.match(message)
            or (found and found["name"] in PYTHON2_NAMES)
        ):
            causes[message] = causes.get(message, 0) + 1
    if not causes:
        return ""
    message, count = max(causes.items(), key=lambda item: item[1])
    if message.startswith("NameError"):
        why = "the code is Python 2's, and the interpreter Python 3"
    elif _GENERATOR_STOP.match(message):
        why = (
            "the code ends generators with raise StopIteration, which Python 3.7 and later "
            "turn into a RuntimeError (PEP 479): its era needs Python 3.6 or older"
        )
    else:
        why = "the environment lacks that module, or has its package without its compiled parts"
    return (
        f"; an environment failure explains it: {count} tests failed before and after the "
        f"fix with {message} ({why})"
    )


def _older_python_tests(task: Task, after: TestRun) -> str:
    """What a reason adds when a test the fix added or changed fails after it in a way
    only a Python older than bugbout's fails (see
    :func:`~bugbout.core.truth.python2.older_python_failure`)."""
    named = {*task.added_tests, *task.modified_tests}
    for name, message in after.failures.items():
        if name.split("[", 1)[0] not in named:
            continue
        why, python = older_python_failure(message)
        if why:
            return (
                f"; {name} fails after the fix with {message}: {why}, so the test was "
                f"written for {python}, and bugbout runs tests on Python 3.6 and later"
            )
    return ""
