"""Reproducible sessions: `nox -l` lists them, `nox -s tests` runs the test suite."""

from __future__ import annotations

import nox

nox.needs_version = ">=2024.4.15"
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["tests", "lint", "typecheck"]

PYTHON = "3.11"


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Run the test suite (pass pytest arguments after --)."""
    session.install("-e", ".[dev]")
    session.run("pytest", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """Check style and common mistakes with ruff."""
    session.install("ruff")
    session.run("ruff", "check", "src", "tests", "benchmarks", "examples", "noxfile.py")
    session.run("ruff", "format", "--check", "src", "tests", "benchmarks", "examples", "noxfile.py")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """Type-check the package with mypy (strict on bugbout.core)."""
    session.install("-e", ".[dev]")
    session.run("mypy")


@nox.session(python=PYTHON, default=False)
def bench(session: nox.Session) -> None:
    """Benchmarks, reported as ratios to a baseline measured in the same run."""
    session.install("-e", ".")
    benchmarks = ("bench_mining.py", "bench_checkout.py", "bench_race.py", "bench_crossexam.py")
    for benchmark in benchmarks:
        session.run("python", f"benchmarks/{benchmark}", *session.posargs)
