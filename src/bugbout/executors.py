"""The stable API for executor plugins: their record, ``hookimpl``, ``Options``, and the
protocol its implementation follows.

An executor plugin imports these names from here; ``bugbout.core`` is private and may
change in any release. Each name is imported the first time it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bugbout.core.contract.exports import lazy_exports

__all__ = [
    "Executor",
    "ExecutorPlugin",
    "NoOptions",
    "Options",
    "PluginError",
    "create_plugin",
    "hookimpl",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Executor": "bugbout.core.plumbing.runtime.executor",
        "ExecutorPlugin": "bugbout.core.contract.types",
        "NoOptions": "bugbout.core.contract.types",
        "Options": "bugbout.core.contract.types",
        "PluginError": "bugbout.core.contract.errors",
        "create_plugin": "bugbout.core.contract.manager",
        "hookimpl": "bugbout.core.contract.hookspecs",
    },
)

if TYPE_CHECKING:
    from bugbout.core.contract.errors import PluginError
    from bugbout.core.contract.hookspecs import hookimpl
    from bugbout.core.contract.manager import create_plugin
    from bugbout.core.contract.types import ExecutorPlugin, NoOptions, Options
    from bugbout.core.plumbing.runtime.executor import Executor
