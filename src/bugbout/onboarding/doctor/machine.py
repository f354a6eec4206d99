"""The machine: git, uv, the Python eras, the sandbox, the guard, podman and, with a
``bugbout.yaml``, the repository and the project's directories."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

from bugbout.core.contract.errors import BugboutError
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings
from bugbout.core.contract.types import SandboxPlugin
from bugbout.onboarding.doctor.check import Check
from bugbout.onboarding.doctor.eras import python_check
from bugbout.onboarding.doctor.probes import probe, quiet_env, version_in
from bugbout.onboarding.doctor.protections import protections_check
from bugbout.onboarding.doctor.sandbox_tests import PASSED, pytest_problem


def machine_checks(
    settings: BoutSettings, plugins: Plugins, *, configured: bool = True
) -> Iterator[Check]:
    """git, uv, the interpreters, the sandbox, the guard; with a configuration, the
    repository."""
    yield git_check()
    yield uv_check()
    yield python_check(settings, plugins, configured=configured)
    yield sandbox_check(settings, plugins)
    yield protections_check(settings, plugins)
    yield guard_check()
    yield checkouts_check(settings, plugins)
    yield podman_check(settings)
    if configured:
        yield from repository_checks(settings)


def git_check() -> Check:
    git = shutil.which("git")
    if git is None:
        return Check("git", False, "git is not on PATH", "install git (e.g. `apt install git`)")
    answer = probe([git, "--version"], env=quiet_env())
    version = version_in(answer.text)
    if not answer.ok or version is None:
        return Check("git", False, f"`git --version` failed: {answer.problem}", "reinstall git")
    return Check("git", True, f"{version} ({git})")


def uv_check() -> Check:
    fix = (
        "pip install uv (bugbout's test environments are built with it), "
        "or use environment=interpreter"
    )
    try:
        from uv import find_uv_bin

        uv = find_uv_bin()
    except (ImportError, FileNotFoundError) as exc:
        return Check("uv", False, f"uv is not installed ({exc})", fix)
    answer = probe([uv, "--version"], env=quiet_env())
    version = version_in(answer.text)
    if not answer.ok or version is None:
        return Check("uv", False, f"`{uv} --version` failed: {answer.problem}", fix)
    return Check("uv", True, f"{version} ({uv})")


def sandbox_check(settings: BoutSettings, plugins: Plugins) -> Check:
    """The sandbox agents and tests will run in; for ``auto``, the one it chose."""
    name = settings.sandbox.name
    try:
        sandbox = plugins.create(SandboxPlugin, name, settings.sandbox.options)
        problem = sandbox.problem()
    except BugboutError as exc:
        return Check("sandbox", False, str(exc), "choose another, e.g. sandbox=auto")
    if problem:
        return Check("sandbox", False, f"{name}: {problem}")  # the problem names its fix
    if name == "none":
        return Check("sandbox", True, "none: agents and tests run unconfined, with the network")
    if (failed := pytest_problem(settings, sandbox)) is not None:
        return Check("sandbox", False, f"{name}: a test run in it failed: {failed}")
    chosen = getattr(sandbox, "chosen", None)
    if chosen is not None and getattr(chosen, "name", name) != name:
        return Check("sandbox", True, f"{name}: chose {chosen.name}; {PASSED}")
    return Check("sandbox", True, f"{name} works: {PASSED}")


def guard_check() -> Check:
    """Which guard holds agents to their limits: guard.c compiled (here, now, if it was
    not yet), or guard.py where it cannot be; both work, the compiled one starts sooner."""
    from bugbout.core.plumbing.confinement.limits import compile_guard
    from bugbout.core.plumbing.runtime.home import bugbout_home
    from bugbout.sandbox.guard_build import CompileFailed

    try:
        program = compile_guard(bugbout_home())
    except CompileFailed as exc:
        return Check(
            "guard",
            True,
            f"guard.py, in Python ({exc}); a C compiler would start each attempt about "
            "20 ms sooner (e.g. `apt install gcc libc6-dev`)",
        )
    return Check("guard", True, f"compiled ({program})")


def checkouts_check(settings: BoutSettings, plugins: Plugins) -> Check:
    """How attempts' working copies are made here (``run.checkouts``), and why not better."""
    from bugbout.core.plumbing.runtime.home import bugbout_home
    from bugbout.core.plumbing.trees.checkout import choose_method
    from bugbout.sandbox.overlay import overlay_problem

    trees = bugbout_home() / "checkouts" / "trees"
    method, problem = choose_method(trees, settings.run.checkouts)
    if problem is not None:
        return Check("checkouts", False, problem)  # it names its fix
    if method == "overlay":
        try:
            sandbox = plugins.create(SandboxPlugin, settings.sandbox.name, settings.sandbox.options)
        except BugboutError:
            sandbox = None
        if sandbox is not None and not getattr(sandbox, "overlays", True):
            return Check(
                "checkouts",
                True,
                f"overlay, but {sandbox.name} agents get copies (reflink or copy)",
            )
        return Check("checkouts", True, "overlay (the upper directory is the patch)")
    why = (
        "run.checkouts"
        if settings.run.checkouts != "auto"
        else f"no overlays: {overlay_problem(trees.absolute())}"
    )
    kind = "cloned files" if method == "reflink" else "full copies, no reflinks here"
    return Check("checkouts", True, f"{method} ({kind}; {why})")


def podman_check(settings: BoutSettings) -> Check:
    """Whether podman runs containers here, as bugbout configures it (runc, cgroupfs,
    ulimits within the hard limits), with the chosen plugin's options; when not, the cause
    and its fix. The base image is checked only for ``environment=podman`` (the sandbox needs
    none). It fails the report only when ``environment=podman`` or ``sandbox=podman`` is chosen."""
    from bugbout.core.plumbing.runtime.home import bugbout_home
    from bugbout.sandbox.podman import Podman

    used = [
        f"{kind}=podman"
        for kind, choice in (("environment", settings.environment), ("sandbox", settings.sandbox))
        if choice.name == "podman"
    ]
    env = settings.environment.name == "podman"
    options = settings.environment.options if env else {}
    if not env and settings.sandbox.name == "podman":
        options = settings.sandbox.options

    def option(name: str) -> str | None:
        value = options.get(name)
        return str(value) if value else None

    def path(name: str) -> Path | None:
        value = option(name)
        return Path(value).expanduser() if value else None

    podman = Podman(
        bugbout_home(),
        socket=option("socket"),
        storage=path("storage"),
        image=option("image"),
        containerfile=path("containerfile"),
        suite=option("suite"),
        mirror=option("mirror"),
        cache=path("cache"),
        driver=option("driver") or "overlay",
        executable=option("executable") or "podman",
    )
    # The sandbox needs no image: the base image matters only to environment=podman.
    problem = podman.problem(base=env)
    if problem is not None:
        if not used:
            unused = "not used (environment=podman, sandbox=podman)"
            return Check("podman", True, f"{unused}: {problem}")
        return Check("podman", False, f"{', '.join(used)}: {problem}")  # it names its fix
    answer = probe([podman.executable, "--version"], env=quiet_env())
    version = version_in(answer.text) or "podman"
    return Check("podman", True, f"{version} runs containers (runc, cgroupfs, no network)")


def repository_checks(settings: BoutSettings) -> Iterator[Check]:
    """The repository is a git repository holding ``project.source`` and ``project.tests``."""
    from bugbout.core.plumbing.trees.git import Git

    repository = settings.repository
    with Git(repository) as git:
        if not git.is_repository():
            yield Check(
                "repository",
                False,
                f"{repository} is not a git repository",
                "set project.repository in bugbout.yaml to the repository's root",
            )
            return
    yield Check("repository", True, f"{repository} is a git repository")
    project = settings.project
    tests = (project.tests,) if (repository / project.tests).exists() else ()  # or test.py
    source = [
        p for p in project.source if (repository / p).is_dir() or (repository / f"{p}.py").is_file()
    ]
    for key, paths, present in (
        # a package's past locations are not in today's tree: one of them must be (its
        # directory, or the module of its name at the root)
        ("source", project.source, source),
        ("tests", (project.tests,), tests),
    ):
        if present:
            yield Check(f"project.{key}", True, f"{', '.join(present)} exists")
        else:
            missing = f"{paths[0]} is not" if len(paths) == 1 else f"none of {', '.join(paths)} is"
            yield Check(
                f"project.{key}",
                False,
                f"{missing} a directory of {repository}",
                f"set project.{key} in bugbout.yaml (`bugbout init --force` detects it)",
            )
