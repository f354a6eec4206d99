"""Era fidelity: did the resolver, held to a date, pick older releases than that date had?

A resolution capped at a date (uv's ``--exclude-newer``) can backtrack without a word:
when a newer release needs a dependency whose every fitting release is dated after the
cap (atomicwrites, re-uploaded in 2022, held pytest of 2019 at 3.5.1), the resolver
quietly takes an older release that does without it. :func:`find_backtracks` compares
each resolved version that matters with the newest release the index had at the date,
reads the newer release's requirements, and names each dependency whose dates block it:
an :class:`~bugbout.core.store.records.Exemption` to resolve it without the date.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from pydantic import ValidationError

from bugbout.core.contract.errors import EnvironmentFailure
from bugbout.core.store.records import Exemption, Record

if TYPE_CHECKING:
    from packaging.markers import Marker
    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet

    from bugbout.core.plumbing.environments.package_index import File, PackageIndex

ROUNDS = 3
"""The most repairs of one environment: a repaired release may need another exemption."""
RUNNER = "pytest"
PYTHON = "python"
"""The key of the interpreter's version among the versions that matter."""


class Backtrack(Record):
    """A package resolved older than the newest release its date had."""

    name: str
    resolved: str
    newest: str
    """The newest release there was at the date that the project's requirements allow."""
    blockers: list[str]
    """The dependencies whose dates keep ``newest`` out (empty: none found)."""


def installed(freeze: Iterable[str]) -> dict[str, str]:
    """``pip freeze`` lines as canonical name -> version (other lines are left out)."""
    from packaging.utils import canonicalize_name

    versions: dict[str, str] = {}
    for line in freeze:
        name, separator, version = line.strip().partition("==")
        if separator and name and not name.startswith("-"):
            versions[canonicalize_name(name)] = version.strip()
    return versions


def that_matter(versions: Mapping[str, str], direct: Iterable[str]) -> dict[str, str]:
    """The versions a reader checks an era by: pytest, its plugins and the direct
    dependencies (``direct``: requirement strings), pytest first, then by name."""
    names = {name for name in map(_name, direct) if name}
    keep = {
        name: version
        for name, version in versions.items()
        if name == RUNNER or name.startswith(f"{RUNNER}-") or name in names
    }
    return dict(sorted(keep.items(), key=lambda item: (item[0] != RUNNER, item[0])))


def find_backtracks(
    index: PackageIndex,
    versions: Mapping[str, str],
    direct: Iterable[str],
    *,
    python: str,
    date: str,
) -> tuple[list[Backtrack], list[Exemption]]:
    """The packages of ``versions`` resolved older than the newest release at ``date``
    (ISO 8601 day) that the ``direct`` requirements allow, and the exemptions that would
    let that release resolve, one per blocking dependency."""
    from packaging.utils import canonicalize_name
    from packaging.version import InvalidVersion, Version

    cutoff = datetime.fromisoformat(date).replace(tzinfo=UTC)
    specifiers: dict[str, SpecifierSet] = {}
    for requirement in _parsed(direct):
        name = canonicalize_name(requirement.name)
        specifiers[name] = requirement.specifier & specifiers.get(name, requirement.specifier)
    backtracks: list[Backtrack] = []
    exemptions: dict[str, Exemption] = {}
    for package, resolved in versions.items():
        name = canonicalize_name(package)
        try:
            current = Version(resolved)
        except InvalidVersion:
            continue
        releases = index.releases(name)
        allowed = specifiers.get(name)
        candidates = [
            version
            for version, files in releases.items()
            if version > current
            and (not version.is_prerelease or current.is_prerelease)
            and (allowed is None or allowed.contains(version, prereleases=True))
            and files_before(files, cutoff, python)
        ]
        if not candidates:
            continue
        newest = max(candidates)
        needs = requirements_of(index, files_before(releases[newest], cutoff, python))
        blockers = blocking(index, needs, f"{name} {newest}", cutoff=cutoff, python=python)
        backtracks.append(
            Backtrack(name=name, resolved=resolved, newest=str(newest), blockers=sorted(blockers))
        )
        for exemption in blockers.values():
            exemptions.setdefault(exemption.name, exemption)
    return backtracks, list(exemptions.values())


def era_note(
    exempt: Iterable[Exemption], before: Mapping[str, str], after: Mapping[str, str]
) -> str:
    """What the environment line says of a repair: ``atomicwrites exempt (all releases
    after the date), pytest 5.2.1 instead of 3.5.1``."""
    parts = [f"{e.name} exempt ({e.reason})" for e in exempt]
    parts += [
        f"{name} {version} instead of {before[name]}"
        for name, version in after.items()
        if name in before and before[name] != version
    ]
    return ", ".join(parts)


def unrepaired_note(backtracks: Iterable[Backtrack]) -> str:
    """What the environment line says of the backtracks left after the repair: ``older
    than the date allows: pytest 3.5.1 (not 5.2.1, held by atomicwrites)``."""
    held = [
        f"{b.name} {b.resolved} (not {b.newest}"
        + (f", held by {', '.join(b.blockers)})" if b.blockers else ")")
        for b in backtracks
    ]
    return f"older than the date allows: {', '.join(held)}" if held else ""


def requirements_of(index: PackageIndex, files: list[File]) -> list[Requirement]:
    """The requirements of a release, read from one of its ``files`` (a wheel first)."""
    chosen = sorted(files, key=lambda f: (not f.filename.endswith(".whl"), not f.metadata))
    if not chosen:
        return []
    return list(_parsed(index.requirements(chosen[0])))


def blocking(
    index: PackageIndex,
    requirements: list[Requirement],
    needed_by: str,
    *,
    cutoff: datetime,
    python: str,
    depth: int = 0,
    seen: list[tuple[Requirement, str]] | None = None,
) -> dict[str, Exemption]:
    """The exemptions ``requirements`` need, with those that the releases they let in
    need in turn (at most :data:`ROUNDS` deep); ``seen`` collects each requirement
    examined, with the release that needs it."""
    found: dict[str, Exemption] = {}
    for requirement in requirements:
        if seen is not None:
            seen.append((requirement, needed_by))
        exemption = exemption_for(index, requirement, needed_by, cutoff, python)
        if exemption is None or exemption.name in found:
            continue
        found[exemption.name] = exemption
        if depth >= ROUNDS:
            continue
        until = datetime.fromisoformat(exemption.until).replace(tzinfo=UTC)
        releases = index.releases(exemption.name)
        let_in = [
            version
            for version, files in releases.items()
            if requirement.specifier.contains(version, prereleases=True)
            and files_before(files, until, python)
        ]
        if let_in:
            version = max(let_in)
            needs = requirements_of(index, files_before(releases[version], until, python))
            deeper = blocking(
                index,
                needs,
                f"{exemption.name} {version}",
                cutoff=cutoff,
                python=python,
                depth=depth + 1,
                seen=seen,
            )
            for name, more in deeper.items():
                found.setdefault(name, more)
    return found


def exemption_for(
    index: PackageIndex, requirement: Requirement, needed_by: str, cutoff: datetime, python: str
) -> Exemption | None:
    """An exemption for ``requirement`` when every release that fits it is dated after
    ``cutoff``; ``None`` when one fits before (or none fits at all)."""
    from packaging.utils import canonicalize_name

    if requirement.marker is not None and not applies(requirement.marker, python):
        return None
    releases = index.releases(requirement.name)
    fitting = {
        version: files
        for version, files in releases.items()
        if requirement.specifier.contains(version, prereleases=True)
    }
    if any(files_before(files, cutoff, python) for files in fitting.values()):
        return None
    dates = [
        f.uploaded
        for files in fitting.values()
        for f in files
        if f.uploaded is not None and not f.yanked and f.admits(python)
    ]
    if not dates:
        return None
    earlier = any(files_before(files, cutoff, python) for files in releases.values())
    wanted = f"{requirement.name}{requirement.specifier}"
    return Exemption(
        name=canonicalize_name(requirement.name),
        until=(min(dates).astimezone(UTC).date() + timedelta(days=1)).isoformat(),
        reason=f"no release of {wanted} before the date"
        if earlier
        else "all releases after the date",
        needed_by=needed_by,
    )


def files_before(files: list[File], cutoff: datetime, python: str) -> list[File]:
    """The files uploaded before ``cutoff``, not yanked, that ``python`` may install."""
    return [
        f
        for f in files
        if f.uploaded is not None and f.uploaded < cutoff and not f.yanked and f.admits(python)
    ]


def applies(marker: Marker, python: str) -> bool:
    from packaging.markers import UndefinedEnvironmentName

    major_minor = ".".join(python.split(".")[:2])
    try:
        return marker.evaluate(
            {"python_version": major_minor, "python_full_version": python, "extra": ""}
        )
    except UndefinedEnvironmentName:
        return True


def _parsed(requirements: Iterable[str]) -> Iterable[Requirement]:
    from packaging.requirements import InvalidRequirement, Requirement

    for text in requirements:
        try:
            yield Requirement(text)
        except InvalidRequirement:
            continue


def _name(requirement: str) -> str | None:
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    try:
        return canonicalize_name(Requirement(requirement).name)
    except InvalidRequirement:
        return None


class EraCheck(Record):
    """What an environment's era check found and did."""

    versions: dict[str, str]
    """The versions that matter after the repair, ``python`` first."""
    exempt: list[Exemption]
    note: str = ""
    """The environment line's words on it (empty: nothing to say)."""
    error: str | None = None
    """Why the index could not be read (nothing was checked)."""

    @classmethod
    def recorded(cls, value: object) -> EraCheck | None:
        """An era check as an environment recorded it (``None``: it holds none)."""
        try:
            return cls.model_validate(value)
        except ValidationError:
            return None


def check_era(
    index: PackageIndex,
    freeze: Iterable[str],
    rebuild: Callable[[list[Exemption]], Iterable[str]] | None,
    *,
    direct: list[str],
    python: str,
    date: str,
) -> EraCheck:
    """Check the resolution ``freeze`` against the index's dates and, when a backtrack
    has blockers, ``rebuild`` it with them exempt (at most :data:`ROUNDS` times; ``None``:
    the backtracks are only reported)."""
    first = that_matter(installed(freeze), direct)
    current, exempt = first, list[Exemption]()
    try:
        for round_number in range(ROUNDS + 1):
            backtracks, found = find_backtracks(index, current, direct, python=python, date=date)
            known = {e.name for e in exempt}
            new = [e for e in found if e.name not in known]
            if not new or rebuild is None or round_number == ROUNDS:
                break
            exempt += new
            current = that_matter(installed(rebuild(exempt)), direct)
    except EnvironmentFailure as exc:
        return EraCheck(versions={PYTHON: python, **current}, exempt=exempt, error=str(exc))
    notes = [era_note(exempt, first, current), unrepaired_note(backtracks)]
    return EraCheck(
        versions={PYTHON: python, **current},
        exempt=exempt,
        note="; ".join(note for note in notes if note),
    )


def compact(versions: Mapping[str, str], exempt: Iterable[Exemption]) -> str:
    """The versions that matter in a table cell: ``py3.7.16 pytest 5.2.0 +2; atomicwrites
    exempt`` (``-``: none recorded)."""
    parts = []
    if PYTHON in versions:
        parts.append(f"py{versions[PYTHON]}")
    if RUNNER in versions:
        parts.append(f"{RUNNER} {versions[RUNNER]}")
    others = len(set(versions) - {PYTHON, RUNNER})
    if others:
        parts.append(f"+{others}")
    names = [e.name for e in exempt]
    text = " ".join(parts) or "-"
    return f"{text}; {', '.join(names)} exempt" if names else text


def listing(versions: Mapping[str, str]) -> str:
    """Every version that matters, in one line: ``Python 3.7.16, pytest 5.2.0, six 1.12.0``."""
    return ", ".join(
        f"Python {version}" if name == PYTHON else f"{name} {version}"
        for name, version in versions.items()
    )
