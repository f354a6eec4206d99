"""The reporters of a bout: the instances of ``reporters:``, each built through the
plugin manager, and the file each writes in the store. An instance named after its
plugin writes the plugin's file (``html``: ``report.html``); another writes its own
name with that file's suffix (``short: {reporter: html}``: ``short.html``), so two
instances of a plugin never overwrite each other."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.instances import Instance, instances
from bugbout.core.contract.manager import Plugins
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


@dataclass
class Written:
    """What the reporters produced: printed renderings by instance, and the files written."""

    printed: dict[str, str] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)


def build_reporters(
    entries: Mapping[str, Mapping[str, Any] | None], plugins: Plugins
) -> list[Built]:
    """Every instance of ``entries`` (``reporters:``) built with its options; one line
    naming the entry when a plugin is unknown, an option wrong or two write one file."""
    built: list[Built] = []
    writers: dict[str, str] = {}
    for instance in instances("reporters", ReporterPlugin.kind, entries):
        reporter = instance.build(plugins, ReporterPlugin)
        filename = output_name(instance, reporter.filename)
        if filename is not None and filename in writers:
            raise ConfigError(
                f"{instance.where}: writes {filename}, as reporters.{writers[filename]} "
                f"does; rename one of them (an instance writes its own name as the file)"
            )
        if filename is not None:
            writers[filename] = instance.name
        built.append(Built(instance, reporter, filename))
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


def write_reports(
    report: Report,
    store: Store,
    plugins: Plugins,
    entries: Mapping[str, Mapping[str, Any] | None],
) -> Written:
    """Render ``report`` with every instance of ``entries`` (``reporters:``); files go
    to the store. One broken reporter is a problem noted on ``plugins``, not the end."""
    written = Written()
    plugins.notify("bugbout_before_report", report=report)
    for built in build_reporters(entries, plugins):
        instance = built.instance
        try:
            text = built.reporter.render(report)
        except Exception as exc:  # one broken reporter must not stop the others
            registered = plugins.get(ReporterPlugin, instance.plugin)
            plugins.problems.append(
                f"{instance.where} ({instance.plugin} from {registered.distribution}) "
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
