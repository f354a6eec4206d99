"""The ``bugbout`` command line: parses each subcommand's flags, composes its settings
through the Hydra adapter (:mod:`bugbout.config.adapter`) and calls the core. Errors a user can
cause print as one line and exit with status 2.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from bugbout import __version__
from bugbout.cli.parser import command_parser as _parser
from bugbout.cli.results import compare_command, export_command, report_command
from bugbout.config.adapter import HydraJob, compose_settings, run_with_hydra
from bugbout.config.layout import CONFIG_NAME, find_config
from bugbout.core.contract.errors import BugboutError, ConfigError

if TYPE_CHECKING:
    from bugbout.cli.console import Console
    from bugbout.core.contract.manager import Plugins
    from bugbout.core.contract.settings import BoutSettings
    from bugbout.core.plumbing.runtime.progress import Progress
    from bugbout.core.plumbing.runtime.stopping import Stop
    from bugbout.core.store.records import OracleSet, TaskSet
    from bugbout.core.store.store import Store

TASK_KINDS: tuple[str, ...] = ()
"""The plugin kinds ``bugbout tasks`` imports up front: none; each plugin it uses is
imported when it is asked for by name (the miner and issue sources chosen; with ground
truth, the environment, sandbox and executor; the test runner when a test runs, none
when every oracle is kept)."""

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
  compare   compare two bouts per contestant (--fail-if-regressed PCT for CI)
  export    write the tasks as a SWE-bench dataset or Harbor tasks
  plugins   list every plugin by kind, with the distribution it came from
  demo      build an example repository and run a whole bout on it offline (--lang js)
  completion  print the shell completion script (bash, zsh or fish)

Overrides are Hydra's: `bugbout tasks miner.limit=5 environment=interpreter`, `--cfg job`;
sweeps too: `bugbout -m contestant=codex,claude-code judge=majority,strict`.
Run `bugbout COMMAND --help` for a command's options.
"""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``bugbout`` script."""
    args = list(sys.argv[1:] if argv is None else argv)
    quiet = "--quiet" in args or "-q" in args
    args = [arg for arg in args if arg not in ("--quiet", "-q")]
    if not args or args[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0 if args else 2
    if args[0] == "--version":
        print(f"bugbout {__version__}")
        return 0
    from bugbout.cli.console import Console  # rich and the records: not for --help

    console = Console(quiet=quiet)
    command, rest = args[0], args[1:]
    if command in ("-m", "--multirun"):  # the sweep form: `bugbout -m contestant=a,b ...`
        command, rest = "run", args
    if "--hydra-help" in rest:  # Hydra's help of the settings is the command's own
        rest = ["--help" if arg == "--hydra-help" else arg for arg in rest]
    handlers: dict[str, Callable[[list[str], Console], int]] = {
        "init": _init,
        "doctor": _doctor,
        "tasks": _tasks,
        "run": _run,
        "report": report_command,
        "compare": compare_command,
        "export": export_command,
        "plugins": _plugins,
        "demo": _demo,
        "completion": _completion,
        "__complete": _complete,
    }
    if command not in handlers:
        commands = ", ".join(name for name in handlers if not name.startswith("_"))
        console.error(f"unknown command {command!r}; the commands are {commands}")
        return 2
    try:
        return handlers[command](rest, console)
    except BugboutError as exc:
        console.error(str(exc))
        return 2
    except BrokenPipeError:  # the reader went away (`bugbout run --help | head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit flush too
        return 0
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM during a bout (its stop)
        console.error("interrupted; everything finished so far is saved, run again to resume")
        return 130


def _settings_help(args: list[str]) -> str:
    """The settings part of ``--help``, for the plugins ``bugbout.yaml`` and ``args`` choose."""
    from bugbout.cli.usage import project_choices, settings_help
    from bugbout.core.contract.manager import make_plugins

    return settings_help(make_plugins(), project_choices(Path.cwd()), args)


def _asks_help(args: list[str]) -> bool:
    """Whether ``args`` ask for the command's help, anywhere among the overrides."""
    return "-h" in args or "--help" in args


def _completion(args: list[str], console: Console) -> int:
    """``bugbout completion bash|zsh|fish``: the shell's completion script."""
    from bugbout.cli.usage import completion_script

    shells = ("bash", "zsh", "fish")
    if len(args) != 1 or args[0] not in shells:
        print(
            "usage: bugbout completion bash|zsh|fish\n\nPrint the shell's completion script "
            "for bugbout: commands, flags, config groups and their options, settings.\n\n"
            '  bash:  eval "$(bugbout completion bash)"      (in ~/.bashrc)\n'
            '  zsh:   eval "$(bugbout completion zsh)"       (in ~/.zshrc, after compinit)\n'
            "  fish:  bugbout completion fish | source       (in config.fish)"
        )
        return 0 if args and args[0] in ("-h", "--help") else 2
    print(completion_script(args[0]), end="")
    return 0


def _complete(args: list[str], console: Console) -> int:
    """``bugbout __complete WORD...``: candidates for the last word, one per line (what
    the completion scripts call)."""
    from bugbout.cli.usage import complete, project_choices
    from bugbout.core.contract.manager import make_plugins

    for candidate in complete(args, make_plugins(), project_choices(Path.cwd())):
        print(candidate)
    return 0


# -- init ---------------------------------------------------------------------------------


def _init(args: list[str], console: Console) -> int:
    """``bugbout init [--force] [--source DIR] [--tests DIR]``"""
    from bugbout.core.contract.manager import make_plugins
    from bugbout.onboarding.init import write_config

    parser = _parser("bugbout init", f"Write a commented {CONFIG_NAME} here.")
    parser.add_argument("--force", action="store_true", help=f"overwrite an existing {CONFIG_NAME}")
    parser.add_argument(
        "--source", help="the package directory (found from the layout and the history)"
    )
    parser.add_argument("--tests", help="the tests directory (found from the layout)")
    options = parser.parse_args(args)
    for line in write_config(
        Path.cwd(), make_plugins(), options.source, options.tests, force=options.force
    ):
        console.info(line)
    return 0


# -- doctor -------------------------------------------------------------------------------


def _doctor(args: list[str], console: Console) -> int:
    """``bugbout doctor [--dry-run] [OVERRIDES]``: check the machine and the contestants;
    1 when a check failed."""
    import tempfile

    from rich.text import Text

    from bugbout.onboarding.doctor import Check, diagnose

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

    def job(
        settings: BoutSettings,
        plugins: Plugins,
        _job: HydraJob | None = None,
        configured: bool = True,
    ) -> None:
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
            settings, plugins = compose_settings(Path(scratch), args, warn=console.warn)
            for problem in plugins.problems:
                console.warn(problem)
            job(settings, plugins, configured=False)
        return 0 if passed else 1
    code = run_with_hydra("doctor", args, console, job)
    return code or (0 if passed else 1)


# -- plugins ------------------------------------------------------------------------------


def _plugins(args: list[str], console: Console) -> int:
    """``bugbout plugins``: every plugin by kind and its distribution;
    ``bugbout plugins new KIND NAME [--dir DIR]``: a new plugin package."""
    from bugbout.core.contract.manager import make_plugins

    if args and args[0] in ("-h", "--help"):
        from bugbout.core.contract.types import KINDS

        print(
            "usage: bugbout plugins\n       bugbout plugins new KIND NAME [--dir DIR]\n\n"
            "List every plugin by kind, with its distribution; or write a new plugin package, "
            f"DIR/bugbout-NAME (DIR: here), that passes its own tests.\n\nkinds: "
            f"{', '.join(KINDS)}\n\nExample:\n  bugbout plugins new judge cautious\n"
        )
        return 0
    if args and args[0] == "new":
        from bugbout.scaffold import next_steps, scaffold

        parser = _parser("bugbout plugins new", "Write a new plugin package.")
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


# -- demo ---------------------------------------------------------------------------------


def _demo(args: list[str], console: Console) -> int:
    """``bugbout demo [DIR] [--lang python|js]``: an example repository, then a whole bout
    in it."""
    import os

    if args and args[0] in ("-h", "--help"):
        print(
            "usage: bugbout demo [DIR] [--lang python|js] [OVERRIDES...]\n\nBuild an example "
            "repository in DIR, with scripted agents, and run a whole bout on it\noffline: "
            "tasks, ground truth, the race, verdicts and the report.\n\n"
            "  --lang python  a Python package tested with pytest (the default; DIR\n"
            "                 defaults to ./bugbout-demo)\n"
            "  --lang js      a JavaScript package tested with node --test, without npm\n"
            "                 dependencies (needs Node 20 or later and npm; DIR\n"
            "                 defaults to ./bugbout-demo-js)"
        )
        return 0
    language, args = _demo_language(args)
    default = "bugbout-demo-js" if language == "js" else "bugbout-demo"
    target = Path(args[0] if args and "=" not in args[0] else default).resolve()
    overrides = args[1:] if args and "=" not in args[0] else args
    built = (target / ".git").is_dir() and (target / CONFIG_NAME).is_file()
    held = "js" if (target / "package.json").is_file() else "python"
    if built and held != language:
        raise ConfigError(
            f"{target} holds the {held} demo: resume it with `bugbout demo --lang {held} "
            f"{target}`, or name another directory"
        )
    if built:
        console.info(f"resuming the demo bout in {target}")
    elif target.exists():
        raise ConfigError(f"{target} already exists; remove it or name another directory")
    elif language == "js":
        import shutil

        from bugbout.core.contract.manager import make_plugins

        if not (shutil.which("node") and shutil.which("npm")):
            raise ConfigError("the JavaScript demo needs Node 20 or later and npm: install them")
        from bugbout.example.javascript import build_javascript_example

        build_javascript_example(target, make_plugins())
        console.info(f"built the JavaScript example repository in {target}")
    else:
        from bugbout.example import build_example

        build_example(target)
        console.info(f"built the example repository in {target}")
    os.chdir(target)
    return _run(overrides, console)


def _demo_language(args: list[str]) -> tuple[str, list[str]]:
    """The language ``--lang`` chooses (``python`` without it), and the other arguments."""
    rest, language = list(args), "python"
    for at, arg in enumerate(rest):
        if arg == "--lang" or arg.startswith("--lang="):
            value = arg.partition("=")[2] if "=" in arg else "".join(rest[at + 1 : at + 2])
            del rest[at : at + (1 if "=" in arg else 2)]
            language = {"javascript": "js"}.get(value, value)
            break
    if language in ("ts", "typescript"):
        raise ConfigError(
            "`bugbout demo --lang` takes python or js: a TypeScript demo would need a compiler "
            "from the npm registry, and the demo runs offline"
        )
    if language not in ("python", "js"):
        raise ConfigError(f"`bugbout demo --lang` takes python or js (got {language!r})")
    return language, rest


# -- tasks (Hydra) ------------------------------------------------------------------------


def _tasks(args: list[str], console: Console) -> int:
    """``bugbout tasks [OVERRIDES]``: mine, find issues, compute ground truth."""
    if _asks_help(args):
        print(
            "usage: bugbout tasks [--mine-only] [OVERRIDES...]\n\nMine fixed bugs and compute "
            "their ground truth; writes .bugbout/tasks.json and .bugbout/oracles.json.\n\n"
            "  --mine-only   mine and write tasks.json only, without ground truth (fast)\n\n"
            "Examples:\n"
            "  bugbout tasks miner.limit=5\n  bugbout tasks environment=interpreter\n"
            "  bugbout tasks --cfg job      # show the composed settings\n"
        )
        print(_settings_help(args))
        return 0
    mine_only = "--mine-only" in args
    args = [arg for arg in args if arg != "--mine-only"]

    def job(settings: BoutSettings, plugins: Plugins, hydra_job: HydraJob) -> None:
        from bugbout.core.plumbing.runtime.stopping import Stop
        from bugbout.core.store.records import OracleSet
        from bugbout.core.store.store import ORACLES, TASKS, Store

        if not mine_only:  # mining needs no environment, sandbox nor executor plugin
            from bugbout.core.pipeline import check_plugins

            check_plugins(settings, plugins)
        store = Store(settings.store_dir)
        with console.progress() as progress:
            stop = Stop(settings.run.grace, progress.warn)
            with stop.installed():
                if mine_only:  # the mining modules only: no environment, sandbox nor executor
                    from bugbout.core.pipeline import find_tasks

                    tasks = find_tasks(settings, plugins, store, progress, sweep=hydra_job.sweep)
                    oracles = store.read(ORACLES, OracleSet) or OracleSet()
                else:
                    tasks, oracles = _ground_truth(
                        settings, plugins, store,
                        progress=progress, stop=stop, sweep=hydra_job.sweep,
                    )  # fmt: skip
        console.task_table(tasks, oracles)
        written = [TASKS] if mine_only else [TASKS, ORACLES]
        console.info(f"wrote {' and '.join(str(store.path(name)) for name in written)}")

    return run_with_hydra("tasks", args, console, job, kinds=TASK_KINDS)


def _ground_truth(
    settings: BoutSettings,
    plugins: Plugins,
    store: Store,
    *,
    progress: Progress,
    stop: Stop,
    sweep: Path | None,
) -> tuple[TaskSet, OracleSet]:
    """``bugbout tasks``' tasks and their oracles, computed on the settings' executor."""
    from contextlib import closing

    from bugbout.core.pipeline import ground_truth
    from bugbout.core.plumbing.runtime.executor import make_executor

    with closing(make_executor(settings, plugins)) as made:
        return ground_truth(
            settings, plugins, store, progress,
            executor=stop.executor(made, "task"), sweep=sweep,
        )  # fmt: skip


def _run(args: list[str], console: Console) -> int:
    """``bugbout run [--retry-failed] [OVERRIDES]``: tasks, ground truth, then the race."""
    if _asks_help(args):
        print(
            "usage: bugbout run [--retry-failed] [--keep-going] [--dry-run] [OVERRIDES...]\n\n"
            "Mine tasks, compute their ground truth and race the contestants. Resumable: "
            "finished attempts are never run again.\n\n"
            "  --retry-failed   run `quota` and `infra-error` attempts again\n"
            "  --keep-going     race the contestants that can when others cannot (a program "
            "or key missing); without it, such a contestant stops the bout first\n"
            "  --dry-run        run nothing: print the attempts the bout would make, how many "
            "the store has, their estimated cost and the smallest difference it can detect\n\n"
            "Examples:\n  bugbout run contestant=codex\n"
            "  bugbout run 'contestant=[codex,claude-code]'\n"
            "  bugbout run contestant.codex.model=gpt-5 run.timeout=600\n"
            "  bugbout run --dry-run run.budget.usd=20\n"
        )
        print(_settings_help(args))
        return 0
    from bugbout.config.overrides import COMMAND_FLAGS

    for flag in COMMAND_FLAGS["run"]:
        if flag in args:
            args = [arg for arg in args if arg != flag] + [f"run.{flag[2:]}=true"]
    dry = "--dry-run" in args
    args = [arg for arg in args if arg != "--dry-run"]

    def job(settings: BoutSettings, plugins: Plugins, hydra_job: HydraJob) -> None:
        from bugbout.bout import Bout, Project, UnscoredBout

        if dry:
            from bugbout.cli.dry_run import plan

            for line in plan(settings, plugins).lines():
                console.out.print(line, markup=False, highlight=False)
            return

        if hydra_job.multirun:
            console.info(f"sweep job {hydra_job.output.name}: {' '.join(hydra_job.overrides)}")
        with console.progress() as progress:
            bout = Bout(
                Project(settings, plugins),
                progress=progress,
                output=hydra_job.output,
                overrides=hydra_job.overrides,
                sweep=hydra_job.sweep,
            )
            if not any(racer.role == "contestant" for racer in bout.contestants):
                raise ConfigError(
                    "no contestants: define some under `contestants:` in bugbout.yaml, "
                    "or choose packaged ones, e.g. `bugbout run contestant=codex`"
                )
            failed: UnscoredBout | None = None
            try:
                result = bout.run()
            except UnscoredBout as exc:  # its report is written: show it, then fail
                result, failed = exc.result, exc
        for problem in plugins.problems:
            console.warn(problem)
        console.attempt_table(result.ran)
        if result.job and result.job.evidence_reused:
            console.info(
                f"reused {result.job.evidence_reused} matrices, scores and audits from the "
                f"store; computed {result.job.evidence_made}"
            )
        if result.job and result.job.truths_reused:
            console.info(
                f"reused {result.job.truths_reused} ground truth(s) from the store; "
                f"computed {result.job.truths_made}"
            )
        if result.job and result.job.attempts_reused:
            console.info(
                f"reused {result.job.attempts_reused} attempt(s) from the store (run by "
                f"earlier bouts); ran {result.job.attempts_run}"
            )
        for text in result.printed.values():
            console.out.print(text, markup=False, highlight=False, end="")
        console.info(f"reports in {hydra_job.output}: {', '.join(result.written)}")
        if failed is not None:
            raise failed

    return run_with_hydra("run", args, console, job)


if __name__ == "__main__":
    sys.exit(main())
