"""The project's distribution metadata, as installing it would have written it.

bugbout never installs the project under test: its tree goes on ``PYTHONPATH``. Yet code
of many eras asks for its own installed distribution when it is imported
(``__version__ = pkg_resources.get_distribution(__name__).version``,
``importlib.metadata.version("mypkg")``), and its era's checkouts were installed
(``setup.py develop``, ``pip install -e .``). So a tree's run finds a
``NAME-VERSION.dist-info`` that says the name and the version the tree declares (else its
package's ``__version__``, else ``0``), and the fields of its core metadata the tree
declares as literals (``Summary``, ``Author-email``, ``Project-URL``: code that reads its
``__description__`` or ``__email__`` from there), in a folder put on ``PYTHONPATH`` after the tree;
unless the environment holds a release of the project already (another distribution needs
it: hypothesis needs attrs), whose metadata is its era's.
"""

from __future__ import annotations

import ast
import hashlib
import re
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from bugbout.core.plumbing.project.project_metadata import (
    project_name,
    project_version,
    read_setup_cfg,
    read_toml,
    toml_table,
)
from bugbout.core.plumbing.project.setup_py import setup_py_value

UNKNOWN_VERSION = "0"
"""The version of a tree that declares none as a literal (setuptools-scm computes it)."""


def metadata_folder(
    tree: Path, under: Path, sources: Iterable[str] = (), installed: Iterable[str] = ()
) -> Path | None:
    """A folder under ``under`` holding the dist-info of the project in ``tree``, written
    once per name and version; ``None`` when the tree declares no name, or when the
    environment has a release of the project ``installed`` (``name==version``: another
    distribution needs it), whose metadata is its era's.

    The version is the one the tree declares, else the ``__version__`` literal of its
    package (in one of the ``sources`` folders), else :data:`UNKNOWN_VERSION`."""
    name = project_name(tree)
    if name is None or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name.strip()):
        return None
    if canonicalize_name(name) in {canonicalize_name(pin.split("==")[0]) for pin in installed}:
        return None
    version = project_version(tree) or _package_version(tree, sources) or UNKNOWN_VERSION
    stem = f"{re.sub(r'[-_.]+', '_', name.strip())}-{version}"
    fields = [("Name", name.strip()), ("Version", version), *declared_fields(tree)]
    text = "Metadata-Version: 2.1\n" + "".join(f"{key}: {value}\n" for key, value in fields)
    folder = under / f"{stem}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"
    if (folder / f"{stem}.dist-info" / "METADATA").is_file():
        return folder
    under.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{stem}-", dir=under))
    info = scratch / f"{stem}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(text, encoding="utf-8")
    (info / "INSTALLER").write_text("bugbout\n", encoding="utf-8")
    scratch.chmod(0o755)  # mkdtemp's 0700 would hide it from a confined user
    try:
        scratch.rename(folder)
    except OSError:  # another process wrote it first
        if not folder.is_dir():
            raise
        shutil.rmtree(scratch, ignore_errors=True)
    return folder


def declared_fields(tree: Path) -> list[tuple[str, str]]:
    """The core metadata fields besides the name and version that ``tree`` declares as
    literals (``[project]``, else ``setup.cfg``'s ``[metadata]`` or a literal ``setup()``
    keyword), as a build writes them, each on one line."""
    project = toml_table(read_toml(tree / "pyproject.toml"), "project")
    if project:
        people = [p for p in project.get("authors") or [] if isinstance(p, dict)]
        named = [str(p["name"]) for p in people if "email" not in p and "name" in p]
        fields: list[tuple[str, object]] = [
            ("Summary", project.get("description")),
            ("Author", ", ".join(named)),
            ("Author-email", ", ".join(_address(p) for p in people if "email" in p)),
            ("Requires-Python", project.get("requires-python")),
        ]
        urls = toml_table(project, "urls")
        fields += [("Project-URL", f"{label}, {url}") for label, url in urls.items()]
    else:
        cfg = read_setup_cfg(tree / "setup.cfg")
        section = dict(cfg.items("metadata")) if cfg and cfg.has_section("metadata") else {}
        fields = [
            (field, section.get(key) or setup_py_value(tree / "setup.py", key))
            for field, key in (
                ("Summary", "description"),
                ("Home-page", "url"),
                ("Author", "author"),
                ("Author-email", "author_email"),
            )
        ]
    return [
        (field, " ".join(value.split()))
        for field, value in fields
        if isinstance(value, str) and value.strip()
    ]


def _address(person: dict[str, object]) -> str:
    """An author of ``[project]`` as core metadata writes one with an email."""
    return f"{person['name']} <{person['email']}>" if person.get("name") else str(person["email"])


def _package_version(tree: Path, sources: Iterable[str]) -> str | None:
    """The literal ``__version__`` of the package in ``tree`` (``attr/__init__.py``)."""
    for source in sources:
        try:
            module = ast.parse((tree / source / "__init__.py").read_bytes())
        except (OSError, SyntaxError, ValueError):
            continue
        for node in module.body:
            if (
                isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                try:
                    return str(Version(node.value.value))
                except InvalidVersion:
                    return None
    return None
