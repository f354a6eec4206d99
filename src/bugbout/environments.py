"""The stable API for environment plugins: their record, ``hookimpl``, ``Options``, and
the builders' contract, the project's declared dependencies, interpreters, and what the
``uv`` and ``podman`` builders share (running uv, resolving an era).

An environment plugin imports these names from here; ``bugbout.core`` is private and may
change in any release. Each name is imported the first time it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bugbout.core.contract.exports import lazy_exports

__all__ = [
    "BaseImage",
    "Command",
    "Environment",
    "EnvironmentBuilder",
    "EnvironmentFailure",
    "EnvironmentPlugin",
    "EnvironmentRequest",
    "EraCheck",
    "EraInterpreter",
    "EraResolution",
    "Exemption",
    "ManagedPythons",
    "Mount",
    "NoOptions",
    "Options",
    "Podman",
    "PodmanError",
    "PythonDownloads",
    "Resolution",
    "RunSpec",
    "UvCall",
    "UvFailure",
    "UvOptions",
    "build_failure",
    "build_helpers",
    "choose_python",
    "confined_owner",
    "create_plugin",
    "declared_classifiers",
    "declared_dependencies",
    "declared_names",
    "declared_python",
    "declared_test_dependencies",
    "describe",
    "digest",
    "era_tools_date",
    "exclude_newer_date",
    "helpers_of",
    "hookimpl",
    "interpreter_version",
    "locked",
    "metadata_folder",
    "python_path",
    "pythons_directory",
    "raised",
    "run_uv",
    "runner_argv",
    "timed_out",
    "unconverted",
    "uv_binary",
    "uv_error",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "BaseImage": "bugbout.sandbox.podman",
        "Command": "bugbout.core.plumbing.environments.environment",
        "Environment": "bugbout.core.plumbing.environments.environment",
        "EnvironmentBuilder": "bugbout.core.plumbing.environments.environment",
        "EnvironmentFailure": "bugbout.core.contract.errors",
        "EnvironmentPlugin": "bugbout.core.contract.types",
        "EnvironmentRequest": "bugbout.core.plumbing.environments.environment",
        "EraInterpreter": "bugbout.core.plumbing.environments.managed_pythons",
        "EraCheck": "bugbout.core.plumbing.environments.backtrack",
        "EraResolution": "bugbout.core.plumbing.environments.era_resolution",
        "Exemption": "bugbout.core.store.records",
        "ManagedPythons": "bugbout.core.plumbing.environments.managed_pythons",
        "Mount": "bugbout.sandbox.podman",
        "NoOptions": "bugbout.core.contract.types",
        "Options": "bugbout.core.contract.types",
        "Podman": "bugbout.sandbox.podman",
        "PodmanError": "bugbout.sandbox.podman",
        "PythonDownloads": "bugbout.core.plumbing.environments.managed_pythons",
        "Resolution": "bugbout.core.plumbing.environments.uv_resolution",
        "RunSpec": "bugbout.sandbox.podman",
        "UvCall": "bugbout.core.plumbing.environments.uv_resolution",
        "UvFailure": "bugbout.core.plumbing.environments.uv_program",
        "UvOptions": "bugbout.core.plumbing.environments.uv_environment",
        "build_failure": "bugbout.core.plumbing.environments.uv_resolution",
        "build_helpers": "bugbout.core.plumbing.environments.uv_resolution",
        "choose_python": "bugbout.core.plumbing.environments.interpreters",
        "confined_owner": "bugbout.sandbox.identity",
        "create_plugin": "bugbout.core.contract.manager",
        "declared_classifiers": "bugbout.core.plumbing.project.project_metadata",
        "declared_dependencies": "bugbout.core.plumbing.project.project_metadata",
        "declared_names": "bugbout.core.plumbing.project.project_metadata",
        "declared_python": "bugbout.core.plumbing.project.project_metadata",
        "declared_test_dependencies": "bugbout.core.plumbing.project.project_metadata",
        "describe": "bugbout.core.plumbing.environments.uv_environment",
        "digest": "bugbout.core.store.records",
        "era_tools_date": "bugbout.core.plumbing.environments.era_resolution",
        "exclude_newer_date": "bugbout.core.plumbing.environments.era_resolution",
        "helpers_of": "bugbout.core.plumbing.environments.uv_resolution",
        "hookimpl": "bugbout.core.contract.hookspecs",
        "interpreter_version": "bugbout.core.plumbing.environments.interpreters",
        "locked": "bugbout.sandbox.locking",
        "metadata_folder": "bugbout.core.plumbing.project.dist_info",
        "python_path": "bugbout.core.plumbing.environments.interpreters",
        "pythons_directory": "bugbout.core.plumbing.environments.managed_pythons",
        "raised": "bugbout.core.plumbing.environments.uv_resolution",
        "run_uv": "bugbout.core.plumbing.environments.uv_program",
        "runner_argv": "bugbout.sandbox.podman",
        "timed_out": "bugbout.core.plumbing.environments.uv_resolution",
        "unconverted": "bugbout.core.plumbing.environments.unconverted",
        "uv_binary": "bugbout.core.plumbing.environments.uv_program",
        "uv_error": "bugbout.core.plumbing.environments.uv_program",
    },
)

if TYPE_CHECKING:
    from bugbout.core.contract.errors import EnvironmentFailure
    from bugbout.core.contract.hookspecs import hookimpl
    from bugbout.core.contract.manager import create_plugin
    from bugbout.core.contract.types import EnvironmentPlugin, NoOptions, Options
    from bugbout.core.plumbing.environments.backtrack import EraCheck
    from bugbout.core.plumbing.environments.environment import (
        Command,
        Environment,
        EnvironmentBuilder,
        EnvironmentRequest,
    )
    from bugbout.core.plumbing.environments.era_resolution import (
        EraResolution,
        era_tools_date,
        exclude_newer_date,
    )
    from bugbout.core.plumbing.environments.interpreters import (
        choose_python,
        interpreter_version,
        python_path,
    )
    from bugbout.core.plumbing.environments.managed_pythons import (
        EraInterpreter,
        ManagedPythons,
        PythonDownloads,
        pythons_directory,
    )
    from bugbout.core.plumbing.environments.unconverted import unconverted
    from bugbout.core.plumbing.environments.uv_environment import UvOptions, describe
    from bugbout.core.plumbing.environments.uv_program import UvFailure, run_uv, uv_binary, uv_error
    from bugbout.core.plumbing.environments.uv_resolution import (
        Resolution,
        UvCall,
        build_failure,
        build_helpers,
        helpers_of,
        raised,
        timed_out,
    )
    from bugbout.core.plumbing.project.dist_info import metadata_folder
    from bugbout.core.plumbing.project.project_metadata import (
        declared_classifiers,
        declared_dependencies,
        declared_names,
        declared_python,
        declared_test_dependencies,
    )
    from bugbout.core.store.records import Exemption, digest
    from bugbout.sandbox.identity import confined_owner
    from bugbout.sandbox.locking import locked
    from bugbout.sandbox.podman import BaseImage, Mount, Podman, PodmanError, RunSpec, runner_argv
