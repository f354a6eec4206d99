"""``bugbout doctor``: is this machine ready for a bout, and do the contestants' CLIs work?

Three kinds of checks, each reported as one :class:`Check` the moment it is known:

* the machine: git, uv, the Python eras test environments can run (found here or
  downloadable by uv), the sandbox (approved once pytest passed a test in it, confined as
  a bout's test runs are: :mod:`.sandbox_tests`), the guard (compiled, or in Python), and
  (with a ``bugbout.yaml``) the repository and the project's directories;
* each contestant: its CLI is installed, answers ``--version``, and still accepts every
  ``--flag`` its adapter passes (they are looked up in the CLI's ``--help``);
* ``--dry-run``: each contestant really races on a tiny synthetic repository, pointed at a
  scripted model server on 127.0.0.1 (:mod:`bugbout.testing.model_server`), so the whole
  path (adapter, CLI, sandbox, egress, patch) is proven without spending quota.

What bugbout knows of the packaged agents (how to install them, which model name and API
base a dry run gives them) is the :data:`KNOWN_AGENTS` table.

One concern a module: :mod:`.check` (a report line), :mod:`.known_agents` (the packaged
agents), :mod:`.probes` (``--version``/``--help`` runs without credentials),
:mod:`.machine` (with :mod:`.eras` and :mod:`.sandbox_tests`), :mod:`.clis` (the
contestants' CLIs) and :mod:`.dry_run` (the race); :func:`diagnose` runs them in that order.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from itertools import chain

from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings
from bugbout.core.plumbing.runtime.progress import Progress, SilentProgress
from bugbout.onboarding.doctor.check import Check, Report
from bugbout.onboarding.doctor.clis import contestant_checks, dummy_session
from bugbout.onboarding.doctor.dry_run import dry_run_checks
from bugbout.onboarding.doctor.known_agents import (
    DUMMY_KEY,
    KNOWN_AGENTS,
    SECRET_VARIABLE,
    KnownAgent,
)
from bugbout.onboarding.doctor.machine import machine_checks, podman_check
from bugbout.onboarding.doctor.race_ready import race_checks

__all__ = [
    "DUMMY_KEY",
    "KNOWN_AGENTS",
    "SECRET_VARIABLE",
    "Check",
    "KnownAgent",
    "Report",
    "contestant_checks",
    "diagnose",
    "dry_run_checks",
    "dummy_session",
    "machine_checks",
    "podman_check",
]

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
    if not settings.chosen("contestant") and not settings.chosen("examiner"):
        if note:
            note(
                "no contestants to check; choose some, e.g. "
                "`bugbout doctor 'contestant=[codex,claude-code]'`"
            )
        return passed
    for check in chain(contestant_checks(settings, plugins), race_checks(settings, plugins)):
        emit(check)  # each as it is known
    if dry_run:
        context = progress() if progress else contextlib.nullcontext(SilentProgress())
        with context as shown:
            checks = dry_run_checks(settings, plugins, shown)
        for check in checks:
            emit(check)
    return passed
