"""The commands that read a bout's results: ``bugbout report``, ``compare`` and
``export`` (the command line's entry is :mod:`bugbout.cli.commands`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bugbout.cli.parser import command_parser as _parser
from bugbout.config.adapter import compose_settings
from bugbout.config.layout import find_config
from bugbout.core.contract.errors import ConfigError

if TYPE_CHECKING:
    from bugbout.cli.console import Console
    from bugbout.core.contract.manager import Plugins
    from bugbout.core.contract.settings import BoutSettings
    from bugbout.core.report.report_store import Reporter


# -- report -------------------------------------------------------------------------------


def report_command(args: list[str], console: Console) -> int:
    """``bugbout report [--format NAME] [--job DIR | --sweep DIR] [OVERRIDES]``: re-render
    a report from the store, its costs at the project's prices."""
    from bugbout.core.contract.manager import make_plugins
    from bugbout.core.pipeline import TranscriptHook
    from bugbout.core.report.costs import price_table
    from bugbout.core.report.report_store import load_report, running
    from bugbout.core.store.store import JOB, TASKS, Store

    parser = _parser(
        "bugbout report",
        "Render the last bout's report from .bugbout/, a sweep job's, or a sweep's summary.",
    )
    parser.add_argument(
        "--format",
        default="terminal",
        help="an instance of `reporters` (its options apply) or a reporter plugin: "
        "terminal, markdown, json, html",
    )
    parser.add_argument(
        "overrides",
        nargs="*",
        metavar="OVERRIDE",
        help="settings as `bugbout run` takes them; the report uses `prices` and "
        "`reporters` (e.g. reporters.html.title=...), e.g. "
        "'+prices.gpt-5={input: 1.25, cached-input: 0.125, output: 10}'",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--job", type=Path, help="a sweep job's directory (.bugbout/sweeps/T/N)")
    where.add_argument(
        "--sweep", type=Path, help="a sweep's directory: its summary, written again from its jobs"
    )
    where.add_argument(
        "--pool",
        type=Path,
        nargs="+",
        metavar="REPO",
        help="other repositories: their last bouts pooled with this one's into one report, "
        "split by repository",
    )
    options = parser.parse_args(args)
    if options.sweep:
        from bugbout.sweep.summary import FORMATS, render_summary, write_sweep_summary

        if options.format not in FORMATS:
            raise ConfigError(f"--format {options.format}: choose one of {', '.join(FORMATS)}")
        summary = write_sweep_summary(options.sweep)
        text = render_summary(summary, options.format)
        console.out.print(text, markup=False, highlight=False, end="")
        return 0
    root = find_config(Path.cwd()).parent
    store = Store(root / ".bugbout")
    output = Store(options.job.resolve()) if options.job else store
    if not output.path(JOB).is_file() and (busy := running(output)):
        raise ConfigError(f"no report yet: {busy}; run `bugbout report` again when it ends")
    if not store.path(TASKS).exists():
        raise ConfigError(f"{store.root} holds no bout yet; run `bugbout run` first")
    if not output.path(JOB).is_file():
        raise ConfigError(
            f"{options.job} holds no job.json; name a sweep job's directory"
            if options.job
            else f"{store.root} holds no bout yet (only tasks); run `bugbout run` first"
        )
    plugins = make_plugins()
    settings, _ = compose_settings(root, options.overrides, plugins, console.warn)
    reporter = _reporter(settings, plugins, options.format)
    transcript = TranscriptHook(plugins)
    if options.pool:
        from bugbout.core.report.pooling import pooled_report

        bouts = [(repo.name, Store(repo / ".bugbout")) for repo in _pooled(root, options.pool)]
        report = pooled_report(bouts, price_table(settings.prices), transcript=transcript)
    else:
        report = load_report(
            store, output, price_table(settings.prices), repository=root, transcript=transcript
        )
    console.out.print(reporter.render(report), markup=False, highlight=False, end="")
    return 0


def _pooled(root: Path, others: list[Path]) -> list[Path]:
    """This repository and each of ``others`` (a repository, or a folder in one)."""
    return [root, *(find_config(other.resolve()).parent for other in others)]


def _reporter(settings: BoutSettings, plugins: Plugins, name: str) -> Reporter:
    """The instance ``name`` of ``reporters:`` with its options, else plugin ``name``."""
    from bugbout.core.contract.instances import Instance, instances
    from bugbout.core.contract.types import ReporterPlugin

    defined = {i.name: i for i in instances("reporters", ReporterPlugin.kind, settings.reporters)}
    if name not in defined and name not in plugins.of_kind(ReporterPlugin):
        known = ", ".join(sorted(set(defined) | set(plugins.of_kind(ReporterPlugin))))
        raise ConfigError(f"--format {name}: no such reporter; choose one of {known}")
    return defined.get(name, Instance("reporters", name, name)).build(plugins, ReporterPlugin)


# -- compare and export -----------------------------------------------------------------


def compare_command(args: list[str], console: Console) -> int:
    """``bugbout compare A B [--format NAME] [--fail-if-regressed PCT]``: 1 on a regression."""
    from bugbout.compare.command import run_compare

    parser = _parser(
        "bugbout compare",
        "Compare bout B with bout A, per contestant, on the tasks both scored with the same "
        "ground truth: exact McNemar, the difference's interval, Holm across contestants.",
    )
    parser.add_argument(
        "before", type=Path, help="A: a project, a store, a sweep job or a report.json"
    )
    parser.add_argument("after", type=Path, help="B: the same kinds as A")
    parser.add_argument("--format", default="terminal", help="terminal, markdown or json")
    parser.add_argument(
        "--fail-if-regressed",
        metavar="PCT",
        help="exit 1 when a contestant's resolve rate fell by more than PCT percentage "
        "points with a Holm-adjusted p below 0.05 (0: any significant drop)",
    )
    options = parser.parse_args(args)
    compared = run_compare(options.before, options.after, options.format, options.fail_if_regressed)
    console.out.print(compared.text, markup=False, highlight=False, end="")
    for line in compared.failures:
        console.error(line)
    return 1 if compared.failures else 0


def export_command(args: list[str], console: Console) -> int:
    """``bugbout export --format swe-bench|harbor PATH [--repo OWNER/NAME]``"""
    from bugbout.export.command import FORMATS, run_export

    parser = _parser(
        "bugbout export",
        "Write the tasks with their ground truth as a SWE-bench dataset (JSON lines) or as "
        "Harbor task directories.",
    )
    parser.add_argument("--format", required=True, choices=FORMATS, help="swe-bench or harbor")
    parser.add_argument("path", type=Path, help="the .jsonl file (swe-bench) or directory (harbor)")
    parser.add_argument("--repo", help="owner/name in the instances (default: origin's)")
    options = parser.parse_args(args)
    root = find_config(Path.cwd()).parent
    console.info(run_export(root, options.format, options.path.resolve(), options.repo))
    return 0
