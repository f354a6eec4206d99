"""Retry rounds in the report: pass@k per contestant and what each round added.

pass@k here is *resolved within k rounds*: a task counts when the patch of any of its
first k rounds resolves it against the hidden tests (a task that stopped before round k,
its patch approved on visible evidence, keeps its last round's result). Rounds are not
independent samples (each sees the previous one's review), so the unbiased estimator
from repeated samples does not apply. Each pass@k carries a Wilson interval; the gain of
round k (pass@k minus pass@k-1, paired over the same tasks) carries an exact McNemar
p-value and the exact conditional interval that agrees with it
(:mod:`bugbout.core.report.statistics`). Since a bout keeps only the last round's patch,
each round also counts the tasks it *lost*: an earlier round's patch resolved them, its
own does not.

The tasks are those the contestant's resolve rate counts, each round's patch scored
(earlier rounds are scored by the bout beside the last one); a task with an earlier
round that has no score is left out and counted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from pydantic import Field

from bugbout.core.report.statistics import LEVEL, mcnemar_exact, paired_interval, wilson
from bugbout.core.store.race_records import Attempt, Score
from bugbout.core.store.records import Record
from bugbout.core.store.verdict_records import PatchResolution

METHOD = (
    "pass@k: tasks resolved by any of the first k rounds, Wilson score interval (95%); a "
    "round's gain: exact McNemar test, with the exact conditional interval it inverts "
    "(Clopper-Pearson on the tasks where the two differ, 95%)"
)


class RoundRow(Record):
    """One round of one contestant, over the same tasks as every other round."""

    round: int
    reached: int = 0
    """Tasks on which this round ran."""
    resolved: int = 0
    """Tasks resolved within this many rounds: pass@k's numerator."""
    rate: float | None = None
    """pass@k: ``resolved`` over the contestant's tasks."""
    low: float | None = None
    high: float | None = None
    kept: int = 0
    """Tasks whose patch after this many rounds (the one a bout keeps) resolves them."""
    new: int = 0
    """Tasks this round resolved that no earlier round had."""
    lost: int = 0
    """Tasks an earlier round's patch resolved and this round's does not."""
    gain: float | None = None
    """pass@k minus pass@k-1; ``None`` for the first round."""
    gain_low: float | None = None
    gain_high: float | None = None
    p_value: float | None = None
    """Exact McNemar test of the gain; ``None`` for the first round."""
    sentence: str = ""


class AgentRounds(Record):
    """One contestant's rounds."""

    contestant: str
    tasks: int = 0
    """Tasks counted: those its resolve rate counts, every round scored."""
    left_out: int = 0
    """Tasks its resolve rate counts but left out here: an earlier round has no score."""
    rounds: list[RoundRow] = Field(default_factory=list)


class Rounds(Record):
    """pass@k and each round's gain, per contestant; empty when no task had a second round."""

    method: str = METHOD
    agents: list[AgentRounds] = Field(default_factory=list)


def rounds_report(
    contestants: list[str],
    attempts: Iterable[Attempt],
    score: dict[tuple[str, str], Score],
    resolutions: Iterable[PatchResolution],
) -> Rounds:
    """pass@k from every round's attempt: the last round's score is the counted one
    (``score``), an earlier round's is the resolution whose key is its revision."""
    by_revision = {(r.task_id, r.contestant, r.key): r.score for r in resolutions if r.key}
    runs: dict[tuple[str, str], dict[int, Attempt]] = defaultdict(dict)
    for attempt in attempts:
        if attempt.role == "contestant":
            runs[(attempt.task_id, attempt.contestant)][attempt.round] = attempt
    most = max((max(by_round) for by_round in runs.values()), default=1)
    if most < 2:
        return Rounds()
    rows = []
    for name in contestants:
        outcomes: list[list[bool]] = []  # per task, each round's "resolves"
        left_out = 0
        for (task_id, who), counted in sorted(score.items()):
            by_round = runs.get((task_id, who), {})
            if who != name or not by_round:
                continue
            last = max(by_round)
            earlier = [
                by_revision.get((task_id, name, by_round[r].revision))
                for r in sorted(by_round)
                if r != last
            ]
            if None in earlier:
                left_out += 1
                continue
            outcomes.append([s == Score.RESOLVED for s in earlier] + [counted == Score.RESOLVED])
        rows.append(
            AgentRounds(
                contestant=name,
                tasks=len(outcomes),
                left_out=left_out,
                rounds=[_round(k, outcomes) for k in range(1, most + 1)],
            )
        )
    return Rounds(agents=rows)


def _within(outcomes: list[list[bool]], k: int) -> list[bool]:
    return [any(task[:k]) for task in outcomes]


def _round(k: int, outcomes: list[list[bool]]) -> RoundRow:
    within = _within(outcomes, k)
    rate = wilson(sum(within), len(within))
    ran = [task for task in outcomes if len(task) >= k]
    row = RoundRow(
        round=k,
        reached=len(ran),
        resolved=rate.successes,
        rate=rate.value if rate.total else None,
        low=rate.low if rate.total else None,
        high=rate.high if rate.total else None,
        kept=sum(task[min(k, len(task)) - 1] for task in outcomes),
        lost=sum(not task[k - 1] and any(task[: k - 1]) for task in ran),
    )
    if k == 1 or not outcomes:
        return row
    before = _within(outcomes, k - 1)
    row.new = sum(now and not then for now, then in zip(within, before, strict=True))
    gain, low, high = paired_interval(row.new, 0, len(within))
    row.gain, row.gain_low, row.gain_high = round(gain, 4), round(low, 4), round(high, 4)
    row.p_value = round(mcnemar_exact(row.new, 0), 6)
    row.sentence = gain_sentence(row)
    return row


def gain_sentence(row: RoundRow) -> str:
    """What round ``row.round`` added, in words that follow from its numbers."""
    k = row.round
    if row.reached == 0:
        return f"No counted task ran round {k}."
    if row.new == 0:
        said = (
            f"Round {k} ran on {_bugs(row.reached)} and resolved none that earlier rounds had not."
        )
    else:
        evidence = (
            "a real gain"
            if (row.p_value or 1.0) < LEVEL
            else "not enough evidence that the round helps"
        )
        said = (
            f"Round {k} resolved {_bugs(row.new)} that earlier rounds had not: "
            f"{_signed(row.gain)} (95% CI {_signed(row.gain_low)} to {_signed(row.gain_high)}), "
            f"{evidence} (p = {row.p_value:.2g})."
        )
    if row.lost:
        said += (
            f" Its patch no longer resolves {_bugs(row.lost)} an earlier round had resolved; "
            f"the patches kept after {k} rounds resolve {_bugs(row.kept)}."
        )
    return said


def _bugs(count: int) -> str:
    return f"{count} bug" if count == 1 else f"{count} bugs"


def _signed(value: float | None) -> str:
    return f"{round((value or 0.0) * 100):+d}%"
