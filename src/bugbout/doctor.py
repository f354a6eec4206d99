"""``bugbout doctor``: is this machine ready for a bout, and do the contestants' CLIs work?

Three kinds of checks, each reported as one :class:`Check` the moment it is known:

* the machine: git, uv, the Python interpreters test environments can use, the sandbox,
  and (with a ``bugbout.yaml``) the repository and the project's directories;
* each contestant: its CLI is installed, answers ``--version``, and still accepts every
  ``--flag`` its adapter passes (they are looked up in the CLI's ``--help``);
* ``--dry-run``: each contestant really races on a tiny synthetic repository, pointed at a
  scripted model server on 127.0.0.1 (:mod:`bugbout.testing.model_server`), so the whole
  path (adapter, CLI, sandbox, egress, patch) is proven without spending quota.

What bugbout knows of the packaged agents (how to install them, which model name and API
base a dry run gives them) is the :data:`KNOWN_AGENTS` table.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bugbout.core.agents import CodingAgent, Session
from bugbout.core.errors import BugboutError
from bugbout.core.manager import Plugins
from bugbout.core.process import run_logged
from bugbout.core.progress import Progress, SilentProgress
from bugbout.core.race import Contestant, build_contestants
from bugbout.core.records import Oracle, OracleSet, Task, TaskIssue, TaskSet
from bugbout.core.settings import BoutSettings
from bugbout.plugins.sandboxes.none import NoSandbox
from bugbout.sandbox.confinement import Confinement

PROBE_TIMEOUT = 10.0
"""Seconds ``<cli> --version`` and ``<cli> --help`` may take."""
DRY_RUN_TIMEOUT = 300.0
"""Seconds one contestant may take on the dry run's task."""
DUMMY_KEY = "bugbout-doctor-dummy-key"
"""The credential every agent gets in a dry run: the scripted server accepts anything."""
SECRET_VARIABLE = re.compile(r"API_KEY$|_TOKEN$|SECRET|PASSWORD|CREDENTIALS", re.I)
"""Variables kept away from every CLI doctor starts: the user's keys never leave."""
_FLAG = re.compile(r"--[A-Za-z0-9][\w-]*")
_SUBCOMMAND = re.compile(r"[A-Za-z][\w-]*")
_VERSION = re.compile(r"\d+(?:\.\d+)+(?:[-+.][0-9A-Za-z.]+)?")


@dataclass(frozen=True)
class KnownAgent:
    """What bugbout knows of a packaged agent's CLI."""

    install: str
    """How to install the CLI."""
    upgrade: str
    """How to update it, when it no longer accepts a flag its adapter passes."""
    model: str
    """A model name the CLI accepts, for the dry run (the scripted server answers any)."""
    url_suffix: str = ""
    """Appended to the scripted server's URL to make the adapter's ``base-url``."""
    keys: tuple[str, ...] = ()
    """Credential variables the CLI wants, set to :data:`DUMMY_KEY` in a dry run."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """More options for the dry run."""
    distribution: str | None = None
    """For a CLI written in Python without ``--version``: the distribution whose version
    its interpreter (from the ``#!`` line) reports."""


KNOWN_AGENTS: dict[str, KnownAgent] = {
    "claude-code": KnownAgent(
        install="npm install -g @anthropic-ai/claude-code",
        upgrade="npm install -g @anthropic-ai/claude-code@latest",
        model="claude-sonnet-4-5",
        keys=("ANTHROPIC_API_KEY",),
    ),
    "codex": KnownAgent(
        install="npm install -g @openai/codex",
        upgrade="npm install -g @openai/codex@latest",
        model="gpt-5.5",
        url_suffix="/v1",
        keys=("OPENAI_API_KEY",),
    ),
    "gemini-cli": KnownAgent(
        install="npm install -g @google/gemini-cli",
        upgrade="npm install -g @google/gemini-cli@latest",
        model="gemini-2.5-flash",
        keys=("GEMINI_API_KEY",),
    ),
    "mini-swe-agent": KnownAgent(
        install="pip install mini-swe-agent, or set the contestant's `executable` to its `mini`",
        upgrade="pip install --upgrade mini-swe-agent",
        model="openai/scripted",
        url_suffix="/v1",
        keys=("OPENAI_API_KEY",),
        options={"step-limit": 10},
        distribution="mini-swe-agent",
    ),
}
"""The packaged agents, by harness."""


@dataclass(frozen=True)
class Check:
    """One line of the report: what was checked, whether it passed, and the fix if not."""

    name: str
    ok: bool
    detail: str
    fix: str | None = None

    @property
    def line(self) -> str:
        text = f"{'ok' if self.ok else 'FAIL':<4}  {self.name}: {self.detail}"
        return f"{text}; fix: {self.fix}" if self.fix and not self.ok else text


Report = Callable[[Check], None]
ProgressFactory = Callable[[], AbstractContextManager[Progress]]


def diagnose(
    settings: BoutSettings,
    plugins: Plugins,
    report: Report,
    *,
    configured: bool = True,
    dry_run: bool = False,
    note: Callable[[str], None] | None = None,
    progress: ProgressFactory | None = None,
) -> bool:
    """Run every check, reporting each as it is known; whether all passed.

    ``configured`` is false when there is no ``bugbout.yaml``: the repository is then not
    checked. ``progress`` gives the dry run somewhere to show its race.
    """
    passed = True

    def emit(check: Check) -> None:
        nonlocal passed
        passed = passed and check.ok
        report(check)

    for check in machine_checks(settings, plugins, configured=configured):
        emit(check)
    if not settings.contestant:
        if note:
            note(
                "no contestants to check; choose some, e.g. "
                "`bugbout doctor 'contestant=[codex,claude-code]'`"
            )
        return passed
    for check in contestant_checks(settings, plugins):
        emit(check)
    if dry_run:
        context = progress() if progress else contextlib.nullcontext(SilentProgress())
        with context as shown:
            checks = dry_run_checks(settings, plugins, shown)
        for check in checks:
            emit(check)
    return passed


# --------------------------------------------------------------------------------------------
# The machine


def machine_checks(
    settings: BoutSettings, plugins: Plugins, *, configured: bool = True
) -> Iterator[Check]:
    """git, uv, the interpreters, the sandbox; with a configuration, the repository."""
    yield git_check()
    yield uv_check()
    yield python_check(settings if configured else None)
    yield sandbox_check(settings, plugins)
    yield podman_check(settings)
    if configured:
        yield from repository_checks(settings)


def git_check() -> Check:
    git = shutil.which("git")
    if git is None:
        return Check("git", False, "git is not on PATH", "install git (e.g. `apt install git`)")
    answer = _probe([git, "--version"], env=_quiet_env())
    version = _version(answer.text)
    if not answer.ok or version is None:
        return Check("git", False, f"`git --version` failed: {answer.problem}", "reinstall git")
    return Check("git", True, f"{version} ({git})")


def uv_check() -> Check:
    fix = "pip install uv (bugbout's test environments are built with it), or use env=interpreter"
    try:
        from uv import find_uv_bin

        uv = find_uv_bin()
    except (ImportError, FileNotFoundError) as exc:
        return Check("uv", False, f"uv is not installed ({exc})", fix)
    answer = _probe([uv, "--version"], env=_quiet_env())
    version = _version(answer.text)
    if not answer.ok or version is None:
        return Check("uv", False, f"`{uv} --version` failed: {answer.problem}", fix)
    return Check("uv", True, f"{version} ({uv})")


def python_check(settings: BoutSettings | None) -> Check:
    """The interpreters test environments can use; a pinned ``project.python`` among them."""
    from bugbout.core.project_metadata import available_interpreters

    found = available_interpreters()
    listing = ", ".join(found)
    pinned = settings.project.python if settings else None
    if pinned:
        minor = ".".join(pinned.strip().split(".")[:2])
        if minor not in found:
            return Check(
                "python",
                False,
                f"project.python is {pinned} but Python {minor} is not installed "
                f"(found {', '.join(found) or 'none'})",
                f"install it, e.g. `pyenv install {minor}`, or change project.python",
            )
    return Check("python", True, listing or "none found")


def sandbox_check(settings: BoutSettings, plugins: Plugins) -> Check:
    """The sandbox agents and tests will run in; for ``auto``, the one it chose."""
    name = settings.sandbox.name
    try:
        sandbox = plugins.create("sandbox", name, settings.sandbox.options)
        problem = sandbox.problem()
    except BugboutError as exc:
        return Check("sandbox", False, str(exc), "choose another, e.g. sandbox=auto")
    if problem:
        return Check("sandbox", False, f"{name}: {problem}")  # the problem names its fix
    if name == "none":
        return Check("sandbox", True, "none: agents and tests run unconfined, with the network")
    chosen = getattr(sandbox, "chosen", None)
    if chosen is not None and getattr(chosen, "name", name) != name:
        return Check("sandbox", True, f"{name}: chose {chosen.name}")
    return Check("sandbox", True, f"{name} works")


def podman_check(settings: BoutSettings) -> Check:
    """Whether podman runs containers here, as bugbout configures it (runc, cgroupfs,
    ulimits within the hard limits), with the chosen plugin's options; when not, the cause
    and its fix. The base image is checked only for ``env=podman`` (the sandbox needs
    none). It fails the report only when ``env=podman`` or ``sandbox=podman`` is chosen."""
    from bugbout.core.tasks import bugbout_home
    from bugbout.sandbox.podman import Podman

    used = [
        f"{kind}=podman"
        for kind, choice in (("env", settings.env), ("sandbox", settings.sandbox))
        if choice.name == "podman"
    ]
    env = settings.env.name == "podman"
    options = settings.env.options if env else {}
    if not env and settings.sandbox.name == "podman":
        options = settings.sandbox.options

    def option(name: str) -> str | None:
        value = options.get(name)
        return str(value) if value else None

    def path(name: str) -> Path | None:
        value = option(name)
        return Path(value).expanduser() if value else None

    podman = Podman(
        bugbout_home(),
        socket=option("socket"),
        storage=path("storage"),
        image=option("image"),
        containerfile=path("containerfile"),
        suite=option("suite"),
        mirror=option("mirror"),
        cache=path("cache"),
        driver=option("driver") or "overlay",
        executable=option("executable") or "podman",
    )
    # The sandbox needs no image: the base image matters only to env=podman.
    problem = podman.problem(base=env)
    if problem is not None:
        if not used:
            return Check("podman", True, f"not used (env=podman, sandbox=podman): {problem}")
        return Check("podman", False, f"{', '.join(used)}: {problem}")  # it names its fix
    answer = _probe([podman.executable, "--version"], env=_quiet_env())
    version = _version(answer.text) or "podman"
    return Check("podman", True, f"{version} runs containers (runc, cgroupfs, no network)")


def repository_checks(settings: BoutSettings) -> Iterator[Check]:
    """The repository is a git repository holding ``project.source`` and ``project.tests``."""
    from bugbout.core.git import Git

    repository = settings.repository
    with Git(repository) as git:
        if not git.is_repository():
            yield Check(
                "repository",
                False,
                f"{repository} is not a git repository",
                "set project.repository in bugbout.yaml to the repository's root",
            )
            return
    yield Check("repository", True, f"{repository} is a git repository")
    for key, value in (("source", settings.project.source), ("tests", settings.project.tests)):
        path = repository / value
        if path.is_dir():
            yield Check(f"project.{key}", True, f"{value} exists")
        else:
            yield Check(
                f"project.{key}",
                False,
                f"{value} is not a directory of {repository}",
                f"set project.{key} in bugbout.yaml (`bugbout init --force` detects it)",
            )


# --------------------------------------------------------------------------------------------
# The contestants' CLIs


def contestant_checks(settings: BoutSettings, plugins: Plugins) -> Iterator[Check]:
    """Each contestant and examiner: it builds, its CLI is installed and answers, its
    flags are known."""
    for role, name, entry in _agents(settings):
        contestant, problem = _build(settings, plugins, role, name, entry)
        if problem is not None:
            yield Check(
                f"{name} settings",
                False,
                problem,
                f"correct {role}.{name} in bugbout.yaml or on the command line",
            )
            # Still look at the CLI, with the options a dry run gives it (e.g. a model).
            dry = _dry_entry(entry, "http://127.0.0.1")
            contestant, _ = _build(settings, plugins, role, name, dry)
            if contestant is None:
                continue
        assert contestant is not None
        with tempfile.TemporaryDirectory(prefix="bugbout-doctor-") as scratch:
            yield from cli_checks(contestant, Path(scratch))


def cli_checks(contestant: Contestant, scratch: Path) -> Iterator[Check]:
    """``contestant``'s CLI: found on PATH, its version, and the flags its adapter passes
    listed in its ``--help`` (and its subcommand's). Runs with a private HOME in
    ``scratch``, and without the user's credentials."""
    name, agent = contestant.name, contestant.agent
    executable = shutil.which(agent.executable) if agent.executable else None
    if executable is None:
        yield Check(
            name,
            False,
            f"{agent.executable or 'its program'!r} is not installed (not on PATH)",
            install_hint(contestant),
        )
        return
    session = dummy_session(scratch)
    env = _probe_env(agent, session)
    answer = _probe([executable, "--version"], env=env, cwd=session.workdir)
    program = Path(executable).name
    if not answer.ran:
        yield Check(
            name,
            False,
            f"`{program} --version` failed: {answer.problem}",
            f"reinstall it: {install_hint(contestant)}",
        )
        return
    version = _version(answer.text) if answer.ok else None
    known = KNOWN_AGENTS.get(agent.harness)
    if version is None and known and known.distribution:
        version = _distribution_version(executable, known.distribution)
    if version is None and known and not answer.ok:
        yield Check(
            name,
            False,
            f"`{program} --version` failed: {answer.problem}",
            f"reinstall it: {known.install}",
        )
    else:
        unknown = f"(version unknown: `{program} --version` gave {answer.problem or 'none'})"
        yield Check(name, True, f"{program} {version or unknown} at {executable}")
    yield flag_check(contestant, session, env)


def flag_check(contestant: Contestant, session: Session, env: dict[str, str]) -> Check:
    """Every ``--flag`` the adapter passes appears in the CLI's ``--help``."""
    name = f"{contestant.name} flags"
    try:
        argv = contestant.agent.invocation(session).argv
    except (BugboutError, ValueError, OSError) as exc:
        return Check(name, False, f"the adapter cannot build its command line: {exc}")
    flags = sorted({flag for part in argv[1:] if _FLAG.fullmatch(flag := part.split("=", 1)[0])})
    if not flags:
        return Check(name, True, "passes no --flags")
    program = Path(argv[0]).name
    helps = [[argv[0], "--help"]]
    if len(argv) > 1 and not argv[1].startswith("-"):
        if not _SUBCOMMAND.fullmatch(argv[1]):
            return Check(name, True, f"not checked: they are {argv[1]}'s, not {program}'s")
        helps.append([argv[0], argv[1], "--help"])
    texts = []
    for command in helps:
        answer = _probe(command, env=env, cwd=session.workdir)
        # Some CLIs exit non-zero after printing their help: the text counts if it has flags.
        if not answer.ok and not any(_listed(flag, answer.text) for flag in flags):
            shown = " ".join([program, *command[1:]])
            return Check(name, False, f"`{shown}` failed: {answer.problem}")
        texts.append(answer.text)
    text = "\n".join(texts)
    missing = [flag for flag in flags if not _listed(flag, text)]
    asked = " and ".join(f"`{' '.join([program, *command[1:]])}`" for command in helps)
    if missing:
        known = KNOWN_AGENTS.get(contestant.agent.harness)
        return Check(
            name,
            False,
            f"{asked} does not list {', '.join(missing)}, which bugbout passes",
            f"update the CLI ({known.upgrade})" if known else "update the CLI or its command",
        )
    return Check(name, True, f"the {len(flags)} --flags bugbout passes are all in {asked}")


def _listed(flag: str, text: str) -> bool:
    """Whether ``flag`` appears in ``text`` as a whole flag (``--model`` is not in
    ``--model-class``)."""
    return re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text) is not None


def install_hint(contestant: Contestant) -> str:
    known = KNOWN_AGENTS.get(contestant.agent.harness)
    if known:
        return known.install
    program = contestant.agent.executable
    return f"install {program!r}, or correct {contestant.role}.{contestant.name}'s command"


def dummy_session(scratch: Path, prompt: str = "Fix the bug in add(), please.") -> Session:
    """A session in ``scratch`` for building an invocation that is never run."""
    workdir, logdir, home = scratch / "work", scratch / "logs", scratch / "home"
    for directory in (workdir, logdir, home):
        directory.mkdir(parents=True, exist_ok=True)
    prompt_file = logdir / "prompt.md"
    prompt_file.write_text(prompt)
    return Session(
        prompt=prompt,
        workdir=workdir,
        logdir=logdir,
        home=home,
        sandbox=NoSandbox(),
        confinement=Confinement(workdir=workdir, writable=(logdir, home)),
        prompt_file=prompt_file,
        test_command="true",
    )


# --------------------------------------------------------------------------------------------
# The dry run


BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
FIX_LINE = "+    return a + b"
FIX_COMMAND = "sed -i 's/return a - b/return a + b/' src/calc/core.py"


def dry_run_checks(
    settings: BoutSettings, plugins: Plugins, progress: Progress | None = None
) -> list[Check]:
    """Each contestant on a one-bug repository, its CLI talking to a scripted model that
    fixes the bug with a shell command: passes when the attempt finished, its patch holds
    the fix and the scripted server was asked. ``command`` contestants cannot be scripted:
    their program must exist. Keeps the work directory when something failed."""
    from bugbout.testing.model_server import ModelServer, Say, Script, Shell

    checks: dict[str, Check] = {}
    scriptable: dict[str, dict[str, Any]] = {}
    for name, entry in sorted(settings.contestant.items()):
        label = f"{name} dry run"
        scripted = str(entry.get("agent")) in KNOWN_AGENTS
        candidate = _dry_entry(entry, "http://127.0.0.1:9") if scripted else entry
        contestant, problem = _build(settings, plugins, "contestant", name, candidate)
        if contestant is None:
            checks[name] = Check(label, False, f"cannot build it: {problem}")
        elif not shutil.which(contestant.agent.executable or ""):
            checks[name] = Check(
                label,
                False,
                f"{contestant.agent.executable!r} is not installed",
                install_hint(contestant),
            )
        elif scripted:
            scriptable[name] = entry
        else:
            checks[name] = Check(
                label, True, f"{contestant.agent.harness} cannot be scripted; its program exists"
            )
    if scriptable:
        script = Script([Shell(FIX_COMMAND), Say("Fixed add(): it subtracted.")])
        scratch = Path(tempfile.mkdtemp(prefix="bugbout-doctor-", dir=_short_temp()))
        with contextlib.ExitStack() as stack:
            servers = {name: stack.enter_context(ModelServer(script)) for name in scriptable}
            entries = {
                name: _dry_entry(entry, servers[name].url) for name, entry in scriptable.items()
            }
            results = _race(settings, plugins, entries, scratch, progress or SilentProgress())
            for name, result in results.items():
                checks[name] = _judge(name, result, len(servers[name].scripted_requests))
        if not any(result.logdir and not checks[name].ok for name, result in results.items()):
            shutil.rmtree(scratch, ignore_errors=True)  # else its logs are named in the report
    return [checks[name] for name in sorted(checks)]


def _short_temp() -> str:
    """The temporary directory, or ``/tmp`` when that is much shorter: the race puts a
    Unix socket deep below it, and those paths are limited to about 100 bytes (macOS's
    temporary directory alone takes 50)."""
    default = tempfile.gettempdir()
    if len(default) > 16 and Path("/tmp").is_dir() and os.access("/tmp", os.W_OK):
        return "/tmp"
    return default


def _dry_entry(entry: Mapping[str, Any], url: str) -> dict[str, Any]:
    """A contestant's settings pointed at the scripted server at ``url``."""
    known = KNOWN_AGENTS.get(str(entry.get("agent")))
    if known is None:
        return dict(entry)
    own = {k: v for k, v in dict(entry.get("env") or {}).items() if not SECRET_VARIABLE.search(k)}
    env = {**own, **dict.fromkeys(known.keys, DUMMY_KEY)}
    return {
        **entry,
        **known.options,
        "model": known.model,
        "base-url": url + known.url_suffix,
        "env": env,
    }


@dataclass(frozen=True)
class _Result:
    status: str
    wall_time: float
    source: str = ""
    error: str | None = None
    logdir: str = ""


def _race(
    settings: BoutSettings,
    plugins: Plugins,
    entries: dict[str, dict[str, Any]],
    scratch: Path,
    progress: Progress,
) -> dict[str, _Result]:
    """Race ``entries`` on the synthetic repository in ``scratch``; each one's result."""
    from bugbout.core.race import Race
    from bugbout.core.settings import PluginChoice, ProjectSettings, RunSettings
    from bugbout.core.store import Store

    started = time.monotonic()
    try:
        repository, task = _synthetic_repository(scratch / "repo")
        interpreter = _python_with_pytest()
        bout = BoutSettings(
            project=ProjectSettings(
                source="src/calc", tests="tests", interpreter=str(interpreter or sys.executable)
            ),
            env=PluginChoice(name="interpreter" if interpreter else "uv"),
            sandbox=settings.sandbox,
            run=RunSettings(timeout=DRY_RUN_TIMEOUT),
            contestant=entries,
            root=repository,
        )
        oracle = Oracle(task_id=task.id, status="ok", fail_to_pass=["tests/test_core.py::test_add"])
        with _dry_run_environment(scratch / "home"):
            contestants = build_contestants(bout, plugins)
            attempts = Race(bout, plugins, Store(bout.store_dir), progress).run(
                TaskSet(examined=1, tasks=[task]),
                OracleSet({task.id: oracle}),
                contestants,
            )
    except (BugboutError, OSError, RuntimeError) as exc:
        elapsed = time.monotonic() - started
        return {name: _Result("infra-error", elapsed, error=str(exc)) for name in entries}
    found = {
        attempt.contestant: _Result(
            attempt.status.value,
            attempt.wall_time,
            attempt.patch.source,
            attempt.error,
            attempt.logdir,
        )
        for attempt in attempts
    }
    return {
        name: found.get(name, _Result("infra-error", 0.0, error="the race did not run it"))
        for name in entries
    }


def _judge(name: str, result: _Result, requests: int) -> Check:
    label = f"{name} dry run"
    wall = f"{result.wall_time:.1f} s"
    problems = []
    if result.status != "finished":
        problems.append(f"ended {result.status}" + (f" ({result.error})" if result.error else ""))
    else:
        if FIX_LINE not in result.source:
            problems.append("its patch does not fix the bug")
        if requests == 0:
            problems.append("it never asked the scripted model")
    if problems:
        where = f"; logs in {result.logdir}" if result.logdir else ""
        return Check(label, False, f"{'; '.join(problems)} after {wall}{where}")
    return Check(
        label,
        True,
        f"fixed the bug in {wall} through the real CLI ({requests} scripted model turns)",
    )


def _synthetic_repository(path: Path) -> tuple[Path, Task]:
    """A one-bug repository (the bug, then its fix) and its task."""
    from bugbout.testing.repository import RepositoryBuilder

    repo = RepositoryBuilder(path)
    parent = repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "calc"\nversion = "0"\n',
            "src/calc/__init__.py": "",
            "src/calc/core.py": BUGGY,
            "tests/test_core.py": "from calc.core import add\n\n\n"
            "def test_zero():\n    assert add(1, 0) == 1\n",
        },
    )
    title = "add() subtracts instead of adding"
    fix = repo.commit(
        f"Fix {title} (#1)",
        {
            "src/calc/core.py": FIXED,
            "tests/test_core.py": "from calc.core import add\n\n\n"
            "def test_zero():\n    assert add(1, 0) == 1\n\n\n"
            "def test_add():\n    assert add(2, 3) == 5\n",
        },
    )
    task = Task(
        id=Task.id_for(fix),
        sha=fix,
        parent=parent,
        date=repo.git("log", "-1", "--format=%cI", fix),
        title=title,
        issue=TaskIssue(number=1, title=title),
        problem_statement=f"{title}: add(2, 3) returns -1, not 5.",
        source_files=["src/calc/core.py"],
        test_files=["tests/test_core.py"],
        changed_test_files=["tests/test_core.py"],
        added_tests=["tests/test_core.py::test_add"],
    )
    return path, task


def _python_with_pytest() -> Path | None:
    """An interpreter that imports pytest (bugbout's own first), for a fast environment."""
    from bugbout.core.project_metadata import available_interpreters

    candidates = [Path(sys.executable), *reversed(available_interpreters().values())]
    for python in dict.fromkeys(candidates):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            result = subprocess.run(
                [str(python), "-c", "import pytest"],
                capture_output=True,
                timeout=30,
                check=False,
            )
            if result.returncode == 0:
                return python
    return None


@contextlib.contextmanager
def _dry_run_environment(home: Path) -> Iterator[None]:
    """``BUGBOUT_HOME`` is ``home``, and no secret of the user's is in the environment
    (agents copy their vendor's keys from it): restored afterwards."""
    saved = dict(os.environ)
    try:
        for variable in list(os.environ):
            if SECRET_VARIABLE.search(variable):
                del os.environ[variable]
        os.environ["BUGBOUT_HOME"] = str(home)
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


# --------------------------------------------------------------------------------------------
# Helpers


def _agents(settings: BoutSettings) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """Every selected contestant and examiner: ``(role, name, entry)``."""
    for role, selected in (("contestant", settings.contestant), ("examiner", settings.examiner)):
        for name, entry in sorted(selected.items()):
            yield role, name, entry


def _build(
    settings: BoutSettings, plugins: Plugins, role: str, name: str, entry: Mapping[str, Any]
) -> tuple[Contestant | None, str | None]:
    """One contestant (or examiner) built as a bout builds it, or why it cannot be: the
    user's mistake (a setting); anything else is doctor's own failure and propagates."""
    alone = {"contestant": {}, "examiner": {}, role: {name: dict(entry)}}
    try:
        (contestant,) = build_contestants(settings.model_copy(update=alone), plugins)
    except (BugboutError, ValidationError) as exc:
        return None, str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return contestant, None


@dataclass(frozen=True)
class _Answer:
    ok: bool
    """It exited 0."""
    text: str
    problem: str = ""
    ran: bool = True
    """It started and ended in time."""


def _probe(argv: list[str], *, env: dict[str, str], cwd: Path | None = None) -> _Answer:
    """Run a short command (``--version``, ``--help``): its output, and what went wrong."""
    with tempfile.TemporaryDirectory(prefix="bugbout-probe-") as scratch:
        folder = Path(scratch)
        try:
            ended = run_logged(
                argv,
                cwd=cwd or folder,
                env=env,
                stdin=None,
                timeout=PROBE_TIMEOUT,
                stdout=folder / "stdout",
                stderr=folder / "stderr",
                limit=1_000_000,
            )
        except OSError as exc:
            return _Answer(False, "", f"cannot start it: {exc}", ran=False)
        text = "\n".join(
            (folder / stream).read_text(errors="replace")
            for stream in ("stdout", "stderr")
            if (folder / stream).exists()
        )
    if ended.timed_out:
        return _Answer(False, text, f"no answer in {PROBE_TIMEOUT:.0f} s", ran=False)
    if ended.exit_code != 0:
        lines = [line.strip() for line in text.splitlines() if re.search(r"[A-Za-z0-9]", line)]
        last = f": {lines[-1][:200]}" if lines else ""
        return _Answer(False, text, f"exit {ended.exit_code}{last}")
    return _Answer(True, text)


def _probe_env(agent: CodingAgent, session: Session) -> dict[str, str]:
    """The agent's own environment for ``session`` (its private HOME and config dirs,
    its quiet settings), without credentials, with wide help text."""
    try:
        env = agent.environment(session)
    except (BugboutError, ValueError, OSError):
        env = _quiet_env(session.home)
    env = {key: value for key, value in env.items() if not SECRET_VARIABLE.search(key)}
    env.update(COLUMNS="1000", NO_COLOR="1", TERM="dumb")
    return env


def _quiet_env(home: Path | None = None) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", os.defpath), "LANG": "C.UTF-8", "TERM": "dumb"}
    if home is not None:
        env["HOME"] = str(home)
    return env


def _distribution_version(executable: str, distribution: str) -> str | None:
    """The version of ``distribution`` in the Python that runs the script ``executable``."""
    try:
        with Path(executable).open("rb") as script:
            first = script.readline(500).decode(errors="replace")
    except OSError:
        return None
    if not first.startswith("#!") or "python" not in first:
        return None
    interpreter = first[2:].split()
    code = "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))"
    answer = _probe([*interpreter, "-c", code, distribution], env=_quiet_env())
    return _version(answer.text) if answer.ok else None


def _version(text: str) -> str | None:
    match = _VERSION.search(text)
    return match.group(0) if match else None
