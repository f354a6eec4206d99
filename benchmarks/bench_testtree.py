#!/usr/bin/env python
"""A test run's tree on a patch: an overlay of the cached tree (the patch in its upper
directory) against a copy of the tree (the behaviour before), by tree size.

For each size, a repository of M modules and a patch of three edits. In each round,
in rotated order, it times for both methods:

- ``prepare``: make the test tree, apply the patch, write one test module, seal;
- ``run``: that, then ``python -c pass`` started where pytest would be (inside the
  overlay's namespace, under the default offline confinement), then remove the tree.

The copy is made the way ``run.checkouts=copy`` makes it (``cp``; reflinks where the
filesystem clones files when ``--reflink``). Ratios are paired, overlay over copy, in
the same round (min / median / max). Writes ``.bench/testtree.json`` and
``.bench/testtree.md``. A report, not a test: exit code 0.

    python benchmarks/bench_testtree.py [--repeat K] [--sizes 300,3000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import paired_ratios, rotations

from bugbout.core.plumbing.trees.checkout import Checkouts
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.plumbing.trees.patch import apply_patch
from bugbout.core.plumbing.trees.testtree import TestTree, fresh_test_tree
from bugbout.sandbox.network import offline
from bugbout.sandbox.overlay import enter
from bugbout.testing import RepositoryBuilder

OUTPUT = Path(__file__).resolve().parent.parent / ".bench"
PATCH = "".join(
    f"diff --git a/src/pkg/m{i}.py b/src/pkg/m{i}.py\n--- a/src/pkg/m{i}.py\n"
    f"+++ b/src/pkg/m{i}.py\n@@ -1,2 +1,2 @@\n def f{i}(x):\n-    return x + {i}\n"
    f"+    return x - {i}\n"
    for i in (1, 2, 3)
)


def build(path: Path, modules: int) -> str:
    files = {f"src/pkg/m{i}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(modules)}
    files |= {"src/pkg/__init__.py": "", "tests/test_m0.py": "def test_ok():\n    pass\n"}
    return RepositoryBuilder(path).commit("Initial", files)


def prepare(checkouts: Checkouts, rev: str, root: Path) -> TestTree:
    tree = fresh_test_tree(checkouts, rev, root)
    apply_patch(tree, PATCH)
    tree.expose(["tests/test_new.py"])
    (tree.edits / "tests" / "test_new.py").write_text("def test_new():\n    pass\n")
    tree.seal()
    return tree


def run(checkouts: Checkouts, rev: str, root: Path) -> None:
    tree = prepare(checkouts, rev, root)
    argv = offline([sys.executable, "-c", "pass"])
    if tree.overlay is not None:
        argv = enter(tree.overlay, argv)
    subprocess.run(argv, cwd=tree.tree, check=True)
    checkouts.remove(root)


def measure_size(size: int, repeat: int, method: str) -> dict[str, dict[str, object]]:
    """Both measures on a repository of ``size`` modules, ``copy`` by ``method``."""
    results: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-testtree-") as scratch:
        root = Path(scratch)
        rev = build(root / "repo", size)
        git = Git(root / "repo")
        methods = {
            "copy": Checkouts(git, root / "cache", method),
            "overlay": Checkouts(git, root / "cache", "overlay"),
        }
        for checkouts in methods.values():
            checkouts.base(rev)
        counter = iter(range(10**9))

        def timed(name: str, measure: str) -> float:
            folder = root / f"t{next(counter)}"
            started = time.perf_counter()
            if measure == "prepare":
                prepare(methods[name], rev, folder)
            else:
                run(methods[name], rev, folder)
            elapsed = time.perf_counter() - started
            methods[name].remove(folder)
            return elapsed

        for measure in ("prepare", "run"):
            rounds = [
                {name: timed(name, measure) for name in order}
                for order in rotations(list(methods), repeat)
            ]
            results[measure] = {
                "median_s": {
                    name: round(statistics.median(r[name] for r in rounds), 4) for name in methods
                },
                "overlay_over_copy": paired_ratios(rounds, "copy")["overlay"],
                "rounds": rounds,
            }
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--sizes", default="300,3000")
    parser.add_argument("--reflink", action="store_true", help="copies by reflink")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    results: dict[str, object] = {}
    lines = [
        "Test-run trees on a patch of 3 edits: overlay over copy, paired per round.",
        "",
        "| modules | measure | copy (median) | overlay (median) | overlay / copy "
        "(min / median / max) |",
        "|---|---|---|---|---|",
    ]
    for size in (int(value) for value in args.sizes.split(",")):
        measured = measure_size(size, args.repeat, "reflink" if args.reflink else "copy")
        results[str(size)] = measured
        for measure, result in measured.items():
            medians, ratio = result["median_s"], result["overlay_over_copy"]
            lines.append(
                f"| {size} | {measure} | {medians['copy'] * 1000:.0f} ms | "  # type: ignore[index]
                f"{medians['overlay'] * 1000:.0f} ms | {ratio['min']:.3f} / "  # type: ignore[index]
                f"{ratio['median']:.3f} / {ratio['max']:.3f} |"  # type: ignore[index]
            )
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "testtree.json").write_text(
        json.dumps({"benchmark": "testtree", "results": results}, indent=2) + "\n"
    )
    (args.output / "testtree.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
