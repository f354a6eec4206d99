"""Distributions installed as Python 2 code: built without the ``2to3`` their build asked for.

Before about 2016 a source distribution could hold Python 2 code and have setuptools
convert it at build time (``use_2to3``: nose until 1.3.7, for one). setuptools 58 and
later no longer do, and some such builds still succeed: the environment then holds
modules Python 3 cannot even compile (``print "%s" % x``), and every test importing them
fails the same way before and after the fix. :func:`unconverted` finds them, so that the
environment builds them again with the build tools of their era, which convert.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

CHECK_TIMEOUT = 120.0
_CHECK = """\
import sys
for path in sys.argv[1:]:
    try:
        with open(path, "rb") as source:
            compile(source.read(), path, "exec", dont_inherit=True)
    except SyntaxError:
        print(path)
    except (OSError, ValueError):
        pass
"""


def unconverted(python: Path, pins: list[str]) -> list[str]:
    """Those of ``pins`` (``name==version``) installed in ``python``'s environment with a
    module ``python`` cannot compile."""
    site = _site_packages(python)
    modules: dict[str, str] = {}
    for pin in pins:
        for module in _modules(site, pin):
            modules[str(module)] = pin
    if not modules:
        return []
    try:
        result = subprocess.run(
            [str(python), "-c", _CHECK, *modules],
            capture_output=True,
            text=True,
            timeout=CHECK_TIMEOUT,
            check=False,
            env={"PATH": "/usr/bin:/bin"},
        )
    except (OSError, subprocess.SubprocessError):
        return []
    failing = {modules[line] for line in result.stdout.splitlines() if line in modules}
    return [pin for pin in pins if pin in failing]


def _site_packages(python: Path) -> Path | None:
    found = sorted((python.parent.parent / "lib").glob("python*/site-packages"))
    return found[0] if found else None


def _modules(site: Path | None, pin: str) -> list[Path]:
    """The Python modules the distribution of ``pin`` installed (its ``RECORD``)."""
    if site is None:
        return []
    name, _, version = pin.partition("==")
    stem = f"{name.replace('-', '_').lower()}-{version}.dist-info"
    infos = [p for p in site.glob("*.dist-info") if p.name.lower() == stem]
    if not infos:
        return []
    try:
        lines = (infos[0] / "RECORD").read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    paths = (line.split(",", 1)[0] for line in lines)
    return [site / p for p in paths if p.endswith(".py") and not p.startswith("..")]
