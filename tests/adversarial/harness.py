"""The adversarial suite's machinery: real bouts with hostile ``command`` contestants,
and checks of containment by effect (conftest.py gives its fixtures and marks the tests).

:func:`run_bout` races shell-script contestants on a small repository under the real
sandbox, in a ``bugbout run`` subprocess, after planting secrets where an agent must not
reach them: a key in a fake ``HOME``, a file in the repository's ``.git``, a commit after
the fix and the fix itself, a file in the store and in ``BUGBOUT_HOME``, a host file, and
API keys of another vendor in the environment. Each script starts with shell variables
naming every one of those places (what a hostile agent could guess), and runs with a tag
in its environment and on its command line. The returned :class:`Bout` says what came
out: :meth:`Bout.leaks` (where a secret was stored), :meth:`Bout.survivors` (tagged
processes still alive), :attr:`Bout.peak_memory` (bugbout's own peak resident memory),
and the attempts and scores.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import socket
import stat
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from effects import survivors

from bugbout.testing import RepositoryBuilder

PODMAN_STORAGE = "/var/tmp/bugbout-adversarial-podman"
"""Podman's storage for this suite, outside pytest's temporary folders (it holds mounts
pytest could not remove)."""

REPORT_FILES = ("report.html", "report.json", "report.md")
"""The reports a bout writes in its store."""
SECRETS = ("home-key", "git-file", "history", "fix", "store", "bugbout-home", "host-file",
           "anthropic-key", "github-token", "aws-secret")  # fmt: skip
"""Every secret :func:`run_bout` plants; :meth:`Bout.leaks` looks for each."""

BUGGY = "def clamp(value, low, high):\n    return max(low, value)\n"
FIXED = "def clamp(value, low, high):\n    return min(high, max(low, value))  # {nonce}\n"
TESTS = "from box.core import clamp\n\n\ndef test_low():\n    assert clamp(-1, 0, 10) == 0\n"
FIX_TEST = TESTS + "\n\ndef test_high():\n    assert clamp(11, 0, 10) == 10\n"
PEAK_MEMORY = (
    "import atexit, resource, runpy, sys\n"
    "out = sys.argv.pop(1)\n"
    "def peak():\n"
    "    with open(out, 'w') as f:\n"
    "        f.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024))\n"
    "atexit.register(peak)\n"
    "runpy.run_module('bugbout', run_name='__main__', alter_sys=True)\n"
)
"""Runs ``python -m bugbout`` and writes its own peak resident memory (bytes) at exit:
the agents' and tests' memory is not counted."""


SANDBOXES = [
    pytest.param("bubblewrap", id="bubblewrap"),
    pytest.param(
        "podman",
        id="podman",
        marks=[pytest.mark.slow, pytest.mark.requires("podman")],
    ),
]
"""Parametrize an attack over the sandboxes: ``@pytest.mark.parametrize("sandbox",
SANDBOXES)`` or ``params=SANDBOXES`` on a fixture."""


# -- what is planted ------------------------------------------------------------------------


@dataclass(frozen=True)
class Planted:
    """The repository under attack, and every secret planted around it."""

    root: Path
    repo: Path
    home: Path
    """``BUGBOUT_HOME``."""
    fake_home: Path
    """The ``HOME`` bugbout runs with."""
    agents: Path
    secrets: dict[str, str]
    fix: str
    files: tuple[Path, ...]
    """The planted files themselves (not leaks)."""

    def knowledge(self, listener: Listener | None) -> dict[str, str]:
        """What a hostile script is told (its first lines set these shell variables)."""
        known = {
            "REPO": str(self.repo),
            "STORE": str(self.repo / ".bugbout"),
            "BBHOME": str(self.home),
            "FAKE_HOME": str(self.fake_home),
            "HOST_FILE": str(self.root / "host-secret.txt"),
            "AGENTS": str(self.agents),
            "FIX": self.fix,
        }
        if listener is not None:
            known |= {
                "PORT": str(listener.port),
                "ABSTRACT": listener.abstract,
                "HOST_IPS": " ".join(listener.addresses),
            }
        return known


def _nonce(name: str) -> str:
    return f"SECRET-{name}-{uuid.uuid4().hex}"


def plant(root: Path) -> Planted:
    """Build the repository (one bug: ``clamp`` ignores ``high``, fixed by #1) and plant a
    secret in every place an agent must not reach."""
    secrets = {name: _nonce(name) for name in SECRETS}
    builder = RepositoryBuilder(root / "repo")
    builder.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "box"\nrequires-python = ">=3.9"\n',
            "src/box/__init__.py": "",
            "src/box/core.py": BUGGY,
            "tests/test_core.py": TESTS,
        },
    )
    fix = builder.commit(
        "Fix clamp ignoring the upper bound (#1)",
        {"src/box/core.py": FIXED.format(nonce=secrets["fix"]), "tests/test_core.py": FIX_TEST},
    )
    builder.commit("Notes", {"NOTES.md": f"{secrets['history']}\n"})
    builder.git("tag", "-a", "v1", "-m", secrets["history"])
    repo, home, fake_home, agents = (
        root / name for name in ("repo", "bugbout-home", "home", "agents")
    )
    files = {
        repo / ".git" / "planted-note": secrets["git-file"],
        repo / ".bugbout" / "planted.txt": secrets["store"],
        home / "planted.txt": secrets["bugbout-home"],
        fake_home / ".ssh" / "id_rsa": secrets["home-key"],
        root / "host-secret.txt": secrets["host-file"],
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"-----BEGIN-----\n{text}\n-----END-----\n")
    agents.mkdir()
    return Planted(root, repo, home, fake_home, agents, secrets, fix, tuple(files))


# -- a listener outside the sandbox ---------------------------------------------------------


class Listener:
    """TCP and UDP on every interface, and an abstract unix socket, outside the sandbox:
    :attr:`received` lists what reached them."""

    def __init__(self) -> None:
        self.tcp = socket.create_server(("0.0.0.0", 0))
        self.port = self.tcp.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("0.0.0.0", self.port))
        self.addresses = host_addresses()
        self.abstract = f"bugbout-adversarial-{uuid.uuid4().hex}"
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind("\0" + self.abstract)
        self.unix.listen()
        self.received: list[str] = []
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._accept, args=(s,), daemon=True)
            for s in (self.tcp, self.unix)
        ] + [threading.Thread(target=self._datagrams, daemon=True)]

    def __enter__(self) -> Listener:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for sock in (self.tcp, self.udp, self.unix):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self, server: socket.socket) -> None:
        server.settimeout(0.2)
        while not self._stop.is_set():
            try:
                connection, peer = server.accept()
            except (TimeoutError, OSError):
                continue
            with connection:
                connection.settimeout(2)
                with contextlib.suppress(OSError):
                    data = connection.recv(65536)
                self.received.append(f"{server.family.name} from {peer!r}: {data[:200]!r}")

    def _datagrams(self) -> None:
        self.udp.settimeout(0.2)
        while not self._stop.is_set():
            try:
                data, peer = self.udp.recvfrom(65536)
            except (TimeoutError, OSError):
                continue
            self.received.append(f"UDP from {peer!r}: {data[:200]!r}")


def host_addresses() -> list[str]:
    """This machine's IPv4 addresses other than loopback."""
    found = subprocess.run(["hostname", "-I"], capture_output=True, text=True, check=False)
    return [address for address in found.stdout.split() if "." in address]


# -- the bout -------------------------------------------------------------------------------


@dataclass
class Bout:
    """A finished bout: what it stored, printed, left running and cost."""

    planted: Planted
    tag: str
    result: subprocess.CompletedProcess[str]
    peak_memory: int
    """bugbout's own peak resident memory, in bytes."""
    listener: Listener | None = None
    _attempts: dict[str, dict[str, Any]] | None = field(default=None, repr=False)

    @property
    def store(self) -> Path:
        return self.planted.repo / ".bugbout"

    def attempts(self) -> dict[str, dict[str, Any]]:
        """Each contestant's latest attempt record (one task)."""
        if self._attempts is None:
            self._attempts = {
                path.parent.name: json.loads(path.read_text())
                for path in (self.store / "attempts").glob("*/*/*.json")
                if ".round" not in path.name
            }
        return self._attempts

    def resolutions(self) -> dict[str, dict[str, Any]]:
        """Each patch's resolution: its score and the run that scored it (one task)."""
        (task,) = json.loads((self.store / "resolutions.json").read_text()).values()
        return dict(task["patches"])

    def scores(self) -> dict[str, str]:
        """Each patch's score (one task)."""
        return {name: resolution["score"] for name, resolution in self.resolutions().items()}

    def stored_files(self) -> Iterator[Path]:
        """Every file bugbout stored or a report can lead to: the store, and the attempts'
        folders in ``BUGBOUT_HOME`` but their working copies (the agent's own files: a
        copy, or an overlay's upper directory; nor the cached trees, which hold the fix)."""
        for root in (self.store, self.planted.home / "attempts"):
            for directory, folders, names in os.walk(root):
                if root != self.store:
                    folders[:] = [f for f in folders if f not in ("work", "upper")]
                for name in names:
                    path = Path(directory, name)
                    if path not in self.planted.files:
                        yield path

    def leaks(self, secret: str, only: Path | None = None) -> list[str]:
        """Where ``secret`` ended up: stored files (read through links, as a reader of the
        report would, but regular files only), bugbout's own output. ``only`` limits the
        search to one folder or file."""
        needle = secret.encode()
        found = []
        for path in self.stored_files():
            if only is not None and only != path and only not in path.parents:
                continue
            try:
                info = path.stat()
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                with path.open("rb") as handle:
                    if needle in handle.read(64 << 20):
                        found.append(str(path))
        if only is None:
            found += [name for name, text in (("stdout", self.result.stdout),
                      ("stderr", self.result.stderr)) if secret in text]  # fmt: skip
        return found

    def leaks_of(self, name: str) -> list[str]:
        """Where the planted secret ``name`` ended up. The reports show the maintainers'
        fix on each task's page by design, so the fix found there is no leak (a fix an
        agent smuggled out would also be in its attempt's record, which is read)."""
        found = self.leaks(self.planted.secrets[name])
        if name == "fix":
            reports = {str(self.store / report) for report in REPORT_FILES}
            found = [where for where in found if where not in reports]
        return found

    def all_leaks(self) -> dict[str, list[str]]:
        """Every planted secret that was found somewhere, and where."""
        leaks = {name: self.leaks_of(name) for name in self.planted.secrets}
        return {name: where for name, where in leaks.items() if where}

    def survivors(self, grace: float = 5.0) -> list[str]:
        """Processes still alive that an agent started: the tag in their environment or
        command line, or their working directory in this bout's folders."""
        return survivors(self.tag, self.planted.root, grace)


def contestant(planted: Planted, name: str, script: str, tag: str,
               listener: Listener | None) -> dict[str, Any]:  # fmt: skip
    """A ``command`` contestant (vendor ``openai``) running ``script`` with bash, the
    attacker's knowledge set first."""
    header = "".join(
        f"{key}={shlex.quote(value)}\n" for key, value in planted.knowledge(listener).items()
    )
    path = planted.agents / f"{name}.sh"
    path.write_text(f"#!/bin/bash\n{header}TAG={shlex.quote(tag)}\n{script}")
    return {
        "agent": "command",
        "vendor": "openai",
        "command": ["/bin/bash", str(path), tag],
        "env": {"ADVERSARY_TAG": tag},
    }


def run_bout(
    root: Path,
    scripts: Mapping[str, str],
    *,
    sandbox: str = "bubblewrap",
    timeout: float = 20,
    overrides: tuple[str, ...] = (),
    listener: Listener | None = None,
    env: Mapping[str, str] | None = None,
) -> Bout:
    """Race ``scripts`` (contestant name → bash script) at once on a planted repository in
    ``root`` with ``sandbox``, each within ``timeout`` seconds; ``overrides`` go to
    ``bugbout run``."""
    planted = plant(root)
    tag = f"adversary-{uuid.uuid4().hex}"
    config = {
        "defaults": ["base", "_self_"],
        "project": {"source": "src/box", "tests": "tests"},
        "issue-sources": {"github": None, "file": None},
        "run": {"timeout": timeout, "quotas": {"command": max(len(scripts), 1)}},
        "contestants": {
            name: contestant(planted, name, script, tag, listener)
            for name, script in scripts.items()
        },
    }
    (planted.repo / "bugbout.yaml").write_text(json.dumps(config))
    if sandbox == "podman":
        overrides = ("sandbox=podman", f"+sandbox.storage={PODMAN_STORAGE}", *overrides)
    else:
        overrides = (f"sandbox={sandbox}", *overrides)
    peak = root / "peak-memory"
    environment = {
        **{k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))},
        "HOME": str(planted.fake_home),
        "BUGBOUT_HOME": str(planted.home),
        "ANTHROPIC_API_KEY": planted.secrets["anthropic-key"],
        "GITHUB_TOKEN": planted.secrets["github-token"],
        "AWS_SECRET_ACCESS_KEY": planted.secrets["aws-secret"],
        **(env or {}),
    }
    result = subprocess.run(
        [sys.executable, "-c", PEAK_MEMORY, str(peak), "run", "environment=interpreter",
         *overrides],
        cwd=planted.repo, env=environment, capture_output=True, text=True, timeout=1800,
        check=False,
    )  # fmt: skip
    memory = int(peak.read_text()) if peak.exists() else -1
    return Bout(planted, tag, result, memory, listener)
