"""The reporters of a bout: the instances of ``reporters:``, each built by the pipeline,
and the file each writes in the store. An instance named after its plugin writes the
plugin's file (``html``: ``report.html``); another writes its own name with that file's
suffix (``short: {reporter: html}``: ``short.html``), so two instances of a plugin never
overwrite each other."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.instances import Instance, instances
from bugbout.core.contract.transcript import TranscriptReader
from bugbout.core.contract.types import ReporterPlugin
from bugbout.core.report.report import Report
from bugbout.core.report.report_store import Reporter
from bugbout.core.store.store import Store, write_atomic

_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


@dataclass(frozen=True)
class Built:
    """One instance of ``reporters:``, its reporter and the file it writes (``None``: printed)."""

    instance: Instance
    reporter: Reporter
    filename: str | None
    distribution: str
    """The distribution its plugin comes from, named when it fails."""


@dataclass
class Written:
    """What the reporters produced: printed renderings by instance, and the files written."""

    printed: dict[str, str] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ReportPlugins:
    """The plugin implementations the report uses, made by the pipeline: the reporters
    built from ``reporters:``, how an agent's transcript is read, the lifecycle hooks
    (``notify``) and the problems a broken reporter is noted in."""

    reporters: list[Built]
    transcript: TranscriptReader
    notify: Callable[..., None]
    problems: list[str]


def build_reporters(
    entries: Mapping[str, Mapping[str, Any] | None],
    build: Callable[[Instance], Reporter],
    distribution: Callable[[str], str],
) -> list[Built]:
    """Every instance of ``entries`` (``reporters:``) made by ``build`` with its options,
    with the ``distribution`` its plugin comes from; one line naming the entry when a
    plugin is unknown, an option wrong or two write one file."""
    built: list[Built] = []
    writers: dict[str, str] = {}
    for instance in instances("reporters", ReporterPlugin.kind, entries):
        reporter = build(instance)
        filename = output_name(instance, reporter.filename)
        if filename is not None and filename in writers:
            raise ConfigError(
                f"{instance.where}: writes {filename}, as reporters.{writers[filename]} "
                f"does; rename one of them (an instance writes its own name as the file)"
            )
        if filename is not None:
            writers[filename] = instance.name
        built.append(Built(instance, reporter, filename, distribution(instance.plugin)))
    return built


def output_name(instance: Instance, filename: str | None) -> str | None:
    """The file ``instance`` writes: its plugin's ``filename``, or, when the instance
    has another name, that name with the file's suffix."""
    if filename is None or instance.name == instance.plugin:
        return filename
    if not _FILE_NAME.fullmatch(instance.name):
        raise ConfigError(
            f"{instance.where}: its name is its file's name, so it takes letters, digits, "
            f"- and _ only; rename it, e.g. reporters.{instance.plugin}-2"
        )
    return instance.name + "".join(PurePath(filename).suffixes)


def write_reports(report: Report, store: Store, plugins: ReportPlugins) -> Written:
    """Render ``report`` with each of ``plugins``' reporters; files go to the store. One
    broken reporter is a problem noted in ``plugins.problems``, not the end."""
    written = Written()
    plugins.notify("bugbout_before_report", report=report)
    for built in plugins.reporters:
        instance = built.instance
        try:
            text = built.reporter.render(report)
        except Exception as exc:  # one broken reporter must not stop the others
            plugins.problems.append(
                f"{instance.where} ({instance.plugin} from {built.distribution}) "
                f"failed: {type(exc).__name__}: {exc}"
            )
            continue
        if built.filename:
            store.ensure()
            write_atomic(store.path(built.filename), text)
            written.files.append(built.filename)
        else:
            written.printed[instance.name] = text
    plugins.notify("bugbout_after_report", report=report, files=written.files)
    return written
