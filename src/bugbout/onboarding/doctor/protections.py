"""What holds inside the chosen sandbox against a process that tries to reach host root:
asked of a real sandboxed process, so it reads the same for any sandbox plugin.

A uid 0 without capabilities may still write the kernel's settings in ``/proc/sys``
(``kernel.core_pattern`` makes the kernel run a program of its choosing as root on the
host) and ``/proc/sysrq-trigger``; a seccomp filter refuses the calls no agent or test
needs; a user namespace makes uid 0 inside another user outside. The probe opens each
knob for appending and closes it without writing a byte, which changes nothing.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from bugbout.core.contract.errors import BugboutError
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings
from bugbout.core.contract.types import SandboxPlugin
from bugbout.onboarding.doctor.check import Check
from bugbout.sandbox.confinement import Confinement

PROBE_TIMEOUT = 30.0
KNOBS = ("/proc/sys/kernel/core_pattern", "/proc/sysrq-trigger")
"""Host-wide settings a process must not be able to open for writing."""
PROBE = """
for knob in "$@"; do
  if [ -e "$knob" ] && (: >> "$knob") 2>/dev/null; then echo "writable $knob"; fi
done
sed -n 's/^Seccomp:[[:space:]]*/seccomp /p' /proc/self/status
echo "uid $(id -u)"
head -n 1 /proc/self/uid_map | sed 's/^/map /'
"""
FIX = "run bugbout as an ordinary user, or use sandbox=bubblewrap or sandbox=podman"
ROOT_FIX = (
    "install setpriv (util-linux), with which confined processes run as nobody; or run "
    "bugbout as an ordinary user"
)


def protections_check(settings: BoutSettings, plugins: Plugins) -> Check:
    """Whether confined processes can write the host's kernel settings, whether a seccomp
    filter holds them, and which host user their uid is."""
    name = settings.sandbox.name
    if name == "none":
        return Check("protections", True, "none: agents and tests are not confined")
    try:
        sandbox = plugins.create(SandboxPlugin, name, settings.sandbox.options)
        if sandbox.problem() is not None:
            return Check("protections", False, f"{name} does not work (see sandbox)")
        with tempfile.TemporaryDirectory(prefix="bugbout-protections-") as scratch:
            argv = sandbox.wrap(["/bin/sh", "-c", PROBE, "probe", *KNOBS],
                                Confinement(workdir=Path(scratch)))  # fmt: skip
            answer = subprocess.run(
                argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT, check=False,
                stdin=subprocess.DEVNULL,
            )  # fmt: skip
    except (BugboutError, OSError, subprocess.TimeoutExpired) as exc:
        return Check("protections", False, f"{name}: the probe did not run ({exc})", FIX)
    facts = _facts(answer.stdout)
    writable = facts.get("writable", [])
    if answer.returncode != 0 or "uid" not in facts:
        said = (answer.stderr.strip().splitlines() or [f"exit status {answer.returncode}"])[-1]
        return Check("protections", False, f"{name}: the probe failed ({said})", FIX)
    seccomp = facts.get("seccomp", ["0"])[0]
    parts = [
        f"{', '.join(writable)} writable" if writable else "/proc's kernel settings read-only",
        "a seccomp filter" if seccomp == "2" else "no seccomp filter",
        _who(facts),
    ]
    detail = f"{name}: {'; '.join(parts)}"
    if not writable and _host_uid(facts) == 0:
        return Check("protections", False, detail, ROOT_FIX)
    return Check("protections", not writable, detail, FIX)


def _facts(output: str) -> dict[str, list[str]]:
    facts: dict[str, list[str]] = {}
    for line in output.splitlines():
        key, _, value = line.partition(" ")
        facts.setdefault(key, []).append(value.strip())
    return facts


def _host_uid(facts: dict[str, list[str]]) -> int:
    """Which host uid a confined process is, from its uid and its user namespace's map."""
    uid = int(facts["uid"][0])
    mapping = (facts.get("map") or [""])[0].split()
    if len(mapping) == 3 and all(field.isdigit() for field in mapping):
        inside, outside, count = (int(field) for field in mapping)
        if inside <= uid < inside + count:
            return outside + uid - inside
    return uid


def _who(facts: dict[str, list[str]]) -> str:
    """Which host user a confined process is, in words."""
    uid, host = int(facts["uid"][0]), _host_uid(facts)
    if host == 0:
        return f"uid {uid} inside is root on the host"
    return f"uid {uid} inside is uid {host} on the host"
