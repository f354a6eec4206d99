"""The report's "How contaminated": how close each resolved patch is to the maintainers'
own fix (as an auditor that measures it recorded, :mod:`bugbout.core.audit.recall`), and each
contestant's resolve rate on the bugs fixed before and after its knowledge cutoff
(:mod:`bugbout.core.plumbing.models.cutoffs`). Pure, like the rest of the report."""

from __future__ import annotations

from pydantic import Field

from bugbout.core.plumbing.models.cutoffs import default_cutoff, fixed_before
from bugbout.core.report.confidence import RateInterval, interval
from bugbout.core.report.statistics import wilson
from bugbout.core.store.race_records import Audit, Score, Similarity
from bugbout.core.store.records import Record, Task

METHOD = (
    "similarity: Dice overlap of the normalised token 5-grams, and of the identical changed "
    "lines, of the source changes only; before/after: the fix's commit date against the "
    "knowledge cutoff, resolve rates with Wilson 95% intervals"
)


class PatchSimilarity(Record):
    """One resolved patch against the maintainers' fix."""

    task: str
    contestant: str
    similarity: Similarity


class CutoffSplit(Record):
    """One contestant's resolve rate on the bugs fixed before and after its cutoff."""

    contestant: str
    model: str | None = None
    cutoff: str | None = None
    """``YYYY-MM-DD``; ``None`` when neither declared nor known for its model."""
    declared: bool = False
    """Declared in the settings (``knowledge-cutoff``), not the packaged default."""
    before: RateInterval | None = None
    """Tasks fixed on or before the cutoff (the fix may be in the model's training data)."""
    after: RateInterval | None = None
    """Tasks fixed after the cutoff."""


class Contamination(Record):
    """Whether the agents may have recalled the public fixes rather than written them."""

    method: str = METHOD
    resolved: int = 0
    """Resolved patches (counted scores)."""
    patches: list[PatchSimilarity] = Field(default_factory=list)
    """The resolved patches whose similarity an auditor measured."""
    recalled: dict[str, int] = Field(default_factory=dict)
    """Per contestant: its resolved patches flagged ``recalled``."""
    cutoffs: list[CutoffSplit] = Field(default_factory=list)
    warning: str | None = None
    """Set when most scored tasks predate every known cutoff."""


def contamination(
    tasks: list[Task],
    *,
    contestants: list[str],
    models: dict[str, str | None],
    score: dict[tuple[str, str], Score],
    audits: list[Audit],
    cutoffs: dict[str, str],
) -> Contamination:
    """The section from the scored ``tasks``, each (task, contestant)'s counted score,
    the audits, each contestant's model and its declared cutoffs."""
    hidden = {(a.task_id, a.contestant): a for a in audits if not a.visible_only}
    resolved = sorted(key for key, value in score.items() if value == Score.RESOLVED)
    patches = [
        PatchSimilarity(task=task_id, contestant=name, similarity=audit.similarity)
        for task_id, name in resolved
        if (audit := hidden.get((task_id, name))) is not None and audit.similarity is not None
    ]
    recalled = {
        name: sum(p.similarity.recalled for p in patches if p.contestant == name)
        for name in contestants
        if any(p.contestant == name for p in patches)
    }
    splits = [
        _split(name, models.get(name), cutoffs.get(name), tasks, score) for name in contestants
    ]
    return Contamination(
        resolved=len(resolved),
        patches=patches,
        recalled=recalled,
        cutoffs=splits,
        warning=_warning(tasks, [s.cutoff for s in splits if s.cutoff is not None]),
    )


def _split(
    name: str,
    model: str | None,
    declared: str | None,
    tasks: list[Task],
    score: dict[tuple[str, str], Score],
) -> CutoffSplit:
    cutoff = declared or default_cutoff(model)
    split = CutoffSplit(contestant=name, model=model, cutoff=cutoff, declared=bool(declared))
    if cutoff is None:
        return split
    counted = [task for task in tasks if (task.id, name) in score]
    for side, early in (("before", True), ("after", False)):
        own = [t for t in counted if fixed_before(t.date, cutoff) == early]
        won = sum(score[(t.id, name)] == Score.RESOLVED for t in own)
        setattr(split, side, interval(side, wilson(won, len(own))))
    return split


def _warning(tasks: list[Task], cutoffs: list[str]) -> str | None:
    """A warning when most ``tasks`` were fixed on or before every cutoff."""
    if not tasks or not cutoffs:
        return None
    earliest, latest = min(cutoffs), max(cutoffs)
    old = sum(fixed_before(task.date, earliest) for task in tasks)
    if 2 * old <= len(tasks):
        return None
    return (
        f"{old} of {len(tasks)} scored tasks were fixed on or before every contestant's "
        f"knowledge cutoff (the earliest is {earliest}): their fixes may be in what the models "
        f"learned from. Set miner.since: {latest} to race on bugs fixed after every cutoff."
    )
