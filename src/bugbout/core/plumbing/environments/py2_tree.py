"""Python 2 trees that reached Python 3 through ``2to3``: the copy their tests run on.

Before about 2016 a project could keep its code in Python 2 and declare ``use_2to3`` in
``setup.py`` (or ``setup.cfg``), or build with distutils' ``build_py_2to3``: the package,
and the tests, were converted with lib2to3 when built for Python 3. Run as they are
under Python 3, such trees fail to import. So every test run of a tree that declares
either runs on a copy converted as that build did: lib2to3's own fixers, plus the fixer
packages of ``use_2to3_fixers``, less the fixers of ``use_2to3_exclude_fixers``, over
every ``.py`` file of the tree. The conversion runs in the test confinement (a project's
fixer package is its code), with bugbout's interpreter (lib2to3 ships with Python up to
3.12), and is cached by the tree's content in ``<BUGBOUT_HOME>/2to3``: reruns of one tree
convert it once. Each run gets its own copy of the converted tree, beside the tree it
was asked to run on.

An agent's ``run-tests`` script does the same on each call (:func:`conversion_lines`): its
working tree is copied, the copy converted and tested, then removed; the working tree is
never converted.
"""

from __future__ import annotations

import configparser
import contextlib
import hashlib
import importlib.util
import json
import os
import shlex
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bugbout.core.contract.errors import EnvironmentFailure
from bugbout.core.plumbing.confinement.confine import Confine
from bugbout.core.plumbing.confinement.process import run_script
from bugbout.core.plumbing.project.setup_py import setup_py_setting, setup_py_uses
from bugbout.core.plumbing.trees.checkout import copy_tree, remove_tree
from bugbout.core.plumbing.trees.testtree import TestTree
from bugbout.sandbox.locking import locked

TIMEOUT = 600.0
"""Seconds converting one tree may take."""
OUTPUT_LIMIT = 1_000_000
_CONVERT = """
import json, os, sys
from lib2to3 import refactor
spec = json.loads(sys.argv[1])
sys.path.insert(0, os.getcwd())
names = refactor.get_fixers_from_package("lib2to3.fixes")
for package in spec["fixers"]:
    names += refactor.get_fixers_from_package(package)
excluded = set(spec["excluded"])
names = [n for n in names if n not in excluded and n.rsplit(".", 1)[-1] not in excluded]
tool = refactor.RefactoringTool(names)
left = 0
for root, folders, files in os.walk("."):
    folders.sort()
    for name in sorted(files):
        path = os.path.join(root, name)
        if name.endswith(".py") and not os.path.islink(path):
            try:
                tool.refactor_file(path, write=True)
            except Exception:
                left += 1
print(f"{left} files left as they were (2to3 could not parse them)")
"""


@dataclass(frozen=True)
class Conversion:
    """How a tree's build ran ``2to3``: fixer packages added, fixers left out."""

    fixers: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()


def declared_conversion(tree: Path | TestTree) -> Conversion | None:
    """How ``tree``'s ``setup.py`` or ``setup.cfg`` has it converted by ``2to3``
    (``use_2to3``, or distutils' ``build_py_2to3`` command); ``None`` when it does not."""
    setup_py = _file(tree, "setup.py")
    if setup_py.is_file() and setup_py_setting(setup_py, "use_2to3") is True:
        return Conversion(
            _names(setup_py_setting(setup_py, "use_2to3_fixers")),
            _names(setup_py_setting(setup_py, "use_2to3_exclude_fixers")),
        )
    if setup_py.is_file() and setup_py_uses(setup_py, "build_py_2to3"):
        return Conversion()  # distutils' command: lib2to3's fixers, all of them
    options = _setup_cfg_options(_file(tree, "setup.cfg"))
    if options.get("use_2to3", "").strip().lower() in ("true", "1", "yes", "on"):
        return Conversion(
            _names(options.get("use_2to3_fixers", "").replace(",", " ").split()),
            _names(options.get("use_2to3_exclude_fixers", "").replace(",", " ").split()),
        )
    return None


@contextlib.contextmanager
def converted(tree: Path | TestTree, confine: Confine) -> Iterator[Path | None]:
    """A fresh copy of ``tree`` converted by ``2to3`` when it declares ``use_2to3``
    (removed afterwards); ``None`` when it does not. An
    :class:`~bugbout.core.contract.errors.EnvironmentFailure` when it cannot be converted."""
    conversion = declared_conversion(tree)
    if conversion is None:
        yield None
        return
    if importlib.util.find_spec("lib2to3") is None:
        raise EnvironmentFailure(
            "this fix's code reaches Python 3 through 2to3 (use_2to3 in setup.py), which "
            "needs lib2to3: run bugbout on Python 3.12 or older for this era"
        )
    if isinstance(tree, TestTree):
        tree.materialise()
        tree = tree.tree
    cached = _cached(tree, conversion, confine)
    copy = Path(tempfile.mkdtemp(prefix=f".{tree.name}-2to3-", dir=tree.parent))
    try:
        copy_tree(cached, copy)
        yield copy
    finally:
        remove_tree(copy)


def conversion_lines(tree: Path, copy: Path) -> list[str]:
    """Shell lines that make ``copy`` a fresh copy of ``tree`` converted by ``2to3`` as
    its build declares (an agent's ``run-tests``, before pytest runs in ``copy``); none
    when ``tree`` declares no conversion. The conversion's summary goes to stderr."""
    conversion = declared_conversion(tree)
    if conversion is None:
        return []
    if importlib.util.find_spec("lib2to3") is None:
        raise EnvironmentFailure(
            "this fix's code reaches Python 3 through 2to3 (use_2to3 in setup.py), which "
            "needs lib2to3: run bugbout on Python 3.12 or older for this era"
        )
    spec = json.dumps({"fixers": conversion.fixers, "excluded": conversion.excluded})
    quoted = shlex.quote(str(copy))
    convert = shlex.join([sys.executable, "-I", "-W", "ignore", "-c", _CONVERT, spec])
    return [
        f"rm -rf {quoted} && mkdir -p {shlex.quote(str(copy.parent))} || exit 1\n",
        f"cp -R -P {shlex.quote(str(tree))} {quoted} || exit 1\n",
        f"trap 'rm -rf {quoted}' EXIT\n",
        f"(cd {quoted} && {convert}) >&2 || {{ echo '2to3 could not convert' >&2; exit 1; }}\n",
    ]


def converted_trees() -> Path:
    """Where converted trees are cached: ``<BUGBOUT_HOME>/2to3``."""
    from bugbout.core.plumbing.runtime.home import bugbout_home

    return bugbout_home() / "2to3"


def _cached(tree: Path, conversion: Conversion, confine: Confine) -> Path:
    """The converted tree of ``tree``'s content, converted on first use."""
    cache = converted_trees()
    key = _content_key(tree, conversion)
    target = cache / key
    if target.is_dir():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    with locked(cache / f".{key}.lock"):
        if target.is_dir():
            return target
        scratch = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=cache))
        try:
            copy_tree(tree, scratch)
            _convert(scratch, conversion, confine)
            scratch.rename(target)
        except BaseException:
            remove_tree(scratch)
            raise
    return target


def _convert(tree: Path, conversion: Conversion, confine: Confine) -> None:
    """Run lib2to3's fixers over ``tree``'s ``.py`` files in place, confined."""
    spec = json.dumps({"fixers": conversion.fixers, "excluded": conversion.excluded})
    argv = confine([sys.executable, "-I", "-W", "ignore", "-c", _CONVERT, spec], tree, ())
    ran = run_script(argv, tree, timeout=TIMEOUT, limit=OUTPUT_LIMIT)
    finished, errors = ran.finished, ran.stderr
    if finished.exit_code != 0:
        why = "timed out" if finished.timed_out else _last_line(errors)
        raise EnvironmentFailure(
            f"2to3 could not convert the tree its setup.py converts with use_2to3 ({why}); "
            "check use_2to3_fixers names fixer packages the tree holds"
        )


def _content_key(tree: Path, conversion: Conversion) -> str:
    """A digest of every path, mode, link and file content of ``tree``, the fixers asked
    for and the interpreter that converts."""
    digest = hashlib.sha256(
        json.dumps([conversion.fixers, conversion.excluded, sys.version_info[:2]]).encode()
    )
    for root, folders, files in os.walk(tree):
        folders.sort()
        for name in sorted(files + [f for f in folders if Path(root, f).is_symlink()]):
            path = Path(root, name)
            digest.update(str(path.relative_to(tree)).encode("utf-8", "surrogateescape") + b"\0")
            if path.is_symlink():
                digest.update(b"link\0" + str(path.readlink()).encode("utf-8", "surrogateescape"))
            else:
                digest.update(f"{path.stat().st_mode & 0o777}\0".encode())
                digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _file(tree: Path | TestTree, name: str) -> Path:
    """``name`` as a test run of ``tree`` sees it: an edit, else the cached tree's file."""
    if not isinstance(tree, TestTree):
        return tree / name
    edited = tree.edits / name
    return edited if edited.exists() or tree.overlay is None else tree.lower / name


def _setup_cfg_options(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    parser = configparser.RawConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return {}
    return dict(parser["options"]) if parser.has_section("options") else {}


def _names(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(str(item) for item in value)
    return ()


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"
