"""The stable API for sandbox plugins: their record, ``hookimpl``, ``Options``, and the
confinement it is given, the layering of its paths, the system-call filter and podman's
containers.

A sandbox plugin imports these names from here; ``bugbout.core`` is private and may change
in any release. Each name is imported the first time it is used.

``bugbout_home`` is named like a hook: import it inside a function, never at the top of
a plugin module, where pluggy would take it for one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bugbout.core.contract.exports import lazy_exports

__all__ = [
    "INSTALL",
    "MOUNT_MASKED",
    "MOUNT_READABLE",
    "MOUNT_WRITABLE",
    "Access",
    "Confinement",
    "Layer",
    "NoOptions",
    "Options",
    "PluginError",
    "Podman",
    "Sandbox",
    "SandboxPlugin",
    "bugbout_home",
    "closed_folders",
    "confined_owner",
    "confined_view",
    "create_plugin",
    "explain",
    "hand_over",
    "hookimpl",
    "host_spec",
    "inside",
    "layers",
    "resolve",
    "runner_argv",
    "seccomp_program",
    "setpriv",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Access": "bugbout.sandbox.layering",
        "Confinement": "bugbout.sandbox.confinement",
        "INSTALL": "bugbout.sandbox.podman",
        "Layer": "bugbout.sandbox.layering",
        "MOUNT_MASKED": "bugbout.sandbox.podman.runner:MASKED",
        "MOUNT_READABLE": "bugbout.sandbox.podman.runner:READABLE",
        "MOUNT_WRITABLE": "bugbout.sandbox.podman.runner:WRITABLE",
        "NoOptions": "bugbout.core.contract.types",
        "Options": "bugbout.core.contract.types",
        "PluginError": "bugbout.core.contract.errors",
        "Podman": "bugbout.sandbox.podman",
        "Sandbox": "bugbout.sandbox.confinement",
        "SandboxPlugin": "bugbout.core.contract.types",
        "bugbout_home": "bugbout.core.plumbing.runtime.home",
        "closed_folders": "bugbout.sandbox.identity",
        "confined_owner": "bugbout.sandbox.identity",
        "confined_view": "bugbout.sandbox.identity",
        "create_plugin": "bugbout.core.contract.manager",
        "explain": "bugbout.sandbox.podman",
        "hand_over": "bugbout.sandbox.identity",
        "hookimpl": "bugbout.core.contract.hookspecs",
        "host_spec": "bugbout.sandbox.podman.hostroot",
        "inside": "bugbout.sandbox.layering",
        "layers": "bugbout.sandbox.layering",
        "resolve": "bugbout.sandbox.layering",
        "runner_argv": "bugbout.sandbox.podman.runner",
        "seccomp_program": "bugbout.sandbox.seccomp",
        "setpriv": "bugbout.sandbox.identity",
    },
)

if TYPE_CHECKING:
    from bugbout.core.contract.errors import PluginError
    from bugbout.core.contract.hookspecs import hookimpl
    from bugbout.core.contract.manager import create_plugin
    from bugbout.core.contract.types import NoOptions, Options, SandboxPlugin
    from bugbout.core.plumbing.runtime.home import bugbout_home
    from bugbout.sandbox.confinement import Confinement, Sandbox
    from bugbout.sandbox.identity import (
        closed_folders,
        confined_owner,
        confined_view,
        hand_over,
        setpriv,
    )
    from bugbout.sandbox.layering import Access, Layer, inside, layers, resolve
    from bugbout.sandbox.podman import INSTALL, Podman, explain
    from bugbout.sandbox.podman.hostroot import host_spec
    from bugbout.sandbox.podman.runner import (
        MASKED as MOUNT_MASKED,
    )
    from bugbout.sandbox.podman.runner import (
        READABLE as MOUNT_READABLE,
    )
    from bugbout.sandbox.podman.runner import (
        WRITABLE as MOUNT_WRITABLE,
    )
    from bugbout.sandbox.podman.runner import (
        runner_argv,
    )
    from bugbout.sandbox.seccomp import seccomp_program
