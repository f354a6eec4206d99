"""Reproducible sessions: `nox -l` lists them, `nox -s tests` runs the test suite."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import nox

nox.needs_version = ">=2024.4.15"
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["tests", "lint", "typecheck", "docs"]

PYTHON = "3.11"
ROOT = Path(__file__).resolve().parent

E2E_TESTS = (
    "tests/test_agents_end_to_end.py",
    "tests/test_model_server_end_to_end.py",
    "tests/test_doctor.py",
)
E2E_SELECTION = "end_to_end or real_cli or installed_cli"
"""The tests that drive a real agent CLI against the scripted model server."""
AGENT_PACKAGES = (
    "@anthropic-ai/claude-code@2.1.197",
    "@openai/codex@0.171.0",
    "@google/gemini-cli@0.61.0",
)
"""The agent CLIs the tests drive (against a scripted model server), pinned."""
MINI_SWE_AGENT = "mini-swe-agent==2.4.6"
"""mini-swe-agent, pinned; it pulls LiteLLM, so it gets a virtual environment of its own."""
SWEBENCH = "swebench==5.0.2"
"""SWE-bench's harness, pinned: the tests load bugbout's SWE-bench export with its own
loader. It pulls `datasets` and Docker's client, so it too gets an environment of its own."""
HARBOR = ("harbor==0.26.0", "3.12")
"""Harbor, pinned, and the Python it needs: the tests load and lint bugbout's Harbor
export with Harbor's own task model and linter."""
TOOLS = Path.home() / ".cache" / "bugbout-tests"
"""Where the sessions install the agents: outside /tmp, which a sandbox replaces, and
kept between runs."""
COMPILED = {"UV_COMPILE_BYTECODE": "1"}
"""Installs with every package's bytecode written, for the sessions that start many
processes (bugbout's command line, agents, Ray workers, test runs on the session's
interpreter): where PYTHONDONTWRITEBYTECODE is set, each would compile pydantic, Hydra
and pytest again."""


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Run the test suite, spread over every core by pytest-xdist (pass pytest arguments
    after --; ``-n 0`` runs it in one process; ``nox -s tests -- -m "not slow"`` is the
    quick loop).

    pytest-xdist is installed beside the session's environment, not in it, and reaches
    only the suite's own pytest through ``PYTHONPATH``: the projects' test runs that
    bugbout starts with the same interpreter never load it. Its workers take the next
    test as they free up (``worksteal``): a few tests take minutes, most a second."""
    session.install("-e", ".[dev]", env=COMPILED)
    # not session.create_tmp(): it sets TMPDIR, and Ray's sockets under a long TMPDIR
    # exceed the length a socket path may have
    workers = Path(session.virtualenv.location) / "xdist"
    session.install("--no-deps", "--target", str(workers), "pytest-xdist>=3.6", "execnet>=2.1")
    paths = [str(workers), os.environ.get("PYTHONPATH", "")]
    env = {"PYTHONPATH": os.pathsep.join(path for path in paths if path), **_agents(session)}
    session.run("pytest", *_spread(session.posargs), env=env)


def _agents(session: nox.Session) -> dict[str, str]:
    """The pinned agent CLIs, installed once into :data:`TOOLS` (npm into a prefix of its
    own; mini-swe-agent, SWE-bench's harness and Harbor each into a virtual environment
    of its own): the variables that put the CLIs first on the tests' PATH and name
    mini-swe-agent's ``mini`` and the others' Pythons."""
    npm = shutil.which("npm")
    if npm is None:
        session.error("npm is not installed: the tests drive the agent CLIs (see README.md)")
    prefix = TOOLS / "agent-clis"
    if _stale(prefix, AGENT_PACKAGES):
        session.log(f"installing the agent CLIs into {prefix}")
        session.run(
            npm, "install", "--prefix", str(prefix), "--no-fund", "--no-audit", "--silent",
            *AGENT_PACKAGES, external=True,
        )  # fmt: skip
        _installed(prefix, AGENT_PACKAGES)
    mini = _venv(session, "mini-swe-agent", MINI_SWE_AGENT)
    swebench = _venv(session, "swebench", SWEBENCH)
    harbor = _venv(session, "harbor", HARBOR[0], python=HARBOR[1])
    search = [str(prefix / "node_modules" / ".bin"), session.bin, os.environ.get("PATH", "")]
    return {
        "PATH": os.pathsep.join(search),
        "BUGBOUT_MINI": str(mini / "bin" / "mini"),
        "BUGBOUT_SWEBENCH_PYTHON": str(swebench / "bin" / "python"),
        "BUGBOUT_HARBOR_PYTHON": str(harbor / "bin" / "python"),
    }


def _venv(session: nox.Session, name: str, requirement: str, python: str = PYTHON) -> Path:
    """A virtual environment of its own in :data:`TOOLS`, on ``python``, holding
    ``requirement``."""
    folder = TOOLS / name
    if _stale(folder, (requirement,)):
        session.log(f"installing {requirement} into {folder}")
        interpreter = _interpreter(python)
        session.run(
            "uv", "venv", "--quiet", "--allow-existing", "--python", interpreter, str(folder)
        )  # fmt: skip
        python = str(folder / "bin" / "python")
        session.run("uv", "pip", "install", "--quiet", "--python", python, requirement)
        _installed(folder, (requirement,))
    return folder


def _interpreter(version: str) -> str:
    """Python ``version`` as found on this machine: among pyenv's versions (which uv does
    not look through; its shims answer only for the selected one), else on PATH, else
    the version for uv to find or download."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    installed = sorted(pyenv.glob(f"{version}.*/bin/python{version}"))
    found = shutil.which(f"python{version}")
    if installed:
        return str(installed[-1])
    return found if found and "/shims/" not in found else version


def _stale(folder: Path, packages: tuple[str, ...]) -> bool:
    """Whether ``folder`` lacks exactly ``packages`` (installed by :func:`_installed`)."""
    stamp = folder / "bugbout-installed.txt"
    return not stamp.is_file() or stamp.read_text() != "\n".join(packages)


def _installed(folder: Path, packages: tuple[str, ...]) -> None:
    """Remember that ``packages`` are in ``folder``."""
    (folder / "bugbout-installed.txt").write_text("\n".join(packages))


def _spread(args: list[str]) -> list[str]:
    """``args`` with pytest-xdist's workers, one per core, unless they say how many."""
    chosen = any(
        arg in ("-n", "--numprocesses", "--dist")
        or arg.startswith(("-n", "--numprocesses=", "--dist="))
        for arg in args
    )
    return args if chosen else ["-n", "auto", "--dist", "worksteal", *args]


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """Check style and common mistakes with ruff, and the layers' import contracts."""
    session.install("ruff", "import-linter", "-e", ".")
    session.run("ruff", "check", "src", "tests", "benchmarks", "examples", "noxfile.py")
    session.run("ruff", "format", "--check", "src", "tests", "benchmarks", "examples", "noxfile.py")
    session.run("lint-imports")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """Type-check the package with mypy (strict on the core, the built-in plugins and the
    plugin templates)."""
    session.install("-e", ".[dev]")
    session.run("mypy")


@nox.session(python=PYTHON, default=False)
def e2e(session: nox.Session) -> None:
    """The real agent CLIs (codex, claude, gemini, mini) end to end, on a scripted server.

    No quota is spent: each CLI talks to bugbout's scripted model server on 127.0.0.1.
    The pinned CLIs are installed as the tests session installs them."""
    session.install("-e", ".[dev]", env=COMPILED)
    env = _agents(session)
    session.run("pytest", "-rs", "-k", E2E_SELECTION, *E2E_TESTS, *session.posargs, env=env)


@nox.session(python=PYTHON, default=False)
def bench(session: nox.Session) -> None:
    """Every benchmark (benchmarks/bench_*.py), as ratios to a baseline run beside it.

    Arguments after -- go to each benchmark."""
    session.install("-e", ".", env=COMPILED)
    for benchmark in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        session.run("python", str(benchmark.relative_to(ROOT)), *session.posargs)


@nox.session(python=PYTHON, default=False)
def chaos(session: nox.Session) -> None:
    """Bouts killed with kill -9 at random points: `nox -s chaos -- --kills 100 --seed 7`.

    Needs bubblewrap. After every kill and every completed bout it checks that every
    record reads, that no finished attempt was lost or run again, that no agent process
    is left, and that the report equals an uninterrupted run's (tests/adversarial/chaos.py).
    Arguments after -- go to it: --kills N (default 100), --seed N, --workdir DIR."""
    # pytest: the bouts run their tests with this Python
    session.install("-e", ".", "pytest", env=COMPILED)
    session.run("python", "tests/adversarial/chaos.py", *session.posargs)


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """Check the docs offline: plugin pages against the code, every relative link.

    Runs tests/test_docs.py, and checks that every relative link in README.md and docs/
    leads to an existing file and heading."""
    session.install("-e", ".", "pytest")
    session.run("pytest", "-q", "tests/test_docs.py", *session.posargs)
    broken = broken_links(ROOT)
    if broken:
        session.error("broken links in the docs:\n  " + "\n  ".join(broken))
    session.log(f"every relative link in {len(markdown_pages(ROOT))} pages resolves")


@nox.session(python=PYTHON, venv_backend="uv", default=False)
def bout(session: nox.Session) -> None:
    """A reproducible bout from uv.lock: `nox -s bout -- demo /tmp/bugbout-demo`.

    Installs exactly the versions locked in uv.lock into a fresh environment: bugbout
    itself and every extra (the sweep launchers; pytest, for tests run with env=interpreter
    as the demo does). Then runs `bugbout` with the arguments after --, in the directory
    nox was started from."""
    session.run_install(
        "uv", "sync", "--locked", "--no-editable", "--all-extras",
        env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location},
        external=True,
    )  # fmt: skip
    with session.chdir(session.invoked_from):
        session.run("bugbout", *(session.posargs or ["--help"]))


# -- the docs' links --------------------------------------------------------------------------

FENCE = re.compile(
    r"^ {0,3}(?P<fence>`{3,}|~{3,})[^\n]*\n.*?^ {0,3}(?P=fence)[`~]*[ \t]*$", re.M | re.S
)
"""A fenced code block: its closing fence is at least as long as the opening one."""
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")


def markdown_pages(root: Path) -> list[Path]:
    """README.md and every page under docs/."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings, as GitHub makes them (``-1`` for repeats)."""
    found: set[str] = set()
    for line in FENCE.sub("", page.read_text(encoding="utf-8")).splitlines():
        if not line.startswith("#"):
            continue
        heading = INLINE_CODE.sub(lambda code: code.group()[1:-1], line.lstrip("#").strip())
        anchor = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        repeat, unique = 0, anchor
        while unique in found:
            repeat += 1
            unique = f"{anchor}-{repeat}"
        found.add(unique)
    return found


def broken_links(root: Path) -> list[str]:
    """Every relative link in the docs that leads nowhere: ``page: target (why)``."""
    broken = []
    for page in markdown_pages(root):
        text = INLINE_CODE.sub("", FENCE.sub("", page.read_text(encoding="utf-8")))
        for match in LINK.finditer(text):
            target = match["target"]
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("//"):
                continue  # a URL: not checked, the check stays offline
            path, _, anchor = target.partition("#")
            where = (page.parent / path).resolve() if path else page
            name = page.relative_to(root)
            if path.startswith("/") or not where.exists():
                broken.append(f"{name}: {target} (no such file)")
            elif anchor and where.suffix == ".md" and anchor not in anchors(where):
                broken.append(f"{name}: {target} (no heading #{anchor})")
    return broken
