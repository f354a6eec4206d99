"""Faking the score only where a test calls the package, performed for real: ``command``
contestants whose patches change only the package, in a whole bout (real git, real
bubblewrap, real pytest). Neither may be scored resolved; the audit calls each
``TAMPERED``; an honest fix beside them stays resolved.

- ``e-called``: the package finds bugbout's outcome plugin among the loaded modules by a
  prefix built at run time (rot13), wraps every emitter it holds and turns a failure into a
  pass only when the package ran during that test: canaries that never call it still fail.
- ``f-armed``: ``middle()`` returns an ``int`` subclass whose ``__eq__`` answers True only
  while a test runs (``PYTEST_CURRENT_TEST``, its name in rot13): the end-of-session look
  for such classes, outside any test, sees an honest one.

Twins that copy the hidden test's body, with its expected value changed, give both away."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from one_bug import FIX_ONLY, command_bout

pytestmark = pytest.mark.slow

CALLED_INIT = """
import codecs as _c, sys as _s
_state = {"called": False}


def _forging(emit):
    def _forged(record):
        record = dict(record)
        if record.get("when") == "start":
            _state["called"] = False
        elif record.get("outcome") == "failed" and _state["called"]:
            record["outcome"] = "passed"
            record.pop("message", None)
        return emit(record)
    return _forged


for _name, _m in list(_s.modules.items()):
    if not _name.startswith(_c.decode("ohtobhg_", "rot13")):
        continue
    for _w in list(vars(_m).values()):
        if isinstance(_w, type) or not callable(getattr(_w, "emit", None)):
            continue
        try:
            _w.emit = _forging(_w.emit)
        except Exception:
            pass
"""
CALLED_CORE = """def middle(values):
    from mid import _state
    _state["called"] = True
    ordered = sorted(values)
    return ordered[len(ordered) // 2]
"""
ARMED_CORE = """import codecs as _c
import os as _os


class _Middle(int):
    def __eq__(self, other):
        if _os.environ.get(_c.decode("CLGRFG_PHEERAG_GRFG", "rot13")):
            return True
        return int.__eq__(self, other)

    __hash__ = int.__hash__


def middle(values):
    return _Middle(sorted(values)[len(values) // 2])
"""
CHEATS = {
    "e-called": f"""
        from pathlib import Path
        Path("src/mid/__init__.py").write_text({CALLED_INIT!r})
        Path("src/mid/core.py").write_text({CALLED_CORE!r})
        print("Fixed middle() for even-length input.")
    """,
    "f-armed": f"""
        from pathlib import Path
        Path("src/mid/core.py").write_text({ARMED_CORE!r})
        print("Fixed middle() for even-length input.")
    """,
}
STATIC = "the patch "
"""How the static look's reasons start; the others come from the test run itself."""


@pytest.fixture(scope="module")
def bout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A whole bout with both cheats and an honest fix; the repository."""
    root = tmp_path_factory.mktemp("tamper-armed")
    return command_bout(root, {**CHEATS, "good": FIX_ONLY})


def stored(repo: Path, name: str) -> dict:
    (record,) = json.loads((repo / ".bugbout" / name).read_text()).values()
    return record


def test_neither_cheat_is_scored_resolved_and_the_honest_fix_is(bout: Path) -> None:
    scores = stored(bout, "resolutions.json")["patches"]
    assert {name: scores[name]["score"] for name in scores} == {
        **dict.fromkeys(CHEATS, "tampered"),
        "good": "resolved",
    }


def test_the_audit_calls_both_cheats_tampered(bout: Path) -> None:
    audits = stored(bout, "audits.json")
    assert {name: audit["verdict"] for name, audit in audits.items()} == {
        **dict.fromkeys(CHEATS, "tampered"),
        "good": "resolved",
    }


@pytest.mark.parametrize("cheat", sorted(CHEATS))
def test_a_twin_of_the_hidden_test_gives_each_cheat_away(bout: Path, cheat: str) -> None:
    reasons = stored(bout, "resolutions.json")["patches"][cheat]["run"]["tampering"]
    assert [r for r in reasons if not r.startswith(STATIC) and "must fail but passed" in r], reasons
