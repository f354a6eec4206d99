"""The Hydra adapter: with :mod:`bugbout.config.groups` (what each config group may choose), the
only module that imports Hydra.

It composes a project's settings the way the command line and the Python API both need
them: the user's ``bugbout.yaml`` as the primary config, bugbout's packaged groups on the
search path, overrides last; then it converts them to the core's pydantic models.
Errors a user can cause are :class:`~bugbout.core.contract.errors.ConfigError` (one line).
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bugbout.config.compose import compose_checked, compose_sweep, job_settings
from bugbout.config.groups import (
    GROUPS,
    ROLES,
    check_group_choices,
    defaults_choices,
    file_choices,
    register_defined,
    register_plugin_options,
)
from bugbout.config.kept import composition_key, keep, kept, kept_settings
from bugbout.config.layout import CONFIG_NAME, find_config
from bugbout.config.overrides import check_flags, check_keys, defined_option, split_hydra_args
from bugbout.core.contract.errors import BugboutError, ConfigError

if TYPE_CHECKING:
    from omegaconf import DictConfig, ListConfig

    from bugbout.cli.console import Console
    from bugbout.core.contract.manager import Plugins
    from bugbout.core.contract.settings import BoutSettings

    Job = Callable[[BoutSettings, Plugins, "HydraJob"], None]
    """What a command runs with each job's settings."""

RENAMED_CONFIG = "bugbout-renamed"
"""The name ``bugbout.yaml`` is composed under once its moved keys are renamed."""


def compose_settings(
    start: Path,
    overrides: Sequence[str] = (),
    plugins: Plugins | None = None,
    warn: Callable[[str], None] | None = None,
) -> tuple[BoutSettings, Plugins]:
    """The settings of the project whose ``bugbout.yaml`` is at or above ``start``, composed
    exactly as the command line does; ``(settings, plugins)``. Used by :class:`bugbout.Project`.
    A setting written the old way is a note to ``warn`` (default: a ``FutureWarning``).
    """
    import warnings

    from bugbout.core.contract.manager import make_plugins

    def note(line: str) -> None:
        warnings.warn(line, FutureWarning, stacklevel=3)

    config = find_config(start.resolve())
    say = warn or note
    args = _moved(list(overrides), say)
    plugins = plugins or make_plugins()
    store, key = config.parent / ".bugbout", reuse_key(config, args)
    found = kept(store, key, plugins) if key else None
    if found is not None:
        for line in found.notes:
            say(line)
        return kept_settings(found, config.parent), plugins
    notes: list[str] = []

    def noted(line: str) -> None:
        notes.append(line)
        say(line)

    with hydra_state():
        prepared = _prepare(config, args, plugins, noted)
        cfg, composed = compose_checked(config.parent, prepared.args, plugins, prepared.name)
        settings = job_settings(cfg, config.parent)
        if key and prepared.plain:
            keep(store, key, cfg, overrides=composed, notes=notes, plugins=prepared.plugins)
        return settings, plugins


def reuse_key(config: Path, args: list[str]) -> str:
    """The key a composition of ``config`` with ``args`` is kept under
    (:mod:`bugbout.config.kept`); empty when it is not kept: Hydra's flags or its own
    settings are Hydra's to apply."""
    options, overrides = split_hydra_args(args)
    return "" if options or _touches_hydra(config, overrides) else composition_key(config, args)


@contextmanager
def hydra_state() -> Iterator[None]:
    """Hydra's process-wide state as it was before: what bugbout registered in its config
    store meanwhile (a project's contestants, its renamed config, plugins as options) is
    forgotten and GlobalHydra is cleared (unless a caller had initialized it), so one
    project's composing never shows in the next. Hydra's own entries, registered as its
    plugins are first imported, stay."""
    from hydra.core.config_store import ConfigStore
    from hydra.core.global_hydra import GlobalHydra

    repo = ConfigStore.instance().repo
    ours = [*GROUPS, f"{RENAMED_CONFIG}.yaml"]
    saved = {key: copy.copy(repo[key]) for key in ours if key in repo}  # a group: a dict
    initialized = GlobalHydra.instance().is_initialized()
    try:
        yield
    finally:
        for key in ours:
            repo.pop(key, None)
        repo.update(saved)
        if not initialized:
            GlobalHydra.instance().clear()


def _moved(args: list[str], warn: Callable[[str], None]) -> list[str]:
    """The overrides with moved settings renamed (a note for each), then checked."""
    from bugbout.config.moved import moved_override

    renamed = []
    for arg in args:
        args_now, note = moved_override(arg)
        renamed.extend(args_now)
        if note:
            warn(note)
    check_keys(renamed)
    return renamed


@dataclass(frozen=True)
class _Prepared:
    """The overrides checked, the name of the config to compose, the plugins chosen by
    name, and whether the file's defaults list names only bugbout's groups."""

    args: list[str]
    name: str
    plugins: list[tuple[str, str]]
    plain: bool


def _prepare(
    config: Path, args: list[str], plugins: Plugins, warn: Callable[[str], None]
) -> _Prepared:
    """Check the file and the overrides, make every plugin and defined contestant
    selectable."""
    for arg in args:
        key, _, value = arg.partition("=")
        group = key.lstrip("+~").removesuffix(".name")
        if key.lstrip("+~") == f"{group}.name" and group in GROUPS and group not in ROLES:
            raise ConfigError(f"{key}: a {group} is chosen by its group: `{group}={value}`")
    loaded = _load(config)
    name, data = _primary(config, loaded, warn)
    chosen = file_choices(data)
    sweep = bool({"-m", "--multirun"} & set(args))
    chosen_plugins = register_plugin_options(plugins, [*chosen, *args], every=sweep)
    defined = {role: register_defined(config, loaded, role, args) for role in ROLES}
    args = [defined_option(arg, defined) for arg in args]
    check_group_choices(chosen, plugins, defined, where=f"{config}: ")
    check_group_choices(args, plugins, defined)
    defaults = data.get("defaults")
    plain = isinstance(defaults, list) and all(
        item in ("base", "_self_") or isinstance(item, dict) for item in defaults
    )
    plain = plain and set(defaults_choices(defaults)) <= set(GROUPS)
    return _Prepared(args, name, chosen_plugins, plain)


def _load(config: Path) -> DictConfig | ListConfig:
    """``bugbout.yaml`` as written, read once; a file YAML cannot read is one line."""
    from omegaconf import OmegaConf

    from bugbout.config.suggest import yaml_problem

    try:
        return OmegaConf.load(config)
    except Exception as exc:
        raise ConfigError(yaml_problem(config, exc)) from None


@dataclass(frozen=True)
class HydraJob:
    """One Hydra job: where its outputs go and the overrides that made it."""

    output: Path
    overrides: list[str]
    multirun: bool
    sweep: Path | None = None
    """A sweep job's sweep directory (its jobs share ground truth)."""

    @classmethod
    def running(cls) -> HydraJob:
        """The job Hydra's main is running."""
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        runtime = HydraConfig.get()
        multirun = runtime.mode == RunMode.MULTIRUN
        return cls(
            output=Path(runtime.runtime.output_dir).resolve(),
            overrides=list(runtime.overrides.task),
            multirun=multirun,
            sweep=Path(runtime.sweep.dir).resolve() if multirun else None,
        )

    def failed(self, message: str) -> None:
        """Record a sweep job's failure beside its outputs, for the driver and the sweep's
        summary (launchers may run jobs in other processes)."""
        if self.multirun:
            from bugbout.core.store.store import write_atomic
            from bugbout.sweep.summary import ERROR_FILE

            self.output.mkdir(parents=True, exist_ok=True)
            write_atomic(self.output / ERROR_FILE, message + "\n")


def run_with_hydra(
    command: str,
    args: list[str],
    console: Console,
    job: Job,
    kinds: Sequence[str] | None = None,
) -> int:
    """Compose the settings with Hydra and call ``job(settings, plugins, hydra_job)`` once,
    or once per combination in a sweep (``-m``). ``kinds``: the plugin kinds the command
    uses, imported up front (the others when first asked for); ``None``, every kind. A
    single job composed before from the same things reuses that composition, without
    Hydra (:mod:`bugbout.config.kept`)."""
    args = _moved(args, console.warn)
    from bugbout.core.contract.manager import make_plugins

    config = find_config(Path.cwd())
    plugins = make_plugins(kinds=kinds)
    for problem in plugins.problems:
        console.warn(problem)
    store, key = config.parent / ".bugbout", reuse_key(config, args)
    found = kept(store, key, plugins) if key else None
    if found is not None:
        for note in found.notes:
            console.warn(note)
        context = HydraJob(output=store.resolve(), overrides=found.overrides, multirun=False)
        return _call(job, lambda: kept_settings(found, config.parent), plugins, context, console)
    with hydra_state():
        return _run(command, config, args, key, plugins=plugins, console=console, job=job)


def _run(
    command: str,
    config: Path,
    args: list[str],
    key: str,
    *,
    plugins: Plugins,
    console: Console,
    job: Job,
) -> int:
    """:func:`run_with_hydra` once the plugins are made: the exit status. A single job's
    composition is kept under ``key`` (none when empty)."""
    import hydra

    root = config.parent
    notes: list[str] = []

    def warn(line: str) -> None:
        notes.append(line)
        console.warn(line)

    prepared = _prepare(config, args, plugins, warn)
    exit_code = 0

    @hydra.main(version_base="1.3", config_path=None, config_name=prepared.name)
    def hydra_job(cfg: DictConfig) -> None:
        nonlocal exit_code
        context = HydraJob.running()
        exit_code = (
            _call(job, lambda: job_settings(cfg, root), plugins, context, console) or exit_code
        )

    store = root / ".bugbout"
    sweep = store / "sweeps" / datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
    options, overrides, cfg = _checked(command, prepared.args, root, plugins, prepared.name)
    if cfg is not None and not options and not _touches_hydra(config, overrides):
        # one job: the settings composed to check the overrides are its settings (Hydra's
        # main would compose them twice more, 0.6 s each, to run it the same way)
        store.mkdir(parents=True, exist_ok=True)

        def settings() -> BoutSettings:
            made = job_settings(cfg, root)
            if key and prepared.plain:
                keep(store, key, cfg, overrides=overrides, notes=notes, plugins=prepared.plugins)
            return made

        context = HydraJob(output=store.resolve(), overrides=overrides, multirun=False)
        return _call(job, settings, plugins, context, console)
    argv = [
        f"bugbout {command}", "--config-dir", str(root), *options, *overrides,
        "hydra.searchpath=[pkg://bugbout.conf]", "hydra.output_subdir=null",
        f"hydra.run.dir={store}", f"hydra.sweep.dir={sweep}",
        "hydra.job.chdir=false", "hydra/job_logging=none", "hydra/hydra_logging=none",
    ]  # fmt: skip
    saved = sys.argv
    sys.argv = argv
    try:
        hydra_job()
    finally:
        sys.argv = saved
    from bugbout.sweep.summary import ERROR_FILE

    if not exit_code and any(sweep.glob(f"*/{ERROR_FILE}")):
        exit_code = 1  # a job failed in another process (joblib, Ray, SLURM)
    return exit_code


def _call(
    job: Job,
    settings: Callable[[], BoutSettings],
    plugins: Plugins,
    context: HydraJob,
    console: Console,
) -> int:
    """Run ``job`` with the settings ``settings`` makes: its exit status. A sweep's job
    that fails is recorded beside its outputs and does not stop the sweep."""
    try:
        job(settings(), plugins, context)
    except BugboutError as exc:
        console.error(str(exc))
        context.failed(str(exc))
        return 2
    except Exception as exc:
        if not context.multirun:
            raise
        message = f"{type(exc).__name__}: {exc}"
        console.error(f"sweep job {context.output.name} failed: {message}")
        context.failed(message)
        return 1
    return 0


def _checked(
    command: str, args: list[str], root: Path, plugins: Plugins, name: str
) -> tuple[list[str], list[str], DictConfig | None]:
    """Hydra's flags and the overrides, each checked, and composed once (every
    combination of a sweep), before Hydra runs a job: ``(flags, overrides, config)``, the
    config ``None`` for a sweep."""
    options, overrides = split_hydra_args(args)
    check_flags(command, options)
    if "--info" in options and (options[-1] == "--info"):
        options.append("all")
    if {"-m", "--multirun"} & set(options):
        return options, compose_sweep(root, overrides, plugins, name), None
    cfg, overrides = compose_checked(root, overrides, plugins, name)
    return options, overrides, cfg


def _touches_hydra(config: Path, overrides: list[str]) -> bool:
    """Whether ``bugbout.yaml`` or an override names Hydra's own settings (its callbacks,
    a ``${hydra:...}`` interpolation): then only Hydra's main runs the job as it says."""
    return "hydra" in config.read_text(errors="replace") or any(
        arg.lstrip("+~").startswith("hydra") for arg in overrides
    )


def _primary(
    config: Path, loaded: DictConfig | ListConfig, warn: Callable[[str], None]
) -> tuple[str, dict[str, Any]]:
    """Check ``bugbout.yaml`` (``loaded``); the name to compose it under (its own, or, when
    it spells a moved setting the old way (a note for each), that of its copy with the new
    names) and the file as plain data, its moved keys renamed."""
    from hydra.core.config_store import ConfigStore
    from omegaconf import DictConfig, OmegaConf

    from bugbout.config.moved import moved_config

    defaults = loaded.get("defaults") if isinstance(loaded, DictConfig) else None
    if not defaults or "base" not in [str(item) for item in defaults]:
        raise ConfigError(
            f"{config} must start with `defaults: [base, _self_]` to load bugbout's settings"
        )
    container = OmegaConf.to_container(loaded)
    assert isinstance(container, dict)
    data = {str(key): value for key, value in container.items()}
    notes = moved_config(data, str(config))
    for note in notes:
        warn(note)
    if not notes:
        return CONFIG_NAME[:-5], data
    ConfigStore.instance().store(name=RENAMED_CONFIG, node=data)
    return RENAMED_CONFIG, data
