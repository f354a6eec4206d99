"""One attempt's run of its agent, step by step: its workspace (folders, a working copy
of the unfixed code, the task's test environment), the session the agent is given, the
agent's run (confined, guarded, its output captured out of its sight), its patch
(whatever changed on disk), how it ended, and, for an examiner, its tests on the
unfixed code."""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
from dataclasses import dataclass
from pathlib import Path

from bugbout.core.plumbing.confinement.confine import readable_paths
from bugbout.core.plumbing.confinement.leftovers import VARIABLE, Leftovers
from bugbout.core.plumbing.confinement.lifeline import lifeline
from bugbout.core.plumbing.confinement.limits import Guard, LimitExceeded
from bugbout.core.plumbing.confinement.process import Finished, run_logged
from bugbout.core.plumbing.environments.environment import Environment
from bugbout.core.plumbing.tools import Benches
from bugbout.core.plumbing.trees.checkout import Checkouts, WorkingCopy
from bugbout.core.plumbing.trees.patch import apply_patch, diff_trees
from bugbout.core.plumbing.trees.testtree import fresh_test_tree
from bugbout.core.plumbing.trees.treewalk import WorkTreeError
from bugbout.core.race.agent_setup import (
    agent_transcript,
    named_files,
    native_setup,
    run_tests_script,
    start_egress,
    state_dir,
)
from bugbout.core.race.agents import CodingAgent, Session
from bugbout.core.race.contestants import Contestant
from bugbout.core.race.examining import Assignment
from bugbout.core.race.instructions import plan_arm
from bugbout.core.race.logs import Captures, Ending, conclude
from bugbout.core.race.spec import AttemptSpec, RacePlugins
from bugbout.core.store.race_records import (
    Attempt,
    AttemptStatus,
    ChangeArea,
    ChangeKind,
    Examination,
    Patch,
)
from bugbout.core.store.records import Outcome, Task
from bugbout.sandbox.confinement import Confinement
from bugbout.sandbox.overlay import enter


def run_agent(
    spec: AttemptSpec,
    plugins: RacePlugins,
    task: Task,
    contestant: Contestant,
    *,
    checkouts: Checkouts,
    root: Path,
    record: Attempt,
    feedback: str,
    leftovers: Leftovers,
) -> Attempt:
    """Run ``contestant``'s agent on ``task`` in a workspace under ``root``: ``record``
    with how it ended and its patch (``feedback`` ends the prompt of a later round). What
    the agent's run starts is recorded in ``leftovers``, and ended with it. An
    infrastructure failure raises."""
    tools = _Tools(spec, plugins.benches)
    agent = contestant.agent
    arm = plan_arm(agent.options.instructions, checkouts.base(task.parent), agent.instruction_file)
    space = Workspace.make(tools, task, checkouts, root, overlay=not arm.removes)
    arm.apply(space.copy.changes)
    arm = native_setup(agent, space.home, arm)
    session = _session(tools, space, task, contestant, feedback)
    try:
        ended, tampered = _run(tools, space, agent, session, leftovers)
    finally:  # the guard killed a container's runner for a limit: the container too
        leftovers.end()
    arm.restore(space.copy, space.base)
    patch, tampered = _patch(tools, space, tampered)
    ending = _ending(contestant.agent, space, ended, patch, tampered)
    never_ran = ending.status == AttemptStatus.INFRA_ERROR
    read = arm.read(agent_transcript(plugins.transcript, agent, space.logs), ending.summary)
    shutil.rmtree(space.home, ignore_errors=True)
    if contestant.assignment is not None:
        record = _validate(
            tools,
            task,
            contestant.assignment,
            patch=patch,
            checkouts=checkouts,
            root=root,
            record=record,
        )
    return record.model_copy(
        update={
            "status": ending.status,
            "patch": patch,
            "summary": ending.summary,
            "usage": ending.usage,
            "wall_time": round(ended.duration, 3),
            "exit_code": ended.exit_code,
            "logdir": str(space.logs),
            "error": ending.error,
            "guidance_read": None if never_ran else read,
            "opened": list(native.endpoints()) if (native := agent.native()) else [],
        }
    )


@dataclass(frozen=True)
class _Tools:
    """What one attempt's steps read: its spec and the race's benches."""

    spec: AttemptSpec
    benches: Benches


@dataclass(frozen=True)
class Workspace:
    """An attempt's folders under ``root``: its logs, the agent's private HOME, the
    working copy it edits, the unfixed tree its patch is taken against, the task's
    test environment, and where its tests go (the suite's folder at the task's commit)."""

    root: Path
    logs: Path
    home: Path
    base: Path
    copy: WorkingCopy
    environment: Environment
    tests: str

    @classmethod
    def make(
        cls, tools: _Tools, task: Task, checkouts: Checkouts, root: Path, *, overlay: bool = True
    ) -> Workspace:
        """The workspace; a plain copy rather than an overlay unless ``overlay`` (a file
        bugbout removes from the checkout cannot be removed from an overlay's view; one it
        writes lands in the overlay's upper directory)."""
        logs, home = root / "logs", root / "home"
        for directory in (logs, home):
            directory.mkdir(parents=True)
        base = checkouts.base(task.parent)
        benches = tools.benches
        overlays = overlay and getattr(benches.sandbox, "overlays", True)
        copy = checkouts.attempt_copy(task.parent, root, overlay=overlays)
        bench = benches.bench(task, checkouts, tools.spec.tasks.timeout)
        tests = benches.runner.writing_folder(bench.suite, benches.project.tests)
        return cls(root, logs, home, base, copy, bench.environment, tests)


def _session(
    tools: _Tools, space: Workspace, task: Task, contestant: Contestant, feedback: str
) -> Session:
    """What the agent is given: its prompt (saved in the logs), a script that runs the
    tests, its folders and what it may read and write."""
    benches, workdir, agent = tools.benches, space.copy.tree, contestant.agent
    test_command = run_tests_script(
        benches.runner, benches.project, space.environment, workdir, space.logs
    )
    prompt = contestant.prompt(
        task, tests=space.tests, test_command=test_command, style=benches.runner.style
    )
    prompt += f"\n{feedback}" if feedback else ""
    prompt_file = space.logs / "prompt.md"
    prompt_file.write_text(prompt)
    state_dirs = tuple(state_dir(entry, space.home) for entry in agent.options.state_dirs)
    for directory in state_dirs:
        directory.mkdir(parents=True, exist_ok=True)
    confinement = Confinement(
        workdir=workdir,
        writable=(space.logs, space.home, *state_dirs),
        readable=readable_paths(
            [space.environment.command([], workdir, []).argv[0], agent.executable]
        ),
        masked=benches.masked,
    )
    return Session(
        prompt=prompt,
        workdir=workdir,
        logdir=space.logs,
        home=space.home,
        sandbox=benches.sandbox,
        confinement=confinement,
        prompt_file=prompt_file,
        test_command=test_command,
        task_id=task.id,
    )


def _run(
    tools: _Tools, space: Workspace, agent: CodingAgent, session: Session, leftovers: Leftovers
) -> tuple[Finished, str | None]:
    """Run the agent's command: behind the egress proxy to its endpoints, in the sandbox,
    inside its overlay, under the guard of the limits. Returns how it ended and what it
    did to bugbout's own logs or limits, if anything."""
    spec, benches = tools.spec, tools.benches
    invocation = agent.invocation(session)
    native = agent.native()
    programs = native.programs() if native else ()
    named = named_files([*invocation.argv, *programs], benches.masked)
    endpoints = (*invocation.endpoints, *(native.endpoints() if native else ()))
    confinement = session.confinement.model_copy(
        update={"readable": (*session.confinement.readable, *named)}
    )
    env = {**agent.environment(session), **invocation.env, VARIABLE: str(leftovers.path)}
    argv = invocation.argv
    with contextlib.ExitStack() as stack:
        if invocation.confined and endpoints and benches.sandbox.name != "none":
            argv, extra, folder = start_egress(endpoints, argv, stack)
            env.update(extra)
            confinement = confinement.model_copy(
                update={"readable": (*confinement.readable, folder)}
            )
        if invocation.confined:
            argv = benches.sandbox.wrap(
                argv, confinement.model_copy(update={"tmp_size": spec.limits.tmp})
            )
        if space.copy.overlay is not None:
            argv = enter(space.copy.overlay, argv)
        writable = (space.copy.changes, *confinement.writable)
        guard = Guard(spec.limits, writable, space.root / "limits.json", benches.guard, lifeline())
        captures = Captures(space.root / "streams").create()  # out of the agent's sight
        ended = run_logged(
            guard.wrap(argv),
            cwd=session.workdir,
            env=env,
            stdin=invocation.stdin,
            timeout=spec.run.timeout,
            stdout=captures.stdout,
            stderr=captures.stderr,
            limit=spec.run.log_limit,
            pass_fds=guard.fds,
            leftovers=leftovers,
        )
    tampered = captures.publish(space.logs)  # the agent has stopped: nothing can replace them
    breach = guard.breach()
    return ended, tampered or breach


def _patch(tools: _Tools, space: Workspace, breach: str | None) -> tuple[Patch, str | None]:
    """Whatever changed in the working copy, as a patch; one that cannot be taken is
    empty, and why is a breach."""
    try:
        patch = diff_trees(
            space.base,
            space.copy.changes,
            source=tools.benches.project.source,
            tests=space.tests,
            limits=tools.spec.limits,
            upper=space.copy.overlay is not None,
            is_test_file=tools.benches.runner.is_test_file,
        )
    except LimitExceeded as exc:
        return Patch(), breach or str(exc)
    except WorkTreeError as exc:  # what the agent left: a path too long, unreadable
        return Patch(), breach or f"its working copy cannot be recorded: {exc}"
    except (PermissionError, UnicodeError, ValueError) as exc:  # what the agent left
        return Patch(), breach or f"its working copy cannot be read: {exc}"
    return patch, breach


def _ending(
    agent: CodingAgent, space: Workspace, ended: Finished, patch: Patch, tampered: str | None
) -> Ending:
    """How the attempt ended, read from its logs by the agent's adapter."""
    ending = conclude(agent, space.logs, ended, empty_patch=patch.empty, tampered=tampered)
    failed = (AttemptStatus.AGENT_ERROR, AttemptStatus.INFRA_ERROR)  # never started, too
    if ending.status in failed and _vanished(agent.executable):
        ending = dataclasses.replace(
            ending,
            status=AttemptStatus.INFRA_ERROR,
            error=f"its program {agent.executable!r} is no longer installed",
        )  # the machine's doing, as for every agent kind: --retry-failed runs it again
    return ending


def _validate(
    tools: _Tools,
    task: Task,
    assignment: Assignment,
    *,
    patch: Patch,
    checkouts: Checkouts,
    root: Path,
    record: Attempt,
) -> Attempt:
    """Run an examiner's tests on the unfixed code: a reproduction must fail there."""
    modules = [
        change.path
        for change in patch.area(ChangeArea.TEST)
        if change.kind != ChangeKind.DELETED and tools.benches.runner.is_test_file(change.path)
    ]
    examination = Examination(assignment=assignment.name)
    if modules:
        bench = tools.benches.bench(task, checkouts, tools.spec.tasks.timeout)
        tree = fresh_test_tree(checkouts, task.parent, root / "unfixed")
        apply_patch(tree, patch.tests)
        run = bench.run(tree, modules, label="unfixed")
        failing = sorted(n for n, o in run.outcomes.items() if o in (Outcome.FAILED, Outcome.ERROR))
        passing = sorted(n for n, o in run.outcomes.items() if o == Outcome.PASSED)
        examination = Examination(
            assignment=assignment.name,
            validation=run,
            reproductions=failing,
            rejected_tests=passing if assignment.must_fail_on_base() else [],
        )
    return record.model_copy(update={"examination": examination})


def _vanished(program: str | None) -> bool:
    """Whether an agent's program is missing from this machine now (it was there when the
    bout checked before racing)."""
    return bool(program) and shutil.which(program or "") is None
