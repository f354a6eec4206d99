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

An era's resolution is kept in ``BUGBOUT_HOME/resolutions`` (:class:`EraResolution`); its
date cap is the first day of the month after the fix (:func:`exclude_newer_date`).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from pathlib import Path

from pydantic import Field

from bugbout.core.contract.errors import EnvironmentFailure
from bugbout.core.plumbing.environments.backtrack import EraCheck
from bugbout.core.plumbing.environments.pins import (
    RUNNER_FLOOR,
    name_of,
    runner_pins,
    too_old_reason,
    too_old_runner,
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
    :func:`runner_of`)."""
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


def runner_of(
    resolver: Resolver, requirements: list[str], until: str, python: str
) -> list[Exemption]:
    """When the fix's era predates the interpreter (its pytest would not run there): pytest
    and what it needs, as of ``until`` (the interpreter's time), as exemptions from the
    era's date; none otherwise."""
    from packaging.requirements import InvalidRequirement, Requirement

    call = resolver.call
    if call.exclude_newer is None or until <= call.exclude_newer:
        return []
    try:
        names = {Requirement(r).name.lower() for r in requirements}
    except InvalidRequirement:
        return []
    if "pytest" not in names:
        return []
    reason = f"the fix's predates Python {'.'.join(python.split('.')[:2])}"
    pinned = Resolver(replace(call, exclude_newer=until), resolver.interpreter, resolver.scratch)
    return [  # the build tools are free of the date anyway
        Exemption(name=name, until=until, reason=reason, needed_by="pytest")
        for name in (pin.split("==")[0] for pin in pinned.compile(["pytest"]))
        if name.lower() not in BUILD_TOOLS
    ]


def checked(
    resolver: Resolver,
    resolution: Resolution,
    *,
    index_url: str | None,
    direct: list[str],
    python: str,
) -> Resolution:
    """``resolution`` checked against the index's dates (when capped at one), resolved
    again with the blocking dependencies exempt (see
    :mod:`bugbout.core.plumbing.environments.backtrack`), and the declared test dependencies it left
    out tried again with them: the same blocker may be why they did not resolve (``pytest==3.8.2``
    needs atomicwrites)."""
    from bugbout.core.plumbing.environments.backtrack import check_era
    from bugbout.core.plumbing.environments.package_index import PackageIndex

    call = resolver.call
    if not call.exclude_newer:
        return resolution
    latest = [resolution.pinned]
    requirements, left_out = list(resolution.requirements), dict(resolution.left_out)

    def rebuild(exempt: list[Exemption]) -> list[str]:
        call.exempt = list(exempt)
        for requirement, why in list(left_out.items()):  # the exemptions may let it resolve
            set_aside = resolver.set_aside([requirement, *requirements])
            if timed_out_reason(why) or requirement in set_aside:
                continue
            try:
                resolver.compile([requirement, *requirements])
            except UvFailure:
                continue
            requirements.insert(0, requirement)
            del left_out[requirement]
        latest.append(resolver.compile(requirements))
        return latest[-1]

    era = check_era(
        PackageIndex(index_url),
        resolution.pinned,
        rebuild if supports_exclude_newer_package() else None,
        direct=direct,
        python=python,
        date=call.exclude_newer,
    )
    return resolution.model_copy(
        update={
            "pinned": latest[-1],
            "requirements": requirements,
            "left_out": left_out,
            "era": era,
            "era_build_tools": resolver.era_build_tools,
            "installable": list(call.installable),
        }
    )


def exclude_newer_date(fix_date: str) -> str:
    """The first day of the month after ``fix_date`` (ISO 8601), e.g. ``2021-07-01``."""
    year, month = int(fix_date[:4]), int(fix_date[5:7])
    year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return f"{year:04d}-{month:02d}-01"


def era_tools_date(exclude_newer: str | None, python_version: str) -> str | None:
    """The date the era's build tools are capped at: the month after the interpreter came
    out (its venvs carried the setuptools of that time, whatever the fix's date: older
    tools may not run on it), else the fix's era."""
    from bugbout.core.plumbing.environments.interpreters import PYTHON_RELEASES

    if exclude_newer is None:
        return None
    released = PYTHON_RELEASES.get(".".join(python_version.split(".")[:2]))
    return exclude_newer_date(released) if released else exclude_newer


@dataclass
class EraResolution:
    """One era's resolution: read from ``BUGBOUT_HOME/resolutions``, else made and kept
    there (unless it is short)."""

    home: Path
    era: str
    interpreter: Path
    version: str
    exclude_newer: str | None
    required: list[str]
    declared: list[str]
    index_url: str | None
    timeout: float

    def resolved(self) -> tuple[Resolution, list[str]]:
        """The resolution, and the era's build tools pinned (setuptools before 3.12)."""
        import tempfile

        path = self.home / "resolutions" / f"{self.era}.json"
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
            resolution = Resolution.model_validate(stored["resolution"])
            tools = list(stored["tools"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
        else:
            floored = not self._floor_untried(resolution) or stored.get("runner-floor")
            if floored and (not resolution.installable or stored.get("replacements")):
                return resolution, tools  # else: kept before the floor or replacements
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".resolving-", dir=path.parent) as scratch:
            resolution, tools = self._resolve(Path(scratch))
        if not resolution.short:
            handle, kept = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                kept_data = {"resolution": resolution.model_dump(mode="json"), "tools": tools}
                json.dump({**kept_data, "runner-floor": True, "replacements": True}, file)
            Path(kept).replace(path)
        return resolution, tools

    def _resolve(self, scratch: Path) -> tuple[Resolution, list[str]]:
        call = UvCall(self.exclude_newer, self.index_url, self.timeout, scratch)
        tools_date = era_tools_date(self.exclude_newer, self.version)
        resolver = Resolver(
            call,
            self.interpreter,
            scratch,
            python=self.version,
            tools_until=max(self.exclude_newer, tools_date)
            if self.exclude_newer and tools_date
            else None,
        )
        if tools_date is not None:
            try:
                call.runner = runner_of(resolver, self.required, tools_date, self.version)
            except UvFailure as failure:
                raise raised(failure) from None
        resolution = self._checked(resolver, self.required, self.declared)
        if self._floor_untried(resolution):
            resolution = self._floored(resolver, resolution)
        resolution = resolution.model_copy(update={"runner": call.runner})
        minor = tuple(int(part) for part in self.version.split(".")[:2])
        if minor >= SETUPTOOLS_BEFORE:
            return resolution, []
        tools_call = UvCall(
            tools_date,
            self.index_url,
            self.timeout,
            scratch,
            oldest_build_tools="",  # the interpreter's own, however old
        )
        tools = Resolver(tools_call, self.interpreter, scratch, era_build_tools=True)
        try:
            return resolution, tools.compile(["setuptools"])
        except UvFailure as failure:
            raise raised(failure) from None

    def _floor_untried(self, resolution: Resolution) -> bool:
        """Whether ``resolution`` holds a pytest older than bugbout's runs take, and the
        project's own requirements leave room for a newer one (its ``test-dependencies``
        pinning an old pytest are its choice: the runs then say so)."""
        return too_old_runner(resolution.pinned) and not runner_pins(self.required)

    def _floored(self, resolver: Resolver, resolution: Resolution) -> Resolution:
        """The requirements resolved again with the oldest pytest bugbout runs as a floor:
        the declared test dependencies that do not resolve with it (a pin of an older
        pytest, ``py==1.4.15``) are left out, a pin of pytest with why. ``resolution``
        when nothing resolves with the floor."""
        try:
            floored = self._checked(resolver, [*self.required, RUNNER_FLOOR], self.declared)
        except EnvironmentFailure:  # uv's failures among them
            return resolution
        reason = too_old_reason(resolution.pinned, floored.pinned)
        for pin in runner_pins(list(floored.left_out)):
            floored.left_out[pin] = reason
        return floored

    def _checked(self, resolver: Resolver, required: list[str], declared: list[str]) -> Resolution:
        """``required`` and as many of ``declared`` as resolve, checked against the
        index's dates."""
        return checked(
            resolver,
            resolver.resolve(required, declared),
            index_url=self.index_url,
            direct=[*required, *declared],
            python=self.version,
        )
