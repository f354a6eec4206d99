"""bugbout's podman, one concern a module, as it works on a Debian 12 host with cgroup v1
("hybrid"), capped ulimits and no container registry (docs/containers.md says why):

- :mod:`~bugbout.sandbox.podman.config`: the ``containers.conf`` and ``storage.conf``
  every podman process bugbout starts reads, and the podman command line with them;
- :mod:`~bugbout.sandbox.podman.service`: ``podman system service`` on a private socket,
  and a podman-py client of it;
- :mod:`~bugbout.sandbox.podman.images`: the base image (no registry) and the images
  built on it, through the service;
- :mod:`~bugbout.sandbox.podman.hostroot`: containers of this machine's own root, which
  need no image (the podman sandbox's);
- :mod:`~bugbout.sandbox.podman.checks`: :class:`Podman`, all of the above, and what
  keeps podman from running containers here;
- :mod:`~bugbout.sandbox.podman.runner`: the one container runner, ``podman run`` in a
  process that starts with ``python -I`` and removes its container however it ends.

Two ways to podman, each where only it serves: podman-py, through the service, for
images; the podman command for each run (only it passes descriptors on, and it needs no
service) and for copying an image from the user's own storage. The modules import only
the standard library when loaded; podman-py is imported when a client is made.

Example::

    podman = Podman(bugbout_home())
    if (problem := podman.problem()) is not None:
        raise SystemExit(problem)
    image = podman.base_image()             # e.g. localhost/bugbout-base:3f0c...
    client = podman.client()                # podman-py, against bugbout's service
    podman.close()
"""

from bugbout.sandbox.podman.checks import Podman, explain
from bugbout.sandbox.podman.config import (
    INSTALL,
    PodmanError,
    containers_conf,
    storage_conf,
)
from bugbout.sandbox.podman.images import BaseImage, apt_mirror, default_cache_dir
from bugbout.sandbox.podman.runner import LABEL, ROLES, Mount, RunSpec, runner_argv

__all__ = [
    "INSTALL",
    "LABEL",
    "ROLES",
    "BaseImage",
    "Mount",
    "Podman",
    "PodmanError",
    "RunSpec",
    "apt_mirror",
    "containers_conf",
    "default_cache_dir",
    "explain",
    "runner_argv",
    "storage_conf",
]
