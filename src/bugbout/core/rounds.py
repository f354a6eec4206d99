"""Retry rounds (``run.rounds`` > 1): an attempt that an audit on *visible* evidence does
not approve gets another round, with the audit's kill report in its prompt.

Visible evidence is the repository's own tests against the fail-on-base baseline and the
examiners' reproductions; the hidden tests never reach a prompt. The audit's route says
how to try again (``craft``: narrow the fix; ``recon``: diagnose again), and a second
consecutive ``craft`` becomes ``recon`` (no progress: the approach itself is wrong).
Every round's attempt is kept. Once the bout's stop is requested no review and no round
starts; a review whose test runs the stop killed is not stored.
"""

from __future__ import annotations

from bugbout.core.audit.audit_gate import run_gate
from bugbout.core.audit.auditing import Auditor, AuditRequest, escalate
from bugbout.core.plumbing.runtime.stopping import Interrupted
from bugbout.core.plumbing.trees.checkout import Checkouts
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.race.contestants import Contestant, with_repeats
from bugbout.core.race.race import Race
from bugbout.core.store.race_records import Attempt, AttemptStatus, Route, Score
from bugbout.core.store.records import OracleSet, Task, TaskSet, TestRun
from bugbout.core.store.store import attempt_path

ADVICE = {
    Route.CRAFT: "Your diagnosis looked right but the change was too broad: keep the fix and "
    "narrow it so that the tests it broke pass again.",
    Route.RECON: "Your change did not fix the issue: diagnose it again from the issue and "
    "the failing tests before changing code.",
}


def feedback(review: str, route: Route) -> str:
    """What a contestant is told about its previous round."""
    return (
        "\nYour previous attempt was checked against the project's tests and the "
        f"reproductions others wrote. {ADVICE.get(route, '')}\n\n<review>\n{review}\n</review>\n"
    )


def run_rounds(
    race: Race,
    auditor: Auditor,
    tasks: TaskSet,
    oracles: OracleSet,
    racers: list[Contestant],
) -> list[Attempt]:
    """Run rounds 2..``run.rounds`` for contestants whose latest attempt is not approved on
    visible evidence (each repeat its own rounds); returns the new attempts."""
    run = race.spec.run
    new: list[Attempt] = []
    scored = [t for t in tasks.tasks if t.scored and t.id in oracles.root]
    contestants = [r for r in with_repeats(racers, run.repeats) if r.role == "contestant"]
    with Git(race.benches.repository) as git:
        checkouts = race.benches.checkouts(git)
        for task in scored:
            examiners = [a for r in racers if r.role == "examiner" if (a := _latest(race, task, r))]
            baseline: TestRun | None = None
            for contestant in contestants:
                routes: list[Route] = []
                while (attempt := _latest(race, task, contestant)) is not None:
                    if attempt.status != AttemptStatus.FINISHED:
                        break
                    if attempt.review is None:
                        race.stop.check()
                        try:
                            attempt, baseline = _review(
                                race,
                                auditor,
                                task=task,
                                attempt=attempt,
                                examiners=examiners,
                                checkouts=checkouts,
                                baseline=baseline,
                            )
                        except Exception as exc:  # no review: no further round, bout goes on
                            race.progress.warn(
                                f"cannot review {contestant.label} on {task.id} for another "
                                f"round: {type(exc).__name__}: {exc}"
                            )
                            break
                    review = attempt.review
                    if review is None:  # another bout ran a new round meanwhile: review it
                        continue
                    routes.append(review.route)
                    if (
                        review.verdict in (Score.RESOLVED, Score.TAMPERED)
                        or attempt.round >= run.rounds
                    ):
                        break
                    if race.budget.reached():  # a later run runs it
                        break
                    route = escalate(review.route, routes[:-1])
                    race.progress.advance(
                        f"{contestant.label} on {task.id}: round {attempt.round + 1}"
                    )
                    again, ran = race.claim(
                        task,
                        contestant,
                        checkouts,
                        previous=attempt,
                        round_number=attempt.round + 1,
                        feedback=feedback(review.report, route),
                    )
                    if ran:  # else another bout ran it: the loop reviews that one
                        race.budget.add(again)
                        new.append(again)
    return new


def _latest(race: Race, task: Task, racer: Contestant) -> Attempt | None:
    return race.store.read(racer.path(task), Attempt)


def _review(
    race: Race,
    auditor: Auditor,
    *,
    task: Task,
    attempt: Attempt,
    examiners: list[Attempt],
    checkouts: Checkouts,
    baseline: TestRun | None,
) -> tuple[Attempt, TestRun]:
    """Audit ``attempt`` on visible evidence only and store the review with it."""
    bench = race.benches.bench(task, checkouts, race.spec.attempt.tasks.timeout)
    gate, baseline = run_gate(
        task,
        attempt,
        bench,
        tests=bench.suite,
        hidden=False,
        examiners=examiners,
        baseline=baseline,
    )
    if race.stop.killed:  # the gate's test runs may have been killed: no review
        raise Interrupted(f"{attempt.contestant} on {task.id}: review killed")
    request = AuditRequest.visible(task, attempt, examiners, gate=gate, baseline=baseline)
    reviewed = attempt.model_copy(update={"review": auditor.audit(request)})
    path = attempt_path(task.id, attempt.contestant, attempt.key)
    with race.store.hold(path):  # a concurrent bout may have reviewed or replaced it
        current = race.store.read(path, Attempt)
        if current != attempt and current is not None:
            return current, baseline
        race.store.write(path, reviewed)
    return reviewed, baseline
