"""One side of a comparison: each contestant's counted outcome per task, and the ground
truth each task was scored against, read from a store, a sweep job or a ``report.json``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from bugbout.core.contract.errors import ConfigError
from bugbout.core.report.report import Report
from bugbout.core.store.race_records import Score
from bugbout.core.store.records import OracleSet
from bugbout.core.store.store import JOB, ORACLES, Store

REPORT = "report.json"
STORE = ".bugbout"


@dataclass(frozen=True)
class Side:
    """What a comparison reads of one bout."""

    source: str
    """The path it was read from, as given."""
    truth: dict[str, str]
    """The ground truth key of every scored task, by task id."""
    resolved: dict[str, dict[str, bool]]
    """Each contestant's counted outcome (resolved or not) by task id."""


def read_side(path: Path) -> Side:
    """The side at ``path``: a project or its ``.bugbout`` store (its last bout), a sweep
    job's directory, or a ``report.json`` with the store's ``oracles.json`` beside it or
    in the store above its sweep job."""
    given = str(path)
    if path.is_dir() and (path / STORE).is_dir() and not (path / JOB).is_file():
        path = path / STORE
    if path.is_dir():
        if not (path / JOB).is_file():
            raise ConfigError(
                f"{path} holds no bout (no {JOB}); name a project, its {STORE}, a sweep "
                f"job's directory or a {REPORT}"
            )
        from bugbout.core.report.report_store import load_report

        store = _store_of(path)
        report = load_report(Store(store), Store(path))
    elif path.is_file():
        try:
            report = Report.model_validate_json(path.read_bytes())
        except ValidationError as exc:
            raise ConfigError(f"{path} is not a bugbout report.json ({_first(exc)})") from None
        store = _store_of(path.parent)
    else:
        raise ConfigError(f"{path} does not exist; name a project, a store or a {REPORT}")
    oracles = _oracles(store, path)
    truth = {
        row.id: oracles.root[row.id].key
        for row in report.tasks
        if row.scored and row.id in oracles.root and oracles.root[row.id].status == "ok"
    }
    resolved: dict[str, dict[str, bool]] = {name: {} for name in report.contestants}
    for row in report.tasks:
        if row.id in truth:
            for name, score in row.scores.items():
                resolved.setdefault(name, {})[row.id] = score == Score.RESOLVED
    return Side(given, truth, resolved)


def _store_of(directory: Path) -> Path:
    """The store of a bout's output ``directory``: itself, or, for a sweep job
    (``STORE/sweeps/TIME/N``), the store three levels up."""
    if directory.parent.parent.name == "sweeps" and (directory.parents[2] / ORACLES).is_file():
        return directory.parents[2]
    return directory


def _oracles(store: Path, source: Path) -> OracleSet:
    found = Store(store).read(ORACLES, OracleSet)
    if found is None:
        raise ConfigError(
            f"no {ORACLES} for {source} (looked in {store}); keep the store's {ORACLES} "
            f"beside a {REPORT}: compare pairs tasks by their ground truth"
        )
    return found


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])
