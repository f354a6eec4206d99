"""Version modules a project's build writes and git does not hold.

Some projects have their build write a module with their version into the package
(vcversioner's ``version_module_paths``, setuptools-scm's ``write_to`` or
``version_file``) and import it from the package (``from jsonschema._version import
__version__``). Their era's checkouts had it, written by ``setup.py develop``; a tree
exported from git does not, and the package cannot even be imported. So an exported
tree gets each such module it lacks, saying the version the tree declares (``0`` when
the build computes it).
"""

from __future__ import annotations

import re
from pathlib import Path

from bugbout.core.plumbing.project.project_metadata import project_version
from bugbout.core.plumbing.trees.git import Git

_DECLARED = re.compile(
    r"""(?:version_module_paths["']?\s*[:=]\s*\[(?P<paths>[^\]]*)\])"""
    r"""|(?:\b(?:write_to|version_file)["']?\s*[:=]\s*["'](?P<path>[^"']+\.py)["'])"""
)
CONFIGURATION = ("setup.py", "setup.cfg", "pyproject.toml")
"""Where a project declares the modules its build writes."""


def export_built(git: Git, rev: str, destination: Path) -> None:
    """Write the tree of ``rev`` into ``destination``, with the version modules its
    build writes (:func:`write_version_modules`)."""
    git.export(rev, destination)
    write_version_modules(destination)


def write_version_modules(tree: Path) -> list[str]:
    """Write into ``tree`` each version module its build writes that it lacks; the paths
    written (relative to ``tree``)."""
    written = []
    for path in declared_version_modules(tree):
        target = tree / path
        if target.exists() or target.is_symlink() or not target.parent.is_dir():
            continue
        if tree.resolve() not in target.parent.resolve().parents and (
            target.parent.resolve() != tree.resolve()
        ):
            continue  # outside the tree
        version = project_version(tree) or "0"
        target.write_text(
            "# written by bugbout, as the project's build wrote it (not in git)\n"
            f"__version__ = version = {version!r}\n"
            f"__version_tuple__ = version_tuple = {tuple(version.split('.'))!r}\n",
            encoding="utf-8",
        )
        written.append(path)
    return written


def declared_version_modules(tree: Path) -> list[str]:
    """The version modules the build of the project in ``tree`` declares it writes."""
    found: list[str] = []
    for name in CONFIGURATION:
        try:
            text = (tree / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for match in _DECLARED.finditer(text):
            if match["path"]:
                found.append(match["path"])
            else:
                found += re.findall(r"""["']([^"']+\.py)["']""", match["paths"] or "")
    return [p for p in dict.fromkeys(found) if not Path(p).is_absolute() and ".." not in p]
