"""The settings a bout runs with, as pydantic models: the core never sees Hydra.

Keys are written with dashes in ``bugbout.yaml`` (``max-source-files``), as in
``pyproject.toml``; in Python they are attributes with underscores.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator


def dashed(name: str) -> str:
    """``max_source_files`` → ``max-source-files``."""
    return name.replace("_", "-")


class Settings(BaseModel):
    """Base of every settings model: dashed keys, unknown keys are errors."""

    model_config = ConfigDict(
        extra="forbid", alias_generator=dashed, populate_by_name=True, frozen=True
    )


class ProjectSettings(Settings):
    """``project:`` — the code under test."""

    source: tuple[str, ...]
    """The package's directories, relative to the repository root: ``src/mypkg``, or a list
    such as ``[src/mypkg, mypkg]`` (several packages, or where the package lived before).
    A file under any of them is the package's source."""
    tests: str = "tests"
    repository: str = "."
    """The repository, relative to ``bugbout.yaml``."""
    github: str | None = None
    """``owner/name`` to read issues from, when ``origin`` is not on GitHub."""
    python: str | None = None
    """A Python version such as ``3.9``; by default the one the project declared at the fix."""
    test_dependencies: tuple[str, ...] = ("pytest",)
    pytest_args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    interpreter: str | None = None
    test_timeout: float = Field(default=300, gt=0)
    """Seconds one test may run; past it pytest is stopped, that test counts as failed
    (``hung``) and the others run again without it."""

    @field_validator("source", mode="before")
    @classmethod
    def _paths(cls, value: object) -> object:
        if isinstance(value, str):
            return (value,)
        if isinstance(value, (list, tuple)) and not value:
            raise ValueError("must name at least one directory, e.g. 'src/mypkg'")
        return value

    @field_validator("source")
    @classmethod
    def _relative_paths(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(_inside_repository(path) for path in value))

    @field_serializer("source")
    def _one_or_several(self, value: tuple[str, ...]) -> str | list[str]:
        """One directory is written as a string, as before lists were allowed: the keys
        of stored results (ground truth, verdicts) made from these settings stay the same."""
        return value[0] if len(value) == 1 else list(value)

    @field_validator("tests")
    @classmethod
    def _relative(cls, value: str) -> str:
        return _inside_repository(value)

    @field_validator("python", mode="before")
    @classmethod
    def _version(cls, value: object) -> object:
        if isinstance(value, float):
            raise ValueError("write the version as a string: '3.10' (unquoted, 3.10 is 3.1)")
        return str(value) if isinstance(value, int) else value

    @property
    def import_roots(self) -> tuple[str, ...]:
        """The directories to put on ``PYTHONPATH`` so the package imports, whichever of
        its locations a tree holds: each source directory's parent (``src`` or ``.``)."""
        return tuple(dict.fromkeys(str(Path(path).parent) for path in self.source))


def _inside_repository(value: str) -> str:
    value = value.strip()
    if not value or Path(value).is_absolute() or ".." in Path(value).parts:
        raise ValueError("must be a path inside the repository, e.g. 'src/mypkg'")
    return value.rstrip("/")


class TasksSettings(Settings):
    """``tasks:`` — how each task's ground truth is computed (which fixes become tasks is the
    miner's, ``miner:``)."""

    reruns: int = Field(default=2, ge=1)
    """How many times each tree, before and after the fix, is run; tests that differ
    between the runs of one tree are unstable."""
    timeout: float = Field(default=600, gt=0)
    """Seconds one test run may take before its whole process group is killed."""
    jobs: int = Field(default=1, ge=1)
    """How many tasks' ground truth is computed at once, on the bout's executor."""
    repair_imports: bool = True
    """When the tests import a module nothing installed provides, add its distribution to
    the environment and run them again, once; the oracle records what was added."""
    statement: Literal["scrubbed", "drafted"] = "scrubbed"
    """The problem statement of a task that names no issue: its ``scrubbed`` commit
    message and failures, or one ``drafted`` from them by ``drafter``'s model."""
    drafter: str | None = None
    """The contestant whose model drafts statements (its endpoint, model and key)."""


class BudgetSettings(Settings):
    """``run.budget:`` — what one ``bugbout run`` may spend on the agents it runs; once
    reached no attempt starts (those running finish) and the rest are recorded as not run,
    for a later run. Attempts reused from the store cost nothing."""

    usd: float | None = Field(default=None, gt=0)
    """USD at the report's prices (``None``: no limit)."""
    tokens: int | None = Field(default=None, gt=0)
    """Tokens of every kind, input, cached and output (``None``: no limit)."""


class RunSettings(Settings):
    """``run:`` — how agents run."""

    timeout: float = Field(default=1800, gt=0)
    """Seconds one agent may spend on one task."""
    quotas: dict[str, int] = Field(default_factory=dict)
    """How many runs may share a quota at once, e.g. ``{codex: 2}``; one by default."""
    retry_failed: bool = False
    """Run ``quota`` and ``infra-error`` attempts again (``bugbout run --retry-failed``)."""
    keep_going: bool = False
    """Race the contestants that can, when others cannot (``bugbout run --keep-going``);
    without it a contestant whose program or key is missing stops the bout first."""
    log_limit: int = Field(default=5_000_000, gt=0)
    """The most bytes kept of each of an agent's output streams."""
    max_unscored: float = Field(default=0.5, ge=0, le=1)
    """The largest share of the contestants' attempts that may be left unscored (an
    agent that never ran, a quota, an infrastructure error) before the bout fails, after
    writing its report (1: never fails)."""
    rounds: int = Field(default=1, ge=1)
    """Rounds per contestant: an attempt the auditor rejects on visible evidence gets
    another round with the kill report (1: no retries)."""
    repeats: int = Field(default=1, ge=1)
    """Independent attempts per task and contestant, each its own sample (its own
    rounds too): the report adds pass@k, pass^k and intervals clustered by task."""
    grace: float = Field(default=30, ge=0)
    """Seconds the work running at a Ctrl-C (or SIGTERM) may take to finish before it is
    killed; nothing new starts meanwhile."""
    checkouts: Literal["auto", "overlay", "reflink", "copy"] = "auto"
    """How an attempt's working copy is made: ``auto`` takes the best this machine offers
    (an overlay of the cached tree, else reflinks, else a full copy); a method named
    must work here."""
    budget: BudgetSettings = Field(default_factory=BudgetSettings)
    """What one run may spend on agents before no more attempts start."""


class TestLimitsSettings(Settings):
    """``limits.tests:`` — what one test run bugbout runs (ground truth, scores,
    cross-examination, audits) may consume. Going past one is the doing of the code under
    test: the run is ``crashed``, the test running then failed with the limit as its
    reason, and this setting named."""

    __test__ = False  # not a pytest class

    memory: int = Field(default=4_000_000_000, gt=0)
    """The most private memory (resident, not shared) a run's processes may use together."""
    processes: int = Field(default=512, gt=0)
    """The most processes a run may have at once."""
    disk: int = Field(default=2_000_000_000, gt=0)
    """The most bytes a run may add to its tree and its private HOME (and the largest file
    it may write anywhere)."""
    files: int = Field(default=100_000, gt=0)
    """The most files and directories a run may add to its tree and its private HOME."""
    tmp: int = Field(default=500_000_000, gt=0)
    """The size of each private temporary filesystem of a run's sandbox (memory-backed)."""


class LimitsSettings(Settings):
    """``limits:`` — what one agent attempt may consume. Going past a limit is the agent's
    doing: the attempt is an ``agent-error`` naming the limit and this setting (see the
    Limits section of docs/security.md for how each is enforced)."""

    patch_size: int = Field(default=10_000_000, gt=0)
    """The most bytes of diff an attempt's patch may hold; a changed file larger than its
    base version by more than what is left is not read."""
    files: int = Field(default=100_000, gt=0)
    """The most files and directories an agent may add to its checkout and its other
    writable folders."""
    disk: int = Field(default=2_000_000_000, gt=0)
    """The most bytes an agent may add to its checkout and its other writable folders (and
    the largest file it may write anywhere)."""
    tmp: int = Field(default=500_000_000, gt=0)
    """The size of each private temporary filesystem of the sandbox (``/tmp``,
    ``/var/tmp``, ``/dev/shm``, ``/run``): memory-backed, so it is kept small."""
    memory: int = Field(default=4_000_000_000, gt=0)
    """The most private memory (resident, not shared) the agent's processes may use together."""
    processes: int = Field(default=512, gt=0)
    """The most processes the agent may run at once."""
    tests: TestLimitsSettings = TestLimitsSettings()
    """What each test run after an attempt, and for ground truth, may consume."""


class PluginChoice(Settings):
    """A config group's selection: a registered plugin's name and its options."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: str

    @property
    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


DEFAULT_TEST_RUNNER = PluginChoice(name="pytest")
"""The test runner when none is chosen (``test-runner``): left out of the keys of
minings and oracles, so those stored before runners were plugins are found again."""


class PriceSettings(Settings):
    """One entry of ``prices:`` — what a model costs, in USD per million tokens."""

    model: str | None = None
    """The model names it prices: a pattern with ``*`` (``gpt-4.1*``); the entry's key
    when unset."""
    input: float = Field(ge=0)
    """Input tokens neither read from nor written to a prompt cache."""
    cached_input: float | None = Field(default=None, ge=0)
    """Input tokens read from a prompt cache; ``input``'s price when unset."""
    cache_write: float | None = Field(default=None, ge=0)
    """Input tokens written to a prompt cache; ``input``'s price when unset."""
    output: float = Field(ge=0)
    """Output tokens, reasoning included."""


class VerdictsSettings(Settings):
    """``verdicts:`` — the test runs after the race (cross-examination, scores, audits)."""

    tests: Literal["affected", "all"] = "affected"
    """Which of the repository's tests run against a patch: those it can affect (from a
    coverage map of the unfixed code, made once per task), or all of them every time."""
    timeout: float = Field(default=600, gt=0)
    """Seconds one of these test runs may take before its process group is killed."""
    run_suite: bool = True
    """Also run the repository's own tests against every patch, so breakage shows."""

    def key(self) -> str:
        """What of these settings the evidence's keys hold: all but ``run_suite``, which
        the matrix's key holds on its own (as when it was ``judge.run-suite``)."""
        return self.model_dump_json(exclude={"run_suite"})


def _named(kind: str, *names: str) -> dict[str, dict[str, Any] | None]:
    """A map of instances, each named after its plugin."""
    return {name: {kind: name} for name in names}


class BoutSettings(Settings):
    """Everything a bout needs, as composed from ``bugbout.yaml``, packaged groups and overrides."""

    project: ProjectSettings
    tasks: TasksSettings = TasksSettings()
    miner: PluginChoice = PluginChoice(name="git-history")
    environment: PluginChoice = PluginChoice(name="uv")
    """How each task's test environment is built: ``uv``, ``interpreter`` or ``podman``."""
    test_runner: PluginChoice = DEFAULT_TEST_RUNNER
    """What runs the project's tests and reports their outcomes: ``pytest``."""
    sandbox: PluginChoice = PluginChoice(name="auto")
    executor: PluginChoice = PluginChoice(name="local")
    """How the bout dispatches its jobs: ``local`` threads, or ``ray`` workers."""
    judge: PluginChoice = PluginChoice(name="majority")
    verdicts: VerdictsSettings = VerdictsSettings()
    auditor: PluginChoice = PluginChoice(name="gate")
    reporters: dict[str, dict[str, Any] | None] = Field(
        default_factory=lambda: _named("reporter", "terminal", "markdown", "json", "html")
    )
    """The reports written after a bout, by name: a ``reporter`` and its options
    (``terminal`` is printed; ``null`` removes one). See :mod:`bugbout.core.contract.instances`."""
    run: RunSettings = RunSettings()
    limits: LimitsSettings = LimitsSettings()
    contestant: dict[str, dict[str, Any]] | None = None
    """The contestants chosen for this bout (``contestant=[codex,mine]``), by name, with
    the options given for them; ``None`` (none chosen): every one of ``contestants``;
    empty (``contestant=[]``): none."""
    contestants: dict[str, dict[str, Any] | None] = Field(default_factory=dict)
    """Contestants defined in ``bugbout.yaml``, by name: an ``agent`` and its options
    (``null`` removes one)."""
    examiner: dict[str, dict[str, Any]] | None = None
    """The examiners chosen for this bout, by name; ``None``: every one of ``examiners``;
    empty (``examiner=[]``): none."""
    examiners: dict[str, dict[str, Any] | None] = Field(default_factory=dict)
    """Examiners defined in ``bugbout.yaml``, by name: an ``agent``, an ``assignment`` and
    the agent's options (``null`` removes one)."""
    issue_sources: dict[str, dict[str, Any] | None] = Field(
        default_factory=lambda: _named("issue-source", "github", "file", "commit")
    )
    """The issue sources asked, in order, by name: an ``issue-source`` and its options;
    the first that knows an issue wins."""
    prices: dict[str, PriceSettings] = Field(default_factory=dict)
    """Prices per model, before the packaged ones (see :mod:`bugbout.core.report.costs`)."""
    root: Path = Path()
    """The directory holding ``bugbout.yaml``: the store and relative paths start here."""

    def chosen(self, role: str) -> dict[str, dict[str, Any]]:
        """The agents of ``role`` in this bout, by name: those chosen, each one's options
        over its definition in ``bugbout.yaml``; every defined one when none is chosen."""
        chosen: dict[str, dict[str, Any]] | None = getattr(self, role)
        defined: dict[str, dict[str, Any] | None] = getattr(self, f"{role}s")
        if chosen is None:
            return {name: dict(entry) for name, entry in defined.items() if entry is not None}
        return {name: {**(defined.get(name) or {}), **entry} for name, entry in chosen.items()}

    @property
    def repository(self) -> Path:
        return (self.root / self.project.repository).resolve()

    @property
    def store_dir(self) -> Path:
        return self.root / ".bugbout"
