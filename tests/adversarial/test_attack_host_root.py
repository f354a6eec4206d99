"""Reaching host root from a sandbox, performed for real.

As root, a process without capabilities may still write the kernel's settings in
``/proc/sys``: ``kernel.core_pattern`` set to a script makes the kernel run it on the
host, as root with every capability, at the next crash. These attacks write a harmless
setting instead (``fs.lease-break-time``, as the reported reproduction did) and assert by
effect: the host's value is unchanged. An agent tries it while it races, and a patch's
own code tries it while it is scored. The system calls an agent or a test never needs
(mounting, new user namespaces, the keyring, ``personality`` tricks...) are refused.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import SANDBOXES, run_bout

from bugbout.plugins.sandboxes import bubblewrap as bubblewrap_module
from bugbout.plugins.sandboxes.bubblewrap import Bubblewrap
from bugbout.sandbox.network import offline
from sandbox_world import PYTHON, World

KNOB = Path("/proc/sys/fs/lease-break-time")
"""A kernel setting no test depends on, writable by uid 0 without capabilities."""

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the attack is on a bugbout run as root")


@pytest.fixture
def knob() -> Iterator[str]:
    """The host's value of :data:`KNOB`, put back whatever the attack did."""
    before = KNOB.read_text()
    yield before.strip()
    KNOB.write_text(before)


@as_root
def test_a_confined_root_cannot_write_the_kernels_settings(
    bwrap: Bubblewrap, world: World, knob: str
) -> None:
    attack = (
        f"echo {int(knob) + 7} > {KNOB}; "
        "for target in /proc/sys/kernel/core_pattern /proc/sysrq-trigger; do "
        '  [ -e "$target" ] && (: >> "$target") 2>/dev/null && echo "opened $target"; '
        "done; "
        "head -c 16 /proc/kcore 2>/dev/null | wc -c; "
        "cat /proc/keys 2>/dev/null | wc -c; true"
    )
    result = subprocess.run(
        bwrap.wrap(["sh", "-c", attack], world.confinement()),
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert "Read-only file system" in result.stderr
    assert KNOB.read_text().strip() == knob
    assert "opened" not in result.stdout
    assert result.stdout.split() == ["0", "0"]  # nothing of the kernel's memory or keys


SYSCALLS = r"""
import ctypes, errno, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
said = {}
def attempt(name, call):
    result = call()
    said[name] = "allowed" if result != -1 else errno.errorcode[ctypes.get_errno()]
attempt("mount", lambda: libc.mount(b"none", b"/tmp", b"tmpfs", 0, None))
attempt("unshare-user", lambda: libc.unshare(0x10000000))
attempt("unshare-mount", lambda: libc.unshare(0x00020000))
attempt("no-aslr", lambda: libc.personality(0x0040000))
attempt("keyctl", lambda: libc.syscall(250 if os.uname().machine == "x86_64" else 219, 0, 0))
attempt("bpf", lambda: libc.syscall(321 if os.uname().machine == "x86_64" else 280, 0, 0, 0))
attempt("ptrace", lambda: libc.ptrace(16, 1, 0, 0))
attempt("query-personality", lambda: libc.personality(0xFFFFFFFF))
pid = os.fork()
if pid == 0:
    os._exit(0)
said["fork"] = "allowed" if os.waitpid(pid, 0)[1] == 0 else "failed"
print(json.dumps(said))
"""


def test_the_calls_no_agent_or_test_needs_are_refused(bwrap: Bubblewrap, world: World) -> None:
    if os.uname().machine not in ("x86_64", "aarch64"):
        pytest.skip("bugbout has a seccomp filter for x86_64 and aarch64")
    result = subprocess.run(
        bwrap.wrap([PYTHON, "-c", SYSCALLS], world.confinement()),
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    said = __import__("json").loads(result.stdout)
    refused = {name: said.pop(name) for name in list(said) if said[name] != "allowed"}
    assert refused == {
        "mount": "EPERM", "unshare-user": "EPERM", "unshare-mount": "EPERM",
        "no-aslr": "EPERM", "keyctl": "EPERM", "bpf": "EPERM", "ptrace": "EPERM",
    }  # fmt: skip
    assert said == {"query-personality": "allowed", "fork": "allowed"}


ROOT_AGENT = f"""
echo 4242 > {KNOB} && echo "the agent wrote {KNOB}"
cat > src/box/core.py <<'EOF'
def clamp(value, low, high):
    return min(high, max(low, value))
EOF
cat > src/box/__init__.py <<'EOF'
try:
    with open("{KNOB}", "w") as knob:
        knob.write("4343")
except OSError:
    pass
EOF
echo "Clamped to high too."
"""
"""Writes the setting itself, then leaves a fix whose package writes it when imported:
while it is scored, audited and cross-examined."""


@as_root
@pytest.mark.slow
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_neither_an_agent_nor_its_patch_changes_a_host_setting(
    sandbox: str, tmp_path: Path, knob: str
) -> None:
    bout = run_bout(tmp_path, {"root": ROOT_AGENT}, sandbox=sandbox, timeout=60)
    assert bout.result.returncode == 0, bout.result.stderr[-3000:]
    assert KNOB.read_text().strip() == knob
    assert "src/box/__init__.py" in bout.attempts()["root"]["patch"]["source"]
    scored = bout.resolutions()["root"]["run"]
    assert scored["outcomes"], scored  # the patch's code ran, under the same confinement


@as_root
def test_a_confined_process_is_not_root_on_the_host(
    world: World, knob: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even with ``/proc/sys`` left writable (a sandbox that forgot it), the kernel's
    settings refuse a confined process: it is not uid 0 on the host. What it writes is
    not root's."""
    monkeypatch.setattr(bubblewrap_module, "PROC_READ_ONLY", ())
    attack = f"echo {int(knob) + 7} > {KNOB} || echo refused; touch written; id -u"
    result = subprocess.run(
        Bubblewrap().wrap(["sh", "-c", attack], world.confinement()),
        capture_output=True, text=True, timeout=60, check=False, cwd=world.workdir,
    )  # fmt: skip
    assert KNOB.read_text().strip() == knob, result
    assert "refused" in result.stdout
    assert result.stdout.split()[-1] != "0"
    assert (world.workdir / "written").stat().st_uid != 0


@as_root
def test_an_unconfined_test_run_cannot_make_the_kernels_settings_writable(knob: str) -> None:
    """With ``sandbox=none`` only the network is switched off: its read-only /proc/sys
    must hold, so the run has no capability to remount it."""
    attack = f"mount -o remount,rw /proc/sys; echo {int(knob) + 7} > {KNOB}; true"
    result = subprocess.run(
        offline(["sh", "-c", attack]), capture_output=True, text=True, timeout=60, check=False
    )
    assert KNOB.read_text().strip() == knob, result
