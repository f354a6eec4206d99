"""The guard: real commands under it, each going past one limit (or keeping to them),
under both guards: guard.py and guard.c compiled."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import components
from bugbout.core.contract.settings import LimitsSettings
from bugbout.core.plumbing.confinement.limits import GUARD, Guard, guard_program
from bugbout.sandbox.guard_build import compiled_guard

SMALL = LimitsSettings(memory=150_000_000, processes=20, disk=30_000_000, files=200)


@pytest.fixture(scope="module", params=["python", "compiled"])
def program(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Path | None:
    """The guard under test: guard.py (``None``), or guard.c compiled for this module."""
    if request.param == "python":
        return None
    if not components.FOUND["compiler"]():
        components.missing("compiler", "no C compiler (cc, or CC) to compile the guard")
    return compiled_guard(tmp_path_factory.mktemp("guard"))


def run(
    tmp_path: Path, program: Path | None, code: str, limits: LimitsSettings = SMALL
) -> tuple[int, str | None]:
    """``code`` run by Python under a guard watching ``tmp_path/work``: its exit status
    and the breach."""
    ended = guarded(tmp_path, program, [sys.executable, "-c", code], limits)
    return ended.returncode, Guard(limits, (), tmp_path / "limits.json").breach()


def guarded(
    tmp_path: Path, program: Path | None, argv: list[str], limits: LimitsSettings = SMALL
) -> subprocess.CompletedProcess[str]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    guard = Guard(limits, (work,), tmp_path / "limits.json", program)
    return subprocess.run(
        guard.wrap(argv), cwd=work, timeout=60, check=False, start_new_session=True,
        capture_output=True, text=True,
    )  # fmt: skip


def test_a_command_within_its_limits_keeps_its_exit_status(
    tmp_path: Path, program: Path | None
) -> None:
    assert run(tmp_path, program, "import sys; sys.exit(3)") == (3, None)
    assert run(tmp_path, program, "import os, signal; os.kill(os.getpid(), signal.SIGTERM)") == (
        143,
        None,
    )


def test_the_command_gets_default_signal_actions(tmp_path: Path, program: Path | None) -> None:
    """Python, which runs the guard, ignores SIGPIPE and SIGXFSZ; the command must not."""
    ended = guarded(tmp_path, program, ["sh", "-c", "grep SigIgn /proc/self/status"])
    ignored = int(ended.stdout.split()[1], 16)
    assert ignored & (1 << (signal.SIGPIPE - 1) | 1 << (signal.SIGXFSZ - 1)) == 0


def test_memory_of_the_whole_tree_is_limited(tmp_path: Path, program: Path | None) -> None:
    child = "import time; block = b'x' * 60_000_000; time.sleep(60)"
    code = (
        "import subprocess, sys, time\n"
        f"for _ in range(3): subprocess.Popen([sys.executable, '-c', {child!r}])\n"
        "time.sleep(60)\n"
    )
    started = time.monotonic()
    status, breach = run(tmp_path, program, code)
    assert status == 137
    assert breach is not None
    assert breach.startswith("memory limit exceeded (")
    assert breach.endswith("> 150 MB limit; setting limits.memory)")
    assert time.monotonic() - started < 20


def test_processes_are_counted_even_when_orphaned_and_all_are_killed(
    tmp_path: Path, program: Path | None
) -> None:
    mark = uuid.uuid4().hex
    code = (
        "import os, subprocess\n"
        f"os.environ['MARK'] = {mark!r}\n"
        "for _ in range(40):\n"  # double-forked: their parent exits at once
        "    subprocess.Popen(['sh', '-c', 'sleep 60 &'], start_new_session=True).wait()\n"
        "import time; time.sleep(60)\n"
    )
    status, breach = run(tmp_path, program, code)
    assert status == 137
    assert breach is not None
    assert breach.startswith("too many processes (")
    assert breach.endswith("> 20 limit; setting limits.processes)")
    assert not _marked(mark)


def test_leftover_processes_are_killed_when_the_command_ends(
    tmp_path: Path, program: Path | None
) -> None:
    mark = uuid.uuid4().hex
    code = (
        "import os, subprocess\n"
        f"os.environ['MARK'] = {mark!r}\n"
        "subprocess.Popen(['sh', '-c', 'sleep 60 &'], start_new_session=True).wait()\n"
    )
    assert run(tmp_path, program, code) == (0, None)
    assert not _marked(mark)


def test_files_added_to_the_watched_folders_are_limited(
    tmp_path: Path, program: Path | None
) -> None:
    code = "import pathlib\nfor n in range(300): pathlib.Path(f'f{n}').touch()\n"
    assert run(tmp_path, program, code) == (
        137,
        "too many files (201 > 200 limit; setting limits.files)",
    )


def test_bytes_added_to_the_watched_folders_are_limited(
    tmp_path: Path, program: Path | None
) -> None:
    code = (
        "import time\n"
        "for n in range(10):\n"
        "    open(f'part{n}', 'wb').write(b'x' * 5_000_000)\n"
        "time.sleep(5)\n"
    )
    status, breach = run(tmp_path, program, code)
    assert status == 137
    assert breach is not None
    assert breach.startswith("disk limit exceeded (")
    assert breach.endswith("> 30 MB limit; setting limits.disk)")


def test_no_file_grows_past_the_disk_limit_anywhere(tmp_path: Path, program: Path | None) -> None:
    outside = tmp_path / "outside.bin"  # not watched
    code = f"open({str(outside)!r}, 'wb').write(b'x' * 50_000_000)"
    status, _ = run(tmp_path, program, code)
    assert status == 1  # Python ignores SIGXFSZ: its write fails with EFBIG
    assert outside.stat().st_size == SMALL.disk + 1


BUGBOUT = """
import os, subprocess, sys, threading, time
from pathlib import Path
from bugbout.core.contract.settings import LimitsSettings
from bugbout.core.plumbing.confinement.lifeline import lifeline
from bugbout.core.plumbing.confinement.limits import Guard

work, program, argv = Path(sys.argv[1]), sys.argv[2] or None, sys.argv[3:]
def start():  # from a thread of a pool, which ends at once
    guard = Guard(LimitsSettings(), (work,), work.parent / "limits.json",
                  program and Path(program), lifeline())
    subprocess.Popen(guard.wrap(argv), cwd=work, start_new_session=True, pass_fds=guard.fds)
thread = threading.Thread(target=start)
thread.start()
thread.join()
time.sleep(600)
"""
"""A bugbout that starts a guarded command from a thread, then waits to be killed."""


def test_nothing_guarded_outlives_bugbout_killed(tmp_path: Path, program: Path | None) -> None:
    mark = uuid.uuid4().hex
    (tmp_path / "work").mkdir()
    code = (  # a daemon in a session of its own, ignoring SIGHUP and SIGTERM
        "import os, signal, subprocess, time\n"
        f"os.environ['MARK'] = {mark!r}\n"
        "subprocess.Popen(['sh', '-c', 'trap \"\" HUP TERM; sleep 600 & wait'],"
        " start_new_session=True)\n"
        "time.sleep(600)\n"
    )
    bugbout = subprocess.Popen(
        [sys.executable, "-c", BUGBOUT, str(tmp_path / "work"), str(program or ""),
         sys.executable, "-c", code],
        start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while len(_marked(mark)) < 2:  # the daemon's shell and its sleep
            assert time.monotonic() < deadline and bugbout.poll() is None
            time.sleep(0.05)
        (guard,) = _children(bugbout.pid)
        bugbout.kill()
        bugbout.wait()
        killed = time.monotonic()
        while (_marked(mark) or _alive(guard)) and time.monotonic() < killed + 5:
            time.sleep(0.05)
        assert _marked(mark) == [], "the guarded command outlived bugbout"
        assert not _alive(guard), "the guard outlived bugbout"
    finally:
        if bugbout.poll() is None:
            bugbout.kill()
        for pid in _marked(mark):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_the_command_never_holds_the_lifeline(tmp_path: Path, program: Path | None) -> None:
    read, write = os.pipe()
    try:
        work = tmp_path / "work"
        work.mkdir()
        guard = Guard(SMALL, (work,), tmp_path / "limits.json", program, read)
        ended = subprocess.run(
            guard.wrap(["sh", "-c", f"test -e /proc/self/fd/{read} && echo held || echo not"]),
            cwd=work, capture_output=True, text=True, timeout=60, check=False,
            pass_fds=guard.fds,
        )  # fmt: skip
    finally:
        os.close(read)
        os.close(write)
    assert (ended.returncode, ended.stdout) == (0, "not\n"), ended.stderr


def _children(parent: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, IndexError):
            if (
                entry.name.isdigit()
                and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == parent
            ):
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _marked(mark: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if mark.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_a_watched_folder_inside_another_is_counted_once(
    tmp_path: Path, program: Path | None
) -> None:
    inner = tmp_path / "work" / "state"
    inner.mkdir(parents=True)
    guard = Guard(SMALL, (tmp_path / "work", inner), tmp_path / "limits.json", program)
    code = "import pathlib\nfor n in range(150): pathlib.Path(f'state/f{n}').touch()\n"
    ended = subprocess.run(
        guard.wrap([sys.executable, "-c", code]), cwd=tmp_path / "work", timeout=60,
        check=False,
    )  # fmt: skip
    assert (ended.returncode, guard.breach()) == (0, None)


def test_the_python_guard_imports_only_what_it_needs(tmp_path: Path) -> None:
    """It starts on every attempt: nothing of bugbout, no site-packages, and none of the
    standard library's slow imports (``json`` pulls in ``re``, ``signal`` builds enums)."""
    argv = Guard(SMALL, (), tmp_path / "limits.json").wrap(["true"])
    assert argv[:4] == [sys.executable, "-I", "-S", "-c"]
    code = f"import sys; sys.path.append({str(GUARD.parent)!r}); import guard; print(*sys.modules)"
    loaded = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert "guard" in loaded
    slow = {"json", "re", "enum", "signal", "typing", "bugbout", "site", "contextlib"}
    assert slow.isdisjoint(loaded), sorted(slow & set(loaded))


def test_bad_options_are_refused_in_one_line(tmp_path: Path, program: Path | None) -> None:
    report = tmp_path / "limits.json"
    wrapped = Guard(SMALL, (), report, program).wrap(["true"])
    start = wrapped[: wrapped.index(f"--report={report}")]
    limits = ["--memory=1", "--processes=1", "--disk=1", "--files=1"]
    for options in (
        ["--report=r", *limits, "--nope=1", "--", "true"],
        ["--report=r", *limits, "--memory", "--", "true"],
        ["--report=r", *limits[1:], "--", "true"],
        ["--report=r", *limits, "--disk=many", "--", "true"],
        ["--report=r", *limits, "--"],
        ["--report=r", *limits, "--lifeline=x", "--", "true"],
        ["--report=r", *limits, "--lifeline=999", "--", "true"],  # not open
    ):
        ended = subprocess.run([*start, *options], capture_output=True, text=True, check=False)
        assert ended.returncode == 2, (options, ended.stderr)
        assert ended.stderr.startswith("bugbout guard: ") and ended.stderr.count("\n") == 1


def test_a_command_that_cannot_run_exits_127(tmp_path: Path, program: Path | None) -> None:
    missing = tmp_path / "nowhere"
    ended = guarded(tmp_path, program, [str(missing)])
    assert ended.returncode == 127
    assert ended.stderr == f"bugbout: cannot run {missing}: No such file or directory\n"


def test_a_failed_compile_falls_back_to_guard_py(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CC", "/bin/false")
    home = tmp_path / "home"
    assert guard_program(home) is None
    assert list((home / "guard").iterdir()) == []  # no half-written program left
    assert Guard(SMALL, (), tmp_path / "limits.json").wrap(["true"])[0] == sys.executable
    assert run(tmp_path, guard_program(home), "import sys; sys.exit(3)") == (3, None)


def test_the_guard_is_compiled_once_and_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not components.FOUND["compiler"]():
        components.missing("compiler", "no C compiler (cc, or CC) to compile the guard")
    compiled = guard_program(tmp_path / "home")
    assert compiled is not None
    assert [path.name for path in (tmp_path / "home" / "guard").iterdir()] == [compiled.name]
    assert Guard(SMALL, (), tmp_path / "limits.json", compiled).wrap(["true"])[0] == str(compiled)
    monkeypatch.setenv("CC", "/bin/false")  # found, not compiled again
    assert guard_program(tmp_path / "home") == compiled


def test_bouts_compiling_at_once_each_get_a_whole_guard(tmp_path: Path) -> None:
    if not components.FOUND["compiler"]():
        components.missing("compiler", "no C compiler (cc, or CC) to compile the guard")
    with ThreadPoolExecutor(3) as pool:
        compiled = set(pool.map(compiled_guard, [tmp_path / "guard"] * 3))
    assert len(compiled) == 1
    assert list((tmp_path / "guard").iterdir()) == list(compiled)  # no temporary left
    assert run(tmp_path, compiled.pop(), "import sys; sys.exit(3)") == (3, None)
