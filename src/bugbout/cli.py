"""The ``bugbout`` command line: the only module that imports Hydra.

Subcommands that run the pipeline compose their settings with Hydra (the user's
``bugbout.yaml`` as the primary config, bugbout's packaged groups on the search path,
command-line overrides last), convert them to the core's pydantic models and call the
core. Errors a user can cause print as one line and exit with status 2.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from bugbout import __version__
from bugbout.core.errors import BugboutError, ConfigError
from bugbout.core.layout import CONFIG_NAME, find_config
from bugbout.ui import Console

USAGE = f"""\
usage: bugbout [--quiet] COMMAND [ARGS...] [OVERRIDES...]
       bugbout -m OVERRIDES...     a sweep: `bugbout run -m` (one job per combination)

Which coding agent really fixes bugs in your codebase? (bugbout {__version__})

commands:
  init      write a commented {CONFIG_NAME} for the repository here
  doctor    check this machine and the contestants' CLIs (--dry-run: race them, no quota)
  tasks     mine fixed bugs and compute their ground truth
  run       mine, compute ground truth and race the contestants (resumable)
  report    render the last bout's report again (--format terminal|markdown|json|html)
  plugins   list every plugin by kind, with the distribution it came from
  demo      build the example repository and run a whole bout on it (offline)

Overrides are Hydra's: `bugbout tasks tasks.limit=5 env=interpreter`, `--cfg job`;
sweeps too: `bugbout -m contestant=codex,claude-code judge=majority,strict`.
Run `bugbout COMMAND --help` for a command's options.
"""

GROUPS = (
    ("miner", "miner"),
    ("env", "env"),
    ("sandbox", "sandbox"),
    ("executor", "executor"),
    ("judge", "judge"),
    ("auditor", "auditor"),
    ("agent", "contestant"),
    ("agent", "examiner"),
)
"""The config groups the settings know, with the plugin kind their options name."""
ROLES = ("contestant", "examiner")
"""Groups whose options are agents, several selectable at once (``contestant=[a,b]``)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``bugbout`` script."""
    args = list(sys.argv[1:] if argv is None else argv)
    quiet = "--quiet" in args or "-q" in args
    args = [arg for arg in args if arg not in ("--quiet", "-q")]
    console = Console(quiet=quiet)
    if not args or args[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0 if args else 2
    if args[0] == "--version":
        print(f"bugbout {__version__}")
        return 0
    command, rest = args[0], args[1:]
    if command in ("-m", "--multirun"):  # the sweep form: `bugbout -m contestant=a,b ...`
        command, rest = "run", args
    handlers: dict[str, Callable[[list[str], Console], int]] = {
        "init": _init,
        "doctor": _doctor,
        "tasks": _tasks,
        "run": _run,
        "report": _report,
        "plugins": _plugins,
        "demo": _demo,
    }
    if command not in handlers:
        console.error(f"unknown command {command!r}; the commands are {', '.join(handlers)}")
        return 2
    try:
        return handlers[command](rest, console)
    except BugboutError as exc:
        console.error(str(exc))
        return 2
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM during a bout (its stop)
        console.error("interrupted; everything finished so far is saved, run again to resume")
        return 130


# -- init ---------------------------------------------------------------------------------


def _init(args: list[str], console: Console) -> int:
    """``bugbout init [--force] [--source DIR] [--tests DIR]``"""
    import argparse

    from bugbout.core.git import Git
    from bugbout.core.layout import detect_source, detect_tests, render_config
    from bugbout.core.store import write_atomic

    parser = argparse.ArgumentParser(
        prog="bugbout init", description=f"Write a commented {CONFIG_NAME} here."
    )
    parser.add_argument("--force", action="store_true", help=f"overwrite an existing {CONFIG_NAME}")
    parser.add_argument("--source", help="the package directory (found from the layout)")
    parser.add_argument("--tests", help="the tests directory (found from the layout)")
    options = parser.parse_args(args)
    root = Path.cwd()
    git = Git(root)
    if git.is_repository():
        root = Path(git.run("rev-parse", "--show-toplevel").strip())
    target = root / CONFIG_NAME
    if target.exists() and not options.force:
        raise ConfigError(f"{target} already exists; pass --force to overwrite it")
    source = options.source or detect_source(root)
    tests = options.tests or detect_tests(root, source)
    write_atomic(target, render_config(source, tests))
    console.info(f"wrote {target} (source: {source}, tests: {tests}); next: `bugbout tasks`")
    return 0


# -- doctor -------------------------------------------------------------------------------


def _doctor(args: list[str], console: Console) -> int:
    """``bugbout doctor [--dry-run] [OVERRIDES]``: check the machine and the contestants;
    1 when a check failed."""
    import tempfile

    from rich.text import Text

    from bugbout.core.doctor import Check, diagnose

    if args and args[0] in ("-h", "--help"):
        print(
            "usage: bugbout doctor [--dry-run] [OVERRIDES...]\n\nCheck git, uv, the Python "
            "interpreters, the sandbox and the repository, then each contestant's CLI: "
            "installed, its version, and the flags bugbout passes it.\n\n  --dry-run   race "
            "each contestant on a tiny one-bug repository against a scripted model server "
            "on 127.0.0.1: real CLI, no quota spent\n\nExit status: 0 when every check "
            "passes, 1 when one fails.\n\nExamples:\n  bugbout doctor\n"
            "  bugbout doctor --dry-run 'contestant=[codex,claude-code]'\n"
        )
        return 0
    dry_run = "--dry-run" in args
    args = [arg for arg in args if arg != "--dry-run"]
    passed = True

    def show(check: Check) -> None:
        line = Text(check.line)
        line.stylize("green" if check.ok else "bold red", 0, 4)
        console.out.print(line)

    def job(settings: Any, plugins: Any, _job: Any = None, configured: bool = True) -> None:
        nonlocal passed
        passed = diagnose(
            settings,
            plugins,
            show,
            configured=configured,
            dry_run=dry_run,
            note=console.info,
            progress=console.progress,
        )

    try:
        find_config(Path.cwd())
    except ConfigError:
        console.warn(
            f"no {CONFIG_NAME} in {Path.cwd()} or its parents: checking this machine and "
            "the contestants chosen here, not a repository (`bugbout init` writes one)"
        )
        with tempfile.TemporaryDirectory(prefix="bugbout-doctor-") as scratch:
            (Path(scratch) / CONFIG_NAME).write_text(
                "defaults: [base, _self_]\nproject: {source: .}\n"
            )
            settings, plugins = compose_settings(Path(scratch), args)
            for problem in plugins.problems:
                console.warn(problem)
            job(settings, plugins, configured=False)
        return 0 if passed else 1
    code = _run_with_hydra("doctor", args, console, job)
    return code or (0 if passed else 1)


# -- plugins ------------------------------------------------------------------------------


def _plugins(args: list[str], console: Console) -> int:
    """``bugbout plugins``: every plugin by kind and its distribution;
    ``bugbout plugins new KIND NAME [--dir DIR]``: a new plugin package."""
    from bugbout.core.manager import make_plugins

    if args and args[0] in ("-h", "--help"):
        from bugbout.core.types import KINDS

        print(
            "usage: bugbout plugins\n       bugbout plugins new KIND NAME [--dir DIR]\n\n"
            "List every plugin by kind, with its distribution; or write a new plugin package, "
            f"DIR/bugbout-NAME (DIR: here), that passes its own tests.\n\nkinds: "
            f"{', '.join(KINDS)}\n\nExample:\n  bugbout plugins new judge cautious\n"
        )
        return 0
    if args and args[0] == "new":
        import argparse

        from bugbout.scaffold import next_steps, scaffold

        parser = argparse.ArgumentParser(
            prog="bugbout plugins new", description="Write a new plugin package."
        )
        parser.add_argument("kind", help="the plugin kind, e.g. judge, agent, reporter")
        parser.add_argument("name", help="the plugin's name, e.g. cautious")
        parser.add_argument("--dir", type=Path, help="where to put it (default: here)")
        options = parser.parse_args(args[1:])
        path = scaffold(options.kind, options.name, options.dir)
        console.info(next_steps(options.kind, path))
        return 0
    if args:
        raise ConfigError(f"`bugbout plugins` takes no arguments (got {' '.join(args)})")
    plugins = make_plugins()
    for problem in plugins.problems:
        console.warn(problem)
    console.plugin_table(plugins.all())
    return 0


# -- report -------------------------------------------------------------------------------


def _report(args: list[str], console: Console) -> int:
    """``bugbout report [--format NAME] [--job DIR | --sweep DIR]``: re-render a report
    from the store."""
    import argparse

    from bugbout.core.manager import make_plugins
    from bugbout.core.store import Store
    from bugbout.core.verdicts import load_report

    parser = argparse.ArgumentParser(
        prog="bugbout report",
        description="Render the last bout's report from .bugbout/, a sweep job's, or a "
        "sweep's summary.",
    )
    parser.add_argument(
        "--format", default="terminal", help="a reporter: terminal, markdown, json, html"
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--job", type=Path, help="a sweep job's directory (.bugbout/sweeps/T/N)")
    where.add_argument(
        "--sweep", type=Path, help="a sweep's directory: its summary, written again from its jobs"
    )
    options = parser.parse_args(args)
    if options.sweep:
        from bugbout.core.sweep import FORMATS, render_summary, write_sweep_summary

        if options.format not in FORMATS:
            raise ConfigError(f"--format {options.format}: choose one of {', '.join(FORMATS)}")
        summary = write_sweep_summary(options.sweep)
        text = render_summary(summary, options.format)
        console.out.print(text, markup=False, highlight=False, end="")
        return 0
    root = find_config(Path.cwd()).parent
    store = Store(root / ".bugbout")
    if not store.path("tasks.json").exists():
        raise ConfigError(f"{store.root} holds no bout yet; run `bugbout run` first")
    output = Store(options.job.resolve()) if options.job else store
    if not output.path("job.json").is_file():
        raise ConfigError(
            f"{options.job} holds no job.json; name a sweep job's directory"
            if options.job
            else f"{store.root} holds no bout yet (only tasks); run `bugbout run` first"
        )
    plugins = make_plugins()
    reporter = plugins.create("reporter", options.format)
    report = load_report(store, output)
    console.out.print(reporter.render(report), markup=False, highlight=False, end="")
    return 0


# -- demo ---------------------------------------------------------------------------------


def _demo(args: list[str], console: Console) -> int:
    """``bugbout demo [DIR]``: the example repository, then a whole bout in it."""
    import os

    from bugbout.example import build_example

    if args and args[0] in ("-h", "--help"):
        print(
            "usage: bugbout demo [DIR] [OVERRIDES...]\n\nBuild the example repository in "
            "DIR (default ./bugbout-demo), with scripted agents, and run a whole bout on it\n"
            "offline: tasks, ground truth, the race, verdicts and the report."
        )
        return 0
    target = Path(args[0] if args and "=" not in args[0] else "bugbout-demo").resolve()
    overrides = args[1:] if args and "=" not in args[0] else args
    if (target / ".git").is_dir() and (target / CONFIG_NAME).is_file():
        console.info(f"resuming the demo bout in {target}")
    elif target.exists():
        raise ConfigError(f"{target} already exists; remove it or name another directory")
    else:
        build_example(target)
        console.info(f"built the example repository in {target}")
    os.chdir(target)
    return _run(overrides, console)


# -- tasks (Hydra) ------------------------------------------------------------------------


def _tasks(args: list[str], console: Console) -> int:
    """``bugbout tasks [OVERRIDES]``: mine, find issues, compute ground truth."""
    if args and args[0] in ("-h", "--help"):
        print(
            "usage: bugbout tasks [OVERRIDES...]\n\nMine fixed bugs and compute their ground "
            "truth; writes .bugbout/tasks.json and .bugbout/oracles.json.\n\nExamples:\n"
            "  bugbout tasks tasks.limit=5\n  bugbout tasks env=interpreter\n"
            "  bugbout tasks --cfg job      # show the composed settings\n"
        )
        return 0

    def job(settings: Any, plugins: Any, _job: HydraJob) -> None:
        from contextlib import closing

        from bugbout.core.executor import make_executor
        from bugbout.core.stopping import Stop
        from bugbout.core.store import Store
        from bugbout.core.tasks import check_plugins, ground_truth

        check_plugins(settings, plugins)
        store = Store(settings.store_dir)
        with console.progress() as progress:
            stop = Stop(settings.run.grace, progress.warn)
            with stop.installed(), closing(make_executor(settings, plugins)) as executor:
                tasks, oracles = ground_truth(
                    settings, plugins, store, progress, executor=stop.executor(executor, "task")
                )
        console.task_table(tasks, oracles)
        console.info(f"wrote {store.path('tasks.json')} and {store.path('oracles.json')}")

    return _run_with_hydra("tasks", args, console, job)


def _run(args: list[str], console: Console) -> int:
    """``bugbout run [--retry-failed] [OVERRIDES]``: tasks, ground truth, then the race."""
    if args and args[0] in ("-h", "--help"):
        print(
            "usage: bugbout run [--retry-failed] [OVERRIDES...]\n\nMine tasks, compute their "
            "ground truth and race the contestants. Resumable: finished attempts are never "
            "run again.\n\n  --retry-failed   run `quota` and `infra-error` attempts again\n\n"
            "Examples:\n  bugbout run contestant=codex\n"
            "  bugbout run 'contestant=[codex,claude-code]'\n"
            "  bugbout run contestant.codex.model=gpt-5 run.timeout=600\n"
        )
        return 0
    if "--retry-failed" in args:
        args = [arg for arg in args if arg != "--retry-failed"] + ["run.retry-failed=true"]

    def job(settings: Any, plugins: Any, hydra_job: HydraJob) -> None:
        from bugbout.bout import Bout, Project

        if hydra_job.multirun:
            console.info(f"sweep job {hydra_job.output.name}: {' '.join(hydra_job.overrides)}")
        with console.progress() as progress:
            bout = Bout(
                Project(settings, plugins),
                progress=progress,
                output=hydra_job.output,
                overrides=hydra_job.overrides,
            )
            if not bout.contestants:
                raise ConfigError(
                    "no contestants: define some under `contestants:` in bugbout.yaml, "
                    "or choose packaged ones, e.g. `bugbout run contestant=codex`"
                )
            result = bout.run()
        for problem in plugins.problems:
            console.warn(problem)
        console.attempt_table(result.ran)
        if result.job and result.job.attempts_reused:
            console.info(
                f"reused {result.job.attempts_reused} attempt(s) from the store (run by "
                f"earlier bouts); ran {result.job.attempts_run}"
            )
        for text in result.printed.values():
            console.out.print(text, markup=False, highlight=False, end="")
        written = [name for name in ("report.md", "report.json", "report.html")
                   if (hydra_job.output / name).exists()]  # fmt: skip
        console.info(f"reports in {hydra_job.output}: {', '.join(written)}")

    return _run_with_hydra("run", args, console, job)


def compose_settings(start: Path, overrides: Sequence[str] = (), plugins: Any = None) -> Any:
    """The settings of the project whose ``bugbout.yaml`` is at or above ``start``, composed
    exactly as the command line does; ``(settings, plugins)``. Used by :class:`bugbout.Project`.
    """
    from bugbout.core.manager import make_plugins

    config = find_config(start.resolve())
    plugins = plugins or make_plugins()
    args = _prepare(config, list(overrides), plugins)
    return _settings(_compose(config.parent, args), config.parent), plugins


def _prepare(config: Path, args: list[str], plugins: Any) -> list[str]:
    """Check the file, make every plugin and user contestant selectable, and select the
    user's contestants unless the overrides choose."""
    _check_defaults(config)
    _register_plugin_options(plugins)
    defined: dict[str, list[str]] = {}
    for role in ROLES:
        defined[role] = _register_user_agents(config, role)
        chosen = any(arg.split("=", 1)[0].lstrip("+~") == role for arg in args if "=" in arg)
        if defined[role] and not chosen:
            args = [*args, f"{role}=[{','.join(defined[role])}]"]
    _check_group_choices(args, plugins, defined)
    return args


@dataclass(frozen=True)
class HydraJob:
    """One Hydra job: where its outputs go and the overrides that made it."""

    output: Path
    overrides: list[str]
    multirun: bool

    def failed(self, message: str) -> None:
        """Record a sweep job's failure beside its outputs, for the driver and the sweep's
        summary (launchers may run jobs in other processes)."""
        if self.multirun:
            from bugbout.core.store import write_atomic
            from bugbout.core.sweep import ERROR_FILE

            self.output.mkdir(parents=True, exist_ok=True)
            write_atomic(self.output / ERROR_FILE, message + "\n")


def _run_with_hydra(
    command: str, args: list[str], console: Console, job: Callable[[Any, Any, HydraJob], None]
) -> int:
    """Compose the settings with Hydra and call ``job(settings, plugins, hydra_job)`` once,
    or once per combination in a sweep (``-m``)."""
    import hydra
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode
    from omegaconf import DictConfig

    from bugbout.core.manager import make_plugins

    config = find_config(Path.cwd())
    root = config.parent
    plugins = make_plugins()
    for problem in plugins.problems:
        console.warn(problem)
    args = _prepare(config, args, plugins)
    exit_code = 0

    @hydra.main(version_base="1.3", config_path=None, config_name=CONFIG_NAME[:-5])
    def hydra_job(cfg: DictConfig) -> None:
        nonlocal exit_code
        runtime = HydraConfig.get()
        context = HydraJob(
            output=Path(runtime.runtime.output_dir).resolve(),
            overrides=list(runtime.overrides.task),
            multirun=runtime.mode == RunMode.MULTIRUN,
        )
        try:
            job(_settings(cfg, root), plugins, context)
        except BugboutError as exc:
            console.error(str(exc))
            exit_code = 2
            context.failed(str(exc))
        except Exception as exc:
            if not context.multirun:
                raise
            # one broken job must not stop the sweep, nor its summary
            message = f"{type(exc).__name__}: {exc}"
            console.error(f"sweep job {context.output.name} failed: {message}")
            exit_code = 1
            context.failed(message)

    store = root / ".bugbout"
    sweep = store / "sweeps" / datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
    options, overrides = _split_hydra_args(args)
    if "--info" in options and (options[-1] == "--info"):
        options.append("all")
    if not {"-m", "--multirun"} & set(options):
        _compose(root, overrides)
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
    from bugbout.core.sweep import ERROR_FILE

    if not exit_code and any(sweep.glob(f"*/{ERROR_FILE}")):
        exit_code = 1  # a job failed in another process (joblib, Ray, SLURM)
    return exit_code


HYDRA_OPTIONS_WITH_VALUE = {"--cfg", "-c", "--package", "-p", "--info", "-i",
                             "--experimental-rerun"}  # fmt: skip


def _split_hydra_args(args: list[str]) -> tuple[list[str], list[str]]:
    """Hydra's options (``--cfg job``, ``-m``) apart from overrides: Hydra rejects
    overrides that options split."""
    options: list[str] = []
    overrides: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if not arg.startswith("-"):
            overrides.append(arg)
        else:
            options.append(arg)
            following = args[index + 1] if index + 1 < len(args) else ""
            if arg in HYDRA_OPTIONS_WITH_VALUE and following and "=" not in following:
                options.append(following)
                index += 1
        index += 1
    return options, overrides


def _compose(root: Path, overrides: list[str]) -> Any:
    """Compose the config (before Hydra's main, so a bad override is a one-line error)."""
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    try:
        with initialize_config_dir(config_dir=str(root), version_base="1.3"):
            return compose(
                config_name=CONFIG_NAME[:-5],
                overrides=[*overrides, "hydra.searchpath=[pkg://bugbout.conf]"],
            )
    except (HydraException, OmegaConfBaseException) as exc:
        lines = [line.strip().rstrip(".") for line in str(exc).splitlines() if line.strip()]
        message = "; ".join(lines)
        raise ConfigError(message or type(exc).__name__) from None


def _settings(cfg: Any, root: Path) -> Any:
    """The core's settings from Hydra's composed config; errors name the key."""
    from omegaconf import OmegaConf
    from omegaconf.errors import MissingMandatoryValue
    from pydantic import ValidationError

    from bugbout.core.settings import BoutSettings

    try:
        data = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    except MissingMandatoryValue as exc:
        key = exc.full_key or "a key"
        raise ConfigError(f"{key} is not set; add it to {root / CONFIG_NAME}") from None
    assert isinstance(data, dict)
    try:
        return BoutSettings.model_validate({**data, "root": root})
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        raise ConfigError(
            f"{where}: {message} (set in {root / CONFIG_NAME} or on the command line)"
        ) from None


def _check_defaults(config: Path) -> None:
    from omegaconf import DictConfig, OmegaConf

    try:
        loaded = OmegaConf.load(config)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(
            f"{config} is not valid YAML ({first}); fix it or rerun `bugbout init --force`"
        ) from None
    defaults = loaded.get("defaults") if isinstance(loaded, DictConfig) else None
    if not defaults or "base" not in [str(item) for item in defaults]:
        raise ConfigError(
            f"{config} must start with `defaults: [base, _self_]` to load bugbout's settings"
        )


def _packaged_options(group: str) -> set[str]:
    from importlib import resources

    folder = resources.files("bugbout.conf") / group
    if not folder.is_dir():
        return set()
    return {item.name[:-5] for item in folder.iterdir() if item.name.endswith(".yaml")}


def _register_plugin_options(plugins: Any) -> None:
    """Make every registered plugin selectable by name, without shipping YAML."""
    from hydra.core.config_store import ConfigStore

    store = ConfigStore.instance()
    for kind, group in GROUPS:
        packaged = _packaged_options(group)
        for name in plugins.of_kind(kind):
            if name in packaged:
                continue
            if group in ROLES:
                store.store(group=group, name=name, node={"agent": name}, package=f"{group}.{name}")
            else:
                store.store(group=group, name=name, node={"name": name})


def _register_user_agents(config: Path, role: str) -> list[str]:
    """Contestants (or examiners) defined in ``bugbout.yaml`` become selectable like
    packaged ones."""
    from hydra.core.config_store import ConfigStore
    from omegaconf import DictConfig, OmegaConf

    loaded = OmegaConf.load(config)
    defined = loaded.get(f"{role}s") if isinstance(loaded, DictConfig) else None
    if not defined:
        return []
    if not isinstance(defined, DictConfig):
        raise ConfigError(f"{config}: `{role}s` must map names to settings")
    store = ConfigStore.instance()
    names = [str(name) for name in defined]
    clashes = sorted(set(names) & _packaged_options(role))
    if clashes:
        raise ConfigError(
            f"{config}: {role} {clashes[0]!r} has the name of a packaged option; name yours "
            f"differently, e.g. `{clashes[0]}-mine: {{agent: {clashes[0]}, model: ...}}`"
        )
    for name in names:
        entry = defined[name]
        node = OmegaConf.to_container(entry) if isinstance(entry, DictConfig) else None
        if not isinstance(node, dict):
            raise ConfigError(f"{config}: {role} {name!r} must be a mapping, e.g. {{agent: codex}}")
        store.store(group=role, name=name, node=node, package=f"{role}.{name}")
    return names


def _check_group_choices(args: list[str], plugins: Any, defined: dict[str, list[str]]) -> None:
    """An unknown option for a group is one line listing the valid ones."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    overrides = [arg for arg in _split_hydra_args(args)[1] if "=" in arg]
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except HydraException as exc:
        first = str(exc).strip().splitlines()[0]
        raise ConfigError(f"cannot read the overrides: {first}") from None
    for override in parsed:
        group = override.key_or_group
        kinds = [kind for kind, name in GROUPS if name == group]
        if not kinds or override.is_delete():
            continue
        valid = (
            _packaged_options(group) | set(plugins.of_kind(kinds[0])) | set(defined.get(group, ()))
        )
        choices = (
            list(override.sweep_iterator()) if override.is_sweep_override() else [override.value()]
        )  # a sweep may choose lists: contestant=[a,b],[c]
        values = [str(v) for c in choices for v in (c if isinstance(c, list) else [c])]
        for value in values:
            if value not in valid:
                raise ConfigError(
                    f"{group}={value}: no such {group}; choose one of {', '.join(sorted(valid))}"
                )


if __name__ == "__main__":
    sys.exit(main())
