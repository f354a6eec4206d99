"""What an era's requirements resolve to, before anything is installed: ``uv pip compile``
pins every distribution for the era's interpreter, and an environment is keyed by that
pinned set, so eras that resolve alike share one environment.

The requirements the project needs (its runtime dependencies and
``project.test-dependencies``) must resolve. The test dependencies it declared are added
one by one when they do not resolve together: only those that do not resolve are left
out, each with why. A source distribution today's build tools cannot build is built with
the build tools of its era instead. A build tool the requirements need at run time
(zope.interface needs setuptools) is held to its era's release
(:attr:`Resolver.tools_until`): builds are free of the date, what the tests import is not.
A distribution no file of its era installs is resolved as of its first release that has
one, with what that release needs (:mod:`~bugbout.core.plumbing.environments.replacements`).
A uv call that times out is named so, and a resolution that left something out because
of it is not kept: it is tried again. An era whose requirements hold pytest older than the
oldest bugbout's test runs take (2.7) is resolved again with that pytest as a floor: a
declared pin of pytest is set aside, and what needs an older pytest is left out, each with
why (the project's own ``test-dependencies`` are its choice, and stay).

An era's resolution is made and kept by
:class:`~bugbout.core.plumbing.environments.era_resolution.EraResolution`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from pydantic import Field

from bugbout.core.contract.errors import EnvironmentFailure
from bugbout.core.plumbing.environments.backtrack import EraCheck
from bugbout.core.plumbing.environments.pins import (
    name_of,
)
from bugbout.core.plumbing.environments.replacements import Replacements
from bugbout.core.plumbing.environments.uv_program import (
    UvFailure,
    run_uv,
    supports_exclude_newer_package,
)
from bugbout.core.store.records import Exemption, Record

BUILD_TOOLS = (
    "setuptools",
    "setuptools-scm",
    "wheel",
    "hatchling",
    "hatch-vcs",
    "flit-core",
    "poetry-core",
    "pdm-backend",
    "cython",
)
"""Build backends and their helpers: sdists get their newest releases when built (their
era's when the newest cannot build them)."""
BUILD_HELPERS = ("cffi",)
"""What an old ``setup.py`` needs to build yet leaves out when asked what it needs (it
drops ``setup_requires`` for ``egg_info``: cryptography before 3.4, bcrypt, PyNaCl):
without it setuptools ignores ``cffi_modules`` and builds a wheel with no compiled module."""
OLDEST_BUILD_TOOLS = "2019-03-01"
"""The era's build tools are never older than this month: uv builds a source distribution
that has only a ``setup.py`` with setuptools 40.8.0 or later (February 2019)."""
TIMEOUT_SETTING = "environment.install-timeout"
SETUPTOOLS_BEFORE = (3, 12)
"""Environments of Pythons older than this carry setuptools, as their venvs did."""
_FAILED_BUILD = re.compile(
    r"Failed to (?:build|download and build|prepare distributions)[^`]*`(?P<name>[A-Za-z0-9._-]+)"
)


class Resolution(Record):
    """An era's requirements, resolved: what the environment holds and what it lacks."""

    pinned: list[str]
    """Every distribution, ``name==version``, sorted."""
    requirements: list[str]
    """The requirements resolved (the declared ones that did not are left out)."""
    left_out: dict[str, str] = Field(default_factory=dict)
    """Declared test dependencies left out, each with why (``did not resolve: …``)."""
    short: bool = False
    """Something was left out because uv timed out: the resolution is tried again."""
    era_build_tools: bool = False
    """Source distributions needed their era's build tools to build."""
    runner: list[Exemption] = Field(default_factory=list)
    """pytest and what it needs, resolved as of the interpreter's time (the fix's predates it)."""
    era: EraCheck | None = None
    installable: list[Exemption] = Field(default_factory=list)
    """Distributions whose era had no file uv installs, resolved as of their first release
    that has one (:mod:`bugbout.core.plumbing.environments.installable`), and what that
    release needs that its era lacked (:mod:`bugbout.core.plumbing.environments.replacements`)."""

    @property
    def build_tools(self) -> list[str]:
        """The build tools among ``pinned``: what the tests need of them at run time."""
        return [pin for pin in self.pinned if name_of(pin) in BUILD_TOOLS]

    @property
    def exempt(self) -> list[Exemption]:
        """Every distribution resolved without the era's date cap."""
        return [*self.runner, *self.installable, *(self.era.exempt if self.era else [])]

    @property
    def note(self) -> str:
        """What the environment line says of the runner, of the distributions no file of
        their era installs, and of the era check."""
        notes = [f"{e.name} as of {e.until} ({e.reason})" for e in self.installable]
        notes.append(self.era.note if self.era else "")
        if self.runner:
            until = self.runner[0].until
            notes.insert(0, f"pytest and what it needs as of {until} ({self.runner[0].reason})")
        return "; ".join(note for note in notes if note)


def build_helpers(pins: list[str], pinned: list[str], scratch: Path) -> list[str]:
    """The options that put the pinned build helpers (cffi) into the build environment of
    every other distribution of ``pins``: a uv configuration file written in ``scratch``
    (none when no helper is pinned)."""
    helpers = helpers_of(pinned)
    served = {*BUILD_HELPERS, "pycparser", *BUILD_TOOLS}  # the helpers' own dependencies
    built = sorted({name_of(pin) for pin in pins} - served)
    if not helpers or not built:
        return []
    table = "".join(f"{json.dumps(each)} = {json.dumps(helpers)}\n" for each in built)
    config = scratch / "build-helpers.toml"
    config.write_text(f"[extra-build-dependencies]\n{table}")
    return ["--config-file", str(config)]


def helpers_of(pinned: list[str]) -> list[str]:
    """The build helpers among ``pinned``."""
    return [pin for pin in pinned if name_of(pin) in BUILD_HELPERS]


def timed_out(failure: UvFailure) -> bool:
    """Whether a uv call failed because it ran out of time."""
    return timed_out_reason(failure.reason)


def timed_out_reason(reason: str) -> bool:
    """Whether a uv call's ``reason`` is that it ran out of time."""
    return reason.startswith("timed out after ")


def build_failure(failure: UvFailure) -> str | None:
    """The distribution a failed uv call could not build, if that is why it failed."""
    found = _FAILED_BUILD.search(failure.reason)
    return found["name"] if found else None


def raised(failure: UvFailure) -> Exception:
    """What a failed uv call raises: itself, or when it timed out an environment failure
    that names the setting to raise."""
    if not timed_out(failure):
        return failure
    return EnvironmentFailure(f"{failure}; raise {TIMEOUT_SETTING} if the index is slow")


@dataclass
class UvCall:
    """How uv is called for one era: the date cap, its exemptions, the index, the limit."""

    exclude_newer: str | None
    index_url: str | None
    timeout: float
    cwd: Path
    exempt: list[Exemption] = field(default_factory=list)
    """What the era check exempted."""
    runner: list[Exemption] = field(default_factory=list)
    """pytest and what it needs, capped at the interpreter's time instead (see
    :func:`~bugbout.core.plumbing.environments.era_resolution.runner_of`)."""
    oldest_build_tools: str = OLDEST_BUILD_TOOLS
    """The era's build tools are never capped before this date."""
    installable: list[Exemption] = field(default_factory=list)
    """Distributions whose era had no file uv installs (see :class:`Resolution`)."""

    def options(self, *, era_build_tools: bool = False) -> list[str]:
        """The options of ``uv pip compile`` and ``uv pip install``: the date cap (with the
        build tools free of it: up to today, or with ``era_build_tools`` up to the era,
        but no older than ``oldest_build_tools``) and the index."""
        options: list[str] = []
        if self.exclude_newer:
            options += ["--exclude-newer", self.exclude_newer]
            if supports_exclude_newer_package():
                until = (
                    max(self.exclude_newer, self.oldest_build_tools)
                    if era_build_tools
                    else (date.today() + timedelta(days=1)).isoformat()
                )
                for tool in BUILD_TOOLS:
                    options += ["--exclude-newer-package", f"{tool}={until}"]
                for exemption in [*self.runner, *self.installable, *self.exempt]:
                    options += ["--exclude-newer-package", f"{exemption.name}={exemption.until}"]
        if self.index_url:
            options += ["--index-url", self.index_url]
        return options

    def run(self, args: list[str], what: str) -> str:
        return run_uv(args, timeout=self.timeout, what=what, cwd=self.cwd)


@dataclass
class Resolver:
    """Resolves requirements for ``interpreter`` with ``call``."""

    call: UvCall
    interpreter: Path
    scratch: Path
    era_build_tools: bool = False
    python: str = ""
    """The interpreter's version: when set, a distribution whose era had no file uv
    installs is resolved as of its first release that has one."""
    tools_until: str | None = None
    """When set, a build tool the requirements pin is held to its release as of this date
    (a constraint of the resolution alone: builds still get the newest)."""
    held: dict[str, str] = field(default_factory=dict)
    """The build tools' releases as of ``tools_until``, by name, once looked up."""
    replacements: Replacements | None = None
    """The releases that stand in for their era's, once one does."""

    def compile(self, requirements: list[str]) -> list[str]:
        """The pinned set of ``requirements``; with the era's build tools when today's cannot
        build a source distribution it needs, exempting from the date each distribution
        no file of its era installs, and a build tool it pins held to its era's release
        (unless something pinned needs a newer one)."""
        pinned = self._exempted(requirements, [])
        held = self._held(pinned)
        if not held:
            return pinned
        try:
            return self._exempted(requirements, held)
        except UvFailure:
            return pinned  # something of the requirements needs a newer release

    def _held(self, pinned: list[str]) -> list[str]:
        """The era's releases of the build tools ``pinned`` holds newer ones of."""
        tools = [name_of(pin) for pin in pinned if name_of(pin) in BUILD_TOOLS]
        if self.tools_until is None or not tools:
            return []
        missing = [tool for tool in tools if tool not in self.held]
        if missing:
            call = UvCall(
                self.tools_until,
                self.call.index_url,
                self.call.timeout,
                self.call.cwd,
                oldest_build_tools="",
            )
            era = Resolver(call, self.interpreter, self.scratch, era_build_tools=True)
            try:
                found = {name_of(pin): pin for pin in era.compile(missing)}
            except UvFailure as failure:
                if timed_out(failure):
                    raise
                found = {}  # no release of the era installs here: the newest stays
            self.held.update({tool: found.get(tool, "") for tool in missing})
        held = [self.held[tool] for tool in tools if self.held[tool]]
        return [pin for pin in held if pin.lower() not in {p.lower() for p in pinned}]

    def relaxed(self, requirements: list[str]) -> list[str]:
        """``requirements`` with those a replacement sets aside replaced (see
        :mod:`bugbout.core.plumbing.environments.replacements`)."""
        return self.replacements.applied(requirements) if self.replacements else requirements

    def set_aside(self, requirements: list[str]) -> dict[str, str]:
        """The requirements of ``requirements`` a replacement sets aside, each with why."""
        return self.replacements.set_aside(requirements) if self.replacements else {}

    def _exempted(self, requirements: list[str], held: list[str]) -> list[str]:
        while True:
            try:
                return self._built(self.relaxed(requirements), held)
            except UvFailure as failure:
                if not self._replaced(failure):
                    raise

    def _built(self, requirements: list[str], held: list[str]) -> list[str]:
        try:
            return self._compile(requirements, held)
        except UvFailure as failure:
            if self.era_build_tools or build_failure(failure) is None:
                raise
            self.era_build_tools = True
            return self._compile(requirements, held)

    def _replaced(self, failure: UvFailure) -> bool:
        """Whether a failure for a refused file name, or for sources that do not build even
        with the era's build tools, found a later release to stand in (once per name), and
        exempted it and what it needs from the date."""
        from bugbout.core.plumbing.environments.installable import first_installable, refused
        from bugbout.core.plumbing.environments.package_index import PackageIndex

        name = refused(failure.reason)
        unbuilt = name is None and self.era_build_tools
        if unbuilt:
            name = build_failure(failure)
        date = self.call.exclude_newer
        known = {e.name for e in self.call.installable}
        if name is None or name in known or not self.python or not date:
            return False
        index = PackageIndex(self.call.index_url)
        found = first_installable(index, name, self.python, date, wheels=unbuilt)
        if found is None:
            return False
        version, exemption = found
        self.replacements = self.replacements or Replacements(index, self.python, date)
        known |= {e.name for e in [*self.call.runner, *self.call.exempt, exemption]}
        needed = self.replacements.add(name, version, exemption.reason, known)
        self.call.installable += [exemption, *needed]
        return True

    def _compile(self, requirements: list[str], held: list[str]) -> list[str]:
        if not requirements:
            return []
        listed = self.scratch / "requirements.in"
        listed.write_text("\n".join(requirements) + "\n", encoding="utf-8")
        constraints = self.scratch / "held.txt"
        constraints.write_text("".join(f"{pin}\n" for pin in held), encoding="utf-8")
        output = self.call.run(
            [
                "pip",
                "compile",
                "--python",
                str(self.interpreter),
                "--no-header",
                "--no-annotate",
                *self.call.options(era_build_tools=self.era_build_tools),
                *(["--constraints", str(constraints)] if held else []),
                str(listed),
            ],
            what="resolving the test and runtime dependencies",
        )
        pinned = [line.strip() for line in output.splitlines() if "==" in line]
        return sorted(line for line in pinned if not line.startswith(("#", "-")))

    def resolve(self, required: list[str], declared: list[str]) -> Resolution:
        """``required`` and as many of ``declared`` as resolve with them."""
        declared = [d for d in dict.fromkeys(declared) if d not in required]
        try:
            pinned = self.compile([*declared, *required])
            return self._resolution(pinned, [*declared, *required], {}, short=False)
        except UvFailure as failure:
            if not declared:
                raise raised(failure) from None
        try:
            pinned = self.compile(required)
        except UvFailure as failure:
            raise raised(failure) from None
        kept: list[str] = []
        left_out: dict[str, str] = {}
        for requirement in declared:
            try:
                pinned = self.compile([*kept, requirement, *required])
            except UvFailure as failure:
                left_out[requirement] = (
                    failure.reason if timed_out(failure) else f"did not resolve: {failure.reason}"
                )
                continue
            kept.append(requirement)
        short = any(map(timed_out_reason, left_out.values()))
        return self._resolution(pinned, [*kept, *required], left_out, short=short)

    def _resolution(
        self, pinned: list[str], requirements: list[str], left_out: dict[str, str], *, short: bool
    ) -> Resolution:
        return Resolution(
            pinned=pinned,
            requirements=self.relaxed(requirements),
            left_out={**left_out, **self.set_aside(requirements)},
            short=short,
            era_build_tools=self.era_build_tools,
            installable=list(self.call.installable),
        )
