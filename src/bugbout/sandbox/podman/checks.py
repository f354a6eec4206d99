"""What keeps podman from running containers here, found by running one, and each cause
with its fix in one line: :class:`Podman`, bugbout's podman as a whole."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from bugbout.sandbox.podman.config import INSTALL, PROBE_TIMEOUT, last_line
from bugbout.sandbox.podman.hostroot import host_spec
from bugbout.sandbox.podman.images import PodmanImages
from bugbout.sandbox.podman.runner import runner_argv
from bugbout.sandbox.podman.service import answers


@dataclass
class Podman(PodmanImages):
    """bugbout's podman for one ``BUGBOUT_HOME``: its configuration
    (:class:`~bugbout.sandbox.podman.config.PodmanConfig`), its service
    (:class:`~bugbout.sandbox.podman.service.PodmanService`), its images
    (:class:`~bugbout.sandbox.podman.images.PodmanImages`), and :meth:`problem`."""

    def problem(self, *, base: bool = True) -> str | None:
        """``None`` when podman runs containers here (and, with ``base``, the base image can
        be made); else the cause and its fix, one line."""
        if shutil.which(self.executable) is None:
            return f"podman is not installed: {INSTALL}"
        if self.socket:
            path = Path(self.socket.removeprefix("unix://"))
            if not answers(path):
                return (
                    f"no podman service answers on {path}: start it with `podman system "
                    f"service --time=0 unix://{path}`, or unset environment.socket so bugbout "
                    "starts one"
                )
        if shutil.which("runc") is None:
            return (
                "podman needs runc here (crun refuses cgroup v1 'hybrid' hosts, even with "
                "--cgroups=disabled): apt-get install -y runc"
            )
        if shutil.which("conmon") is None:
            return "podman needs conmon: apt-get install -y conmon"
        if self.driver == "overlay" and not _kernel_has("overlay"):
            return (
                "the kernel has no overlay filesystem for podman's storage: load it "
                "(modprobe overlay), or set environment.driver=vfs (slow: it copies the "
                "image per run)"
            )
        if base and (cause := self.base_problem()) is not None:
            return cause
        return self._run_problem()

    def _run_problem(self) -> str | None:
        """Exit 0 in a real container (this machine's root read-only, no image needed)
        and explain a failure."""
        program = shutil.which(self.executable) or self.executable
        argv = ["/bin/sh", "-c", "exit 0"]  # the caller's PATH may not lead to it
        spec = host_spec(self, program, argv, Path("/"), {}, role="probe", init=False)
        try:
            result = subprocess.run(
                runner_argv(spec),
                capture_output=True,
                text=True,
                timeout=PROBE_TIMEOUT,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            return f"podman did not run a container within {PROBE_TIMEOUT:.0f} s"
        finally:
            if self._service is None:
                self.release_storage()
        if result.returncode == 0:
            return None
        return explain(result.stderr, self.config_dir)


def explain(stderr: str, config_dir: Path) -> str:
    """What a failed ``podman run`` means, and the fix, as one line."""
    text = stderr.lower()
    last = last_line(stderr)
    if "hybrid mode" in text or ("crun" in text and "cgroup" in text):
        return (
            f"podman's runtime crun refuses this cgroup v1 'hybrid' host ({last}): install "
            f"runc (apt-get install -y runc); bugbout selects it in {config_dir}/containers.conf"
        )
    if "rlimit" in text:
        return (
            f"podman cannot raise a ulimit without CAP_SYS_RESOURCE ({last}): keep nofile at "
            f"or below `ulimit -Hn` and nproc at or below 32768 in {config_dir}/containers.conf"
        )
    if "systemd" in text or "cgroup" in text:
        return (
            f"podman cannot manage this host's cgroups ({last}): use cgroup_manager = "
            f'"cgroupfs" as {config_dir}/containers.conf does, and runc as the runtime'
        )
    if "pivot_root" in text:
        return f"runc cannot pivot_root into the container ({last}): use a real root filesystem"
    if any(word in text for word in ("overlay", "graphdriver", "storage", "mount")):
        return (
            f"podman's storage does not work here ({last}): check "
            f"{config_dir}/storage.conf, or set environment.driver=vfs (slow)"
        )
    return f"podman cannot run a container: {last} (configuration: {config_dir})"


def _kernel_has(filesystem: str) -> bool:
    try:
        listed = Path("/proc/filesystems").read_text(encoding="utf-8")
    except OSError:
        return True
    return any(line.split()[-1:] == [filesystem] for line in listed.splitlines())
