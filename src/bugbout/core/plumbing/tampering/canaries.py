"""What makes a test run tamper-evident: canary tests, and an outcome stream the code under
test cannot write.

Every run of :func:`bugbout.core.plumbing.testruns.testrun.run_tests` collects, beside the tests it
was asked for, canary modules bugbout writes for that run alone (:func:`plant`): random
names, some tests that must fail (an assertion carrying a nonce) and some that must pass,
and must-fail twins written into the test files it targets, named after the tests beside
them (:mod:`~bugbout.core.plumbing.tampering.canary_twins`). Code that makes failures look passed,
or hides outcomes, gives itself away on them; :func:`check_canaries` says how, and takes
them out of the run's outcomes.

The outcome plugin (``pytest_outcomes/bugbout_outcomes.py``) authenticates every line it
writes with an HMAC under a key bugbout puts at the start of the outcome file and the
plugin blanks before any project code is imported, numbers the lines, and ends with a
summary: how many it wrote, what it found changed in pytest, and the classes whose values
may equal anything (:mod:`~bugbout.core.plumbing.tampering.impostors` tells the patch's from the
project's). :func:`read_outcomes` verifies all of it. A run with any such finding is
``tampered``
(:attr:`~bugbout.core.store.records.RunStatus.TAMPERED`, the reasons in
:attr:`~bugbout.core.store.records.TestRun.tampering`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from bugbout.core.plumbing.tampering.canary_twins import Hosted, plant_twins, restore
from bugbout.core.plumbing.tampering.impostors import impostors
from bugbout.core.plumbing.tampering.naming import Naming
from bugbout.core.plumbing.tampering.tallies import pytest_tally, tally_mismatch
from bugbout.core.store.records import Outcome, RunStatus, TestRun

KEY_PREFIX = b"bugbout-key "
CANARY_MODULES = 2
"""Canary modules per run, each with a test that must fail and one that must pass."""
PASSING = (Outcome.PASSED,)
PYTEST_ENDED = (0, 1)
"""Exit statuses pytest gives only after its session finished (and the plugin summed up)."""
EXCEPTION = re.compile(r"^[\w.]*(?:Error|Exception)\b")
"""The last line of the interpreter's report of an exception nothing caught."""


@dataclass(frozen=True)
class Canary:
    """One canary test: its node id and whether it must pass."""

    nodeid: str
    must_pass: bool
    hosted: bool = False
    """A twin written into a test file of the run
    (:mod:`~bugbout.core.plumbing.tampering.canary_twins`): not expected when no other test of that
    file reported."""
    optional: bool = False
    """A body twin (:mod:`~bugbout.core.plumbing.tampering.body_twins`), a copy of a test that may
    not be collected: judged only on the cases that report."""


@dataclass
class Planted:
    """The canaries written into a tree for one run."""

    tree: Path
    files: list[str] = field(default_factory=list)
    """The canary modules, relative to the tree."""
    canaries: list[Canary] = field(default_factory=list)
    hosts: list[Hosted] = field(default_factory=list)
    """The test files of the run that hold twins, with their bytes before."""
    lower: Path | None = None
    """The tree before bugbout's edits, when the run is on edits (a patch): what tells
    the patch's impostors (:mod:`~bugbout.core.plumbing.tampering.impostors`) from the project's."""

    def targets(self, targets: Sequence[str]) -> list[str]:
        """``targets`` with the canary modules put in at random places, and the twins
        of a host file that is targeted only by node ids beside them."""
        mixed = list(targets)
        for hosted in self.hosts:
            if hosted.module not in mixed:
                for nodeid in hosted.nodeids:
                    mixed.insert(secrets.randbelow(len(mixed) + 1), nodeid)
        for module in self.files:
            mixed.insert(secrets.randbelow(len(mixed) + 1), module)
        return mixed

    def modules(self) -> set[str]:
        return set(self.files)

    def nodeids(self) -> set[str]:
        """The twins' node ids."""
        return {nodeid for hosted in self.hosts for nodeid in hosted.nodeids}

    def holds(self, test: str) -> bool:
        """Whether ``test`` is one of the run's twins (or a case of one)."""
        return _case_of(test) in self.nodeids()

    def remove(self) -> None:
        """Delete the canary modules and put the host files back (the tree is left as it
        was)."""
        for module in self.files:
            (self.tree / module).unlink(missing_ok=True)
        restore(self.tree, self.hosts)


def _word() -> str:
    letters = string.ascii_lowercase
    return "".join(secrets.choice(letters) for _ in range(4 + secrets.randbelow(7)))


def _module_text(passing: str, failing: str) -> tuple[str, str]:
    """A canary module with a passing and a failing test (their names), and the failure's
    nonce."""
    nonce = secrets.token_hex(8)
    left, right = secrets.randbelow(1000), 1000 + secrets.randbelow(1000)
    text = (
        f"def {passing}():\n    assert {left} + {right} == {left + right}\n\n\n"
        f"def {failing}():\n    assert {left} == {right}, {nonce!r}\n"
    )
    return text, nonce


def canary_directory(tree: Path, targets: Sequence[str]) -> str | None:
    """Where the canaries go: the directory of the first target that exists in ``tree``
    (a regular directory, never through a symlink), relative to it; ``None`` when none does."""
    for target in targets:
        path = PurePosixPath(target.split("::", 1)[0])
        if path.is_absolute() or ".." in path.parts:
            continue
        location = tree / path
        if location.is_file() and not location.is_symlink():
            path = path.parent
        elif not location.is_dir():
            continue
        if any(
            (tree / PurePosixPath(*path.parts[:n])).is_symlink()
            for n in range(1, len(path.parts) + 1)
        ):
            continue
        return str(path)
    return None


def plant(
    tree: Path,
    targets: Sequence[str],
    *,
    lower: Path | None = None,
    expose: Callable[[str], None] = lambda module: None,
    twins: bool = True,
    naming: Naming | None = None,
) -> Planted:
    """Write this run's canary modules beside the first target, and, with ``twins``, twins
    into the test files it targets
    (:func:`~bugbout.core.plumbing.tampering.canary_twins.plant_twins`, with ``lower`` and
    ``expose``), their tests named as the project's ``naming`` collects (``None``: pytest's
    default names); nothing when no target exists (the run then has no canaries, and says
    nothing of them)."""
    naming = naming or Naming()
    planted = Planted(tree, lower=lower)
    if twins:
        planted.hosts = plant_twins(tree, lower, list(targets), expose, naming)
    planted.canaries += [
        Canary(nodeid, must_pass=False, hosted=True, optional=nodeid in hosted.bodies)
        for hosted in planted.hosts
        for nodeid in hosted.nodeids
    ]
    directory = canary_directory(tree, targets)
    if directory is None:
        return planted
    for _ in range(CANARY_MODULES):
        stem, passing, failing = _word(), naming.function(_word()), naming.function(_word())
        while failing == passing:
            failing = naming.function(_word())
        module = str(PurePosixPath(directory, naming.module(stem)))
        if module in planted.files or (tree / module).exists():
            continue
        text, _ = _module_text(passing, failing)
        with (tree / module).open("x", encoding="utf-8") as handle:
            handle.write(text)
        planted.files.append(module)
        planted.canaries += [
            Canary(f"{module}::{passing}", must_pass=True),
            Canary(f"{module}::{failing}", must_pass=False),
        ]
    return planted


# -- the outcome stream ----------------------------------------------------------------------


def key_line(key: str) -> bytes:
    """The line bugbout writes at the start of the outcome file for the plugin to read."""
    return KEY_PREFIX + key.encode() + b"\n"


@dataclass
class Stream:
    """The verified reports of one run, its summary, and what was wrong with the stream."""

    reports: list[dict[str, str]] = field(default_factory=list)
    summary: dict[str, object] | None = None
    tampering: list[str] = field(default_factory=list)
    impostors: object = None
    """The summary's classes whose values may equal anything, as the plugin wrote them."""


def read_outcomes(data: bytes, key: str) -> Stream:
    """The reports in the outcome file ``data``, each checked against ``key``: every line
    authenticated, numbered from 0 without gaps, one (node id, phase) once (a rerun
    excepted; a subtest's report is one of many its test may have, and can only fail
    it: see :func:`~bugbout.core.plumbing.testruns.testrun.run_tests`), the summary last and
    agreeing with the count."""
    stream = Stream()
    lines = [line for line in data.splitlines() if line.strip()]
    if lines and lines[0].startswith(KEY_PREFIX):
        lines = lines[1:]  # the plugin never loaded: there is nothing else
    seen: dict[tuple[str, str], str] = {}
    for number, record in enumerate(_records(lines, key.encode())):
        if record is None:
            stream.tampering.append(f"outcome line {number + 1} is not bugbout's (bad signature)")
            continue
        if record.pop("seq", None) != number:
            stream.tampering.append(f"outcome line {number + 1} is out of sequence")
        if stream.summary is not None:
            stream.tampering.append("outcomes were written after the session's summary")
        if "summary" in record:
            summary = record["summary"]
            stream.summary = summary if isinstance(summary, dict) else {}
            continue
        pair = (str(record.get("nodeid")), str(record.get("when")))
        if record.get("subtest") is not True:
            if seen.get(pair, "rerun") != "rerun":
                stream.tampering.append(f"{pair[0]} ({pair[1]}) was reported twice")
            seen[pair] = str(record.get("outcome"))
        stream.reports.append({key: str(value) for key, value in record.items()})
    if stream.summary is not None:
        if stream.summary.get("reports") != len(stream.reports):
            stream.tampering.append(
                f"the plugin wrote {stream.summary.get('reports')} reports, "
                f"{len(stream.reports)} arrived"
            )
        stream.impostors = stream.summary.get("impostors")
        changes = stream.summary.get("changes")
        if isinstance(changes, list):
            stream.tampering += [f"pytest was changed: {change}" for change in changes]
    return stream


_MEMBER = b', "mac": "'
_SIGNED = len(_MEMBER) + 64 + len(b'"}')
"""The bytes a signature takes at the end of a line as the plugin writes it."""
_HEX = len(_MEMBER) - _SIGNED
"""Where the signature's hex digits start, from the line's end."""


def _records(lines: list[bytes], secret: bytes) -> list[dict[str, object] | None]:
    """Each line's record when its signature verifies, else ``None``: all lines in a few
    calls when each is laid out as the plugin writes it and verifies (a stream nobody
    touched), else line by line (:func:`_verified`)."""
    records = _as_written(lines, secret)
    return records if records is not None else [_verified(line, secret) for line in lines]


def _as_written(lines: list[bytes], secret: bytes) -> list[dict[str, object] | None] | None:
    """Every line's record when every line ends with its signature and verifies, the
    bodies parsed in one call; ``None`` when one does not."""
    if not all(line[-_SIGNED:_HEX] == _MEMBER and line[-2:] == b'"}' for line in lines):
        return None
    bodies = [line[:-_SIGNED] + b"}" for line in lines]
    signatures = b"".join([line[_HEX:-2] for line in lines])
    if not hmac.compare_digest(_macs(secret, bodies).hex().encode(), signatures):
        return None
    try:
        records = json.loads(b"[" + b",".join(bodies) + b"]")
    except ValueError:
        return None
    if len(records) != len(bodies) or not all(type(record) is dict for record in records):
        return None
    return records  # type: ignore[no-any-return]


_BLOCK = 64
"""SHA-256's block size in bytes: what an HMAC key is padded to."""


def _macs(secret: bytes, bodies: list[bytes]) -> bytes:
    """The HMAC-SHA256 of each body under ``secret`` (RFC 2104, as :func:`hmac.new`),
    joined: the padded key is hashed once, and each body's two hashes start from copies
    of those states (a keyed ``hmac`` object's copy costs twice as much)."""
    if len(secret) > _BLOCK:
        secret = hashlib.sha256(secret).digest()
    padded = secret.ljust(_BLOCK, b"\0")
    inner = hashlib.sha256(bytes(byte ^ 0x36 for byte in padded)).copy
    outer = hashlib.sha256(bytes(byte ^ 0x5C for byte in padded)).copy
    macs = []
    for body in bodies:
        first, second = inner(), outer()
        first.update(body)
        second.update(first.digest())
        macs.append(second.digest())
    return b"".join(macs)


_MAC = re.compile(rb'"mac": "([0-9a-f]{64})"')
"""The signature in a line as the plugin writes it: put last, after the record it signs
(``json.dumps`` with sorted keys)."""


def _verified(line: bytes, secret: bytes) -> dict[str, object] | None:
    """The record a line carries when its signature verifies, else ``None``. The signed
    body is the line without its ``mac`` member, as the plugin wrote it: it is verified
    and parsed as it is, and only a line not laid out so is parsed and written again."""
    found = _MAC.search(line)
    if found is not None:
        start, end = found.span()
        if line[end : end + 2] == b", ":
            body = line[:start] + line[end + 2 :]
        elif line[start - 2 : start] == b", ":
            body = line[: start - 2] + line[end:]
        else:
            body = line[:start] + line[end:]
        expected = hmac.new(secret, body, hashlib.sha256).hexdigest().encode()
        if hmac.compare_digest(found[1], expected):
            try:
                record = json.loads(body)
            except ValueError:
                return None
            return record if isinstance(record, dict) else None
    return _verified_anew(line, secret)


def _verified_anew(line: bytes, secret: bytes) -> dict[str, object] | None:
    """:func:`_verified` for a line laid out otherwise: parsed, its body written again."""
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or not isinstance(record.get("mac"), str):
        return None
    mac = record.pop("mac")
    body = json.dumps(record, sort_keys=True).encode()
    expected = hmac.new(secret, body, hashlib.sha256).hexdigest()
    return record if hmac.compare_digest(mac, expected) else None


# -- the verdict on a run --------------------------------------------------------------------


def check_canaries(run: TestRun, planted: Planted, stream: Stream, output: str = "") -> TestRun:
    """``run`` without its canaries, ``tampered`` (with every reason) when the canaries,
    the stream or pytest's own tally in its ``output`` say the code under test meddled
    with the outcomes.

    A run that timed out, or whose pytest died before its session ended (killed, crashed),
    is not judged on its canaries: they may simply not have run. A pytest that exited as
    if it had finished (status 0 or 1) without the plugin's summary was cut short by the
    code under test, unless no test started, pytest counted none and its output ends with
    an exception nothing caught: then it died before its session began (the code under
    test cannot be imported where a plugin loads it, as a ``SyntaxError`` does), and the
    run ``crashed``: nothing of it was judged, so there was nothing to fake."""
    reasons = list(stream.tampering)
    if planted.lower is not None:
        reasons += impostors(stream.impostors, planted.tree, planted.lower)
    finished = stream.summary is not None
    early = False
    if not finished and run.exit_code in PYTEST_ENDED and run.status != RunStatus.TIMEOUT:
        early = not stream.reports and pytest_tally(output) is None and _raised(output)
        if not early:
            reasons.append(
                f"pytest exited with status {run.exit_code} without finishing its session "
                "(the code under test ended it, or removed bugbout's plugin)"
            )
    twins = planted.nodeids()
    modules = planted.modules()

    def own(test: str) -> bool:
        return _case_of(test) not in twins and test.split("::", 1)[0] not in modules

    mismatch = tally_mismatch(output, stream.reports) if finished else None
    if mismatch is not None:
        reasons.append(mismatch)
    if finished:
        cases, ran = _cases(run, {canary.nodeid for canary in planted.canaries}, twins)
        skipped = {line for test, line in run.skips.items() if own(test)}
        for canary in planted.canaries:
            reasons += _judged(run, canary, cases.get(canary.nodeid, []), ran, skipped)
    update: dict[str, object] = {
        "outcomes": {test: outcome for test, outcome in run.outcomes.items() if own(test)},
        "collection_errors": {
            node: message for node, message in run.collection_errors.items() if own(node)
        },
        "skipped_modules": {
            node: message for node, message in run.skipped_modules.items() if own(node)
        },
        "failures": {test: line for test, line in run.failures.items() if own(test)},
        "skips": {test: line for test, line in run.skips.items() if own(test)},
    }
    if early:
        update["status"] = RunStatus.CRASHED
    if reasons:
        update |= {"status": RunStatus.TAMPERED, "tampering": reasons}
    return run.model_copy(update=update)


def _raised(output: str) -> bool:
    """Whether ``output`` ends with the report of an exception nothing caught."""
    lines = [line for line in output.splitlines() if line.strip()]
    return bool(lines) and EXCEPTION.match(lines[-1]) is not None


def _cases(
    run: TestRun, canaries: set[str], twins: set[str]
) -> tuple[dict[str, list[tuple[str, Outcome]]], set[str]]:
    """In one pass over ``run``'s outcomes: each canary's (each case's, when it is
    parametrized), and the modules where a test that is no twin has one."""
    cases: dict[str, list[tuple[str, Outcome]]] = {}
    ran: set[str] = set()
    for test, outcome in run.outcomes.items():
        case = _case_of(test)
        if case in canaries:
            cases.setdefault(case, []).append((test, outcome))
        if case not in twins:
            ran.add(test.split("::", 1)[0])
    return cases, ran


def _judged(
    run: TestRun,
    canary: Canary,
    outcomes: list[tuple[str, Outcome]],
    ran: set[str],
    skipped: set[str],
) -> list[str]:
    """What ``canary``'s ``outcomes`` in ``run`` say; ``ran``: the modules where a test
    that is no twin reported (a hosted twin whose file did not run is not expected);
    ``skipped``: why the run's own tests were skipped.

    A case of a canary that must pass may be skipped when another case passed and the
    run's own tests were skipped for the same reason: the project's own fixture made the
    case (an autouse fixture whose parameter is skipped where an extension is not
    built), and skips it as it skips its own."""
    error = run.collection_errors.get(canary.nodeid.split("::", 1)[0])
    if not outcomes:
        if canary.optional or (canary.hosted and canary.nodeid.split("::", 1)[0] not in ran):
            return []  # its file did not run (a collection error, a crash): nor did it
        why = f"could not be collected ({error})" if error else "did not report"
        return [f"canary {canary.nodeid} {why}"]
    if canary.must_pass:
        passed = any(outcome in PASSING for _, outcome in outcomes)
        return [
            f"canary {test} must pass but {outcome.value}"
            for test, outcome in outcomes
            if outcome not in PASSING
            and not (passed and outcome == Outcome.SKIPPED and run.skips.get(test) in skipped)
        ]
    return [
        f"canary {test} must fail but {outcome.value}"
        for test, outcome in outcomes
        if outcome in (Outcome.PASSED, Outcome.XPASSED)
    ]


def _case_of(nodeid: str) -> str:
    """The test a node id is a case of: itself, or its parametrized function's node id."""
    return nodeid.split("[", 1)[0] if nodeid.endswith("]") else nodeid
