#!/usr/bin/env python
"""Checkout benchmark: attempts' working copies and patches against ``git archive | tar -x``.

Generates (once, cached) repositories whose trees look like a real project's (a package,
its tests, docs, data, images, scripts, vendored bundles, symlinks) at four sizes, about
150, 700, 3000 and 12000 files, with a little history. For each size it times, in
rounds (the order rotating), each measure right after the baseline:

- the baseline, ``git archive <rev> | tar -x -C <dir>`` (a shell pipeline);
- ``Checkouts.attempt_copy()`` by each method this machine offers: ``copy`` (every file
  copied), ``reflink`` (cloned, where the filesystem can), ``overlay`` (made, and made
  then mounted once with a no-op command in its namespace);
- reading the patch of an attempt that edited 3 files: ``diff_trees`` of a copy (the
  whole tree walked) and of an overlay's upper directory;

and reports each measure's ratio to the baseline of its round, min / median / max over
the rounds (``timing.paired_ratios``), plus the medians. It writes
``.bench/checkout.json`` and ``.bench/checkout.md``. Targets: an overlay working copy at
most 0.3x the baseline, its cost flat in the tree's size; reading an overlay's patch in
a time that does not grow with the tree. A report, not a test: it exits 0.

    python benchmarks/bench_checkout.py [--workdir DIR] [--repeat K] [--sizes S,...]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from timing import paired_ratios, rotations

HERE = Path(__file__).resolve().parent
DEFAULT_WORKDIR = HERE / ".cache"
OUTPUT = HERE.parent / ".bench"
SCALES = {"150": 0.05, "700": 0.233, "3000": 1.0, "12000": 4.0}
"""Each tree size (about that many files) and its scale against the 3000-file tree."""

# Bump when the generated repository changes, so a cached one is not reused.
GENERATOR_VERSION = 2
SEED = 0

WORDS = [
    "value", "items", "text", "data", "node", "config", "token", "header", "record", "path",
    "range", "entry", "buffer", "schema", "column", "index", "payload", "batch", "window",
    "key", "chunk", "version", "field", "query", "table", "stream", "option", "marker",
    "scope", "result", "count", "limit", "offset", "name", "kind", "state", "cache", "reader",
    "writer", "parser", "the", "a", "of", "to", "in", "is", "for", "on", "with", "as", "by",
    "it", "from", "that", "this", "be", "are", "or", "an", "at",
]  # fmt: skip
KEYWORDS = ["if", "for", "while", "return", "yield", "with", "try", "raise", "assert"]


# --------------------------------------------------------------------------------------
# The generated project.
# --------------------------------------------------------------------------------------


def _words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choices(WORDS, k=count))


def _python(rng: random.Random, name: str, functions: int) -> bytes:
    lines = [f'"""The {name} module."""', "", "from __future__ import annotations", "", ""]
    for number in range(functions):
        arg = rng.choice(WORDS[:12])
        lines.append(f"def {rng.choice(WORDS[:30])}_{number}({arg}, *, limit={number}):")
        lines.append(f'    """{_words(rng, rng.randint(6, 14)).capitalize()}."""')
        for _ in range(rng.randint(4, 14)):
            keyword = rng.choice(KEYWORDS)
            lines.append(f"    {keyword} {arg}.{rng.choice(WORDS[:30])}({rng.randint(0, 999)})")
        lines += ["    return " + arg, "", ""]
    return ("\n".join(lines).rstrip() + "\n").encode()


def _test_module(rng: random.Random, module: str, tests: int) -> bytes:
    lines = [f'"""Tests of {module}."""', "", "import pytest", "", f"import {module}", "", ""]
    for number in range(tests):
        lines.append(f"def test_{rng.choice(WORDS[:30])}_{number}():")
        for _ in range(rng.randint(2, 8)):
            lines.append(f"    assert {module.rsplit('.', 1)[-1]}.f({rng.randint(0, 99)}) == 1")
        lines += ["", ""]
    return ("\n".join(lines).rstrip() + "\n").encode()


def _prose(rng: random.Random, paragraphs: int) -> bytes:
    text = "\n\n".join(_words(rng, rng.randint(30, 120)) for _ in range(paragraphs))
    return (f"# {_words(rng, 3).title()}\n\n{text}\n").encode()


def _json(rng: random.Random, rows: int) -> bytes:
    records = [{w: rng.randint(0, 10**6) for w in rng.sample(WORDS[:30], 6)} for _ in range(rows)]
    return (json.dumps(records, indent=2) + "\n").encode()


def _csv(rng: random.Random, rows: int) -> bytes:
    header = ",".join(WORDS[:8])
    body = "\n".join(",".join(str(rng.randint(0, 10**5)) for _ in range(8)) for _ in range(rows))
    return f"{header}\n{body}\n".encode()


def _binary(rng: random.Random, size: int) -> bytes:
    return b"\x89PNG\r\n\x1a\n\x00\x00" + rng.randbytes(size)


@dataclass
class Entry:
    path: str
    content: bytes
    mode: str = "100644"  # "100755" executable, "120000" symlink (content: the target)


def project_tree(rng: random.Random, scale: float = 1.0) -> list[Entry]:
    """About 3000 files and 40 MB at scale 1, shaped like a mid-sized Python project;
    every kind of file in proportion at other scales."""

    def count(number: int) -> int:
        return max(1, round(number * scale))

    tree: list[Entry] = []
    for package in range(count(40)):
        base = f"src/pkg/sub{package:02d}"
        tree.append(Entry(f"{base}/__init__.py", b'"""A subpackage."""\n'))
        for module in range(33):
            name = f"mod{module:02d}"
            tree.append(Entry(f"{base}/{name}.py", _python(rng, name, rng.randint(4, 36))))
        tree.append(Entry(f"{base}/py.typed", b""))
    tree.append(Entry("src/pkg/__init__.py", b'"""pkg."""\n\n__version__ = "1.0"\n'))
    tree.append(Entry("src/pkg/_compat.py", b"import sys\n"))
    tree.append(Entry("src/pkg/compat.py", b"_compat.py", "120000"))
    for package in range(count(40)):
        base = f"tests/sub{package:02d}"
        tree.append(Entry(f"{base}/conftest.py", b"import pytest\n"))
        for module in range(20):
            tree.append(
                Entry(
                    f"{base}/test_mod{module:02d}.py",
                    _test_module(rng, f"pkg.sub{package:02d}.mod{module:02d}", rng.randint(3, 30)),
                )
            )
    tree.append(Entry("tests/conftest.py", b"import pytest\n"))
    for number in range(count(300)):
        section = f"docs/{rng.choice(['guide', 'api', 'howto', 'reference'])}"
        tree.append(Entry(f"{section}/page{number:03d}.md", _prose(rng, rng.randint(3, 20))))
    for number in range(count(100)):
        tree.append(
            Entry(f"docs/_static/img{number:02d}.png", _binary(rng, rng.randint(8, 120) << 10))
        )
    for number in range(count(300)):
        kind = rng.choice(["json", "csv"])
        content = (
            _json(rng, rng.randint(5, 80)) if kind == "json" else _csv(rng, rng.randint(20, 400))
        )
        tree.append(Entry(f"tests/data/case{number:03d}.{kind}", content))
    for number in range(count(30)):
        tree.append(Entry(f"data/blob{number:02d}.bin", _binary(rng, rng.randint(50, 400) << 10)))
    for number in range(count(5)):
        bundle = "\n".join(
            f"var v{i} = {rng.randint(0, 10**9)}; // {_words(rng, 8)}" for i in range(30_000)
        )
        tree.append(Entry(f"docs/_static/vendor{number}.js", bundle.encode()))
    for number in range(count(20)):
        script = f'#!/bin/sh\n# {_words(rng, 10)}\nexec python -m pkg.tool{number} "$@"\n'
        tree.append(Entry(f"scripts/tool{number:02d}", script.encode(), "100755"))
    for number in range(8):
        tree.append(
            Entry(f"docs/links/link{number}.md", f"../guide/page{number:03d}.md".encode(), "120000")
        )
    tree += [
        Entry("README.md", _prose(rng, 12)),
        Entry("CHANGELOG.md", _prose(rng, 60)),
        Entry("LICENSE", b"MIT License\n" + _words(rng, 150).encode() + b"\n"),
        Entry("pyproject.toml", b'[project]\nname = "pkg"\nversion = "1.0"\n'),
        Entry(".gitignore", b"__pycache__/\n*.pyc\n"),
        Entry("docs/changelog.md", b"../CHANGELOG.md", "120000"),
    ]
    return tree


def _fast_import_commit(
    out: io.BufferedWriter, message: str, when: int, entries: list[Entry]
) -> None:
    data = message.encode()
    who = f"Maintainer <maintainer@example.invalid> {when} +0000".encode()
    out.write(b"commit refs/heads/main\n")
    out.write(b"author %s\ncommitter %s\ndata %d\n%s\n" % (who, who, len(data), data))
    for entry in entries:
        out.write(
            b"M %s inline %s\ndata %d\n"
            % (entry.mode.encode(), entry.path.encode(), len(entry.content))
        )
        out.write(entry.content + b"\n")
    out.write(b"\n")


def generate(repo: Path, scale: float) -> dict[str, Any]:
    """The repository: the tree, then two commits that each change a few files (a few
    hundred at scale 1)."""
    rng = random.Random(SEED)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    process = subprocess.Popen(
        ["git", "-C", str(repo), "fast-import", "--quiet", "--done"], stdin=subprocess.PIPE
    )
    assert process.stdin is not None
    out = io.BufferedWriter(process.stdin, buffer_size=1 << 20)  # type: ignore[arg-type]
    tree = project_tree(rng, scale)
    _fast_import_commit(out, "Initial commit", 1_700_000_000, tree)
    for number in (1, 2):
        changed = []
        python = [e for e in tree if e.path.endswith(".py")]
        for entry in rng.sample(python, min(len(python), round(250 * scale) or 1)):
            entry.content += f"\n\ndef added_{number}():\n    return {number}\n".encode()
            changed.append(entry)
        _fast_import_commit(out, f"Change {number}", 1_700_000_000 + number * 3600, changed)
    out.write(b"done\n")
    out.flush()
    process.stdin.close()
    if process.wait():
        raise SystemExit("git fast-import failed")
    _git(repo, "repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=10")
    _git(repo, "gc", "--quiet", "--prune=now")
    listing = _git(repo, "ls-tree", "-r", "-l", "main").splitlines()
    return {
        "generator_version": GENERATOR_VERSION,
        "files": len(listing),
        "bytes": sum(int(line.split()[3]) for line in listing if line.split()[3] != "-"),
        "symlinks": sum(1 for line in listing if line.startswith("120000")),
        "executables": sum(1 for line in listing if line.startswith("100755")),
        "commits": int(_git(repo, "rev-list", "--count", "main")),
        "pack_bytes": sum(p.stat().st_size for p in (repo / ".git/objects/pack").iterdir()),
    }


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def prepare(workdir: Path, size: str) -> tuple[Path, dict[str, Any]]:
    """The cached repository of about ``size`` files, generated when missing."""
    repo = workdir / f"repo-checkout-f{size}-s{SEED}-g{GENERATOR_VERSION}"
    info_path = repo / ".git" / "bench-info.json"
    if info_path.exists():
        return repo, {**json.loads(info_path.read_text()), "cached": True}
    building = repo.with_name(repo.name + ".tmp")
    shutil.rmtree(building, ignore_errors=True)
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"generating {repo} ...", flush=True)
    started = time.perf_counter()
    info = generate(building, SCALES[size])
    info["generate_seconds"] = round(time.perf_counter() - started, 2)
    (building / ".git" / "bench-info.json").write_text(json.dumps(info, indent=2))
    shutil.rmtree(repo, ignore_errors=True)
    building.rename(repo)
    return repo, {**info, "cached": False}


# --------------------------------------------------------------------------------------
# Measuring.
# --------------------------------------------------------------------------------------


EDITED = ("src/pkg/sub00/mod03.py", "tests/sub00/test_mod03.py", "README.md")
"""The files an "attempt" edits before its patch is read."""
APPEND = "for f in {files}; do printf '\\n# edited by the benchmark\\n' >> \"$f\"; done".format(
    files=" ".join(EDITED)
)
BASELINE = "git archive | tar -x (baseline)"


def _filesystem(path: Path) -> str:
    """The filesystem's type."""
    return (
        subprocess.run(
            ["stat", "--file-system", "--format=%T", str(path)],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        or "unknown"
    )


class Scratch:
    """Fresh directories for the timed actions. Nothing is deleted while timing: on some
    filesystems (ext4 mounted with ``discard``) the writes after a large deletion are
    several times slower, which would charge one action for another's cleanup."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.count = 0

    def new(self, label: str) -> Path:
        self.count += 1
        return self.root / f"{self.count:04d}-{label}"

    def clear(self) -> None:
        from bugbout.core.plumbing.trees.checkout import remove_tree

        if self.root.exists():
            remove_tree(self.root)
        self.root.mkdir(parents=True)
        os.sync()


def _timed(action: Callable[[], Any]) -> float:
    os.sync()  # earlier writes are not charged to this action
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def measure_size(size: str, workdir: Path, repeat: int) -> dict[str, Any]:
    """Every measure on the tree of about ``size`` files: rounds, paired ratios, medians."""
    from bugbout.core.plumbing.trees.checkout import Checkouts, WorkingCopy, choose_method
    from bugbout.core.plumbing.trees.git import Git
    from bugbout.core.plumbing.trees.patch import diff_trees
    from bugbout.sandbox.overlay import enter

    repo, info = prepare(workdir, size)
    print(f"{size}: {repo.name} ({info['files']} files, {info['bytes'] / 2**20:.1f} MiB)")
    rev = _git(repo, "rev-parse", "main").strip()
    scratch = Scratch(workdir / "scratch-checkout")
    scratch.clear()
    git = Git(repo)
    methods = [
        m for m in ("overlay", "reflink", "copy") if choose_method(scratch.root, m)[1] is None
    ]
    checkouts = {m: Checkouts(git, scratch.root / "cache", m) for m in methods}
    base = checkouts["copy"].base(rev)

    def edited(method: str) -> WorkingCopy:
        copy = checkouts[method].attempt_copy(rev, scratch.root / f"edited-{method}")
        argv = ["sh", "-c", APPEND]
        subprocess.run(
            enter(copy.overlay, argv) if copy.overlay else argv, cwd=copy.tree, check=True
        )
        return copy

    copies: dict[str, WorkingCopy] = {m: edited(m) for m in ("copy", "overlay") if m in methods}

    def baseline() -> None:
        target = scratch.new("archive")
        target.mkdir()
        command = (
            f"git -C {shlex.quote(str(repo))} archive {rev} | tar -x -C {shlex.quote(str(target))}"
        )
        subprocess.run(command, shell=True, check=True)

    def made(method: str) -> Callable[[], Any]:
        return lambda: checkouts[method].attempt_copy(rev, scratch.new(method))

    def mounted() -> None:
        copy = checkouts["overlay"].attempt_copy(rev, scratch.new("mounted"))
        assert copy.overlay is not None
        subprocess.run(enter(copy.overlay, ["true"]), check=True)

    def patch(method: str) -> Callable[[], Any]:
        copy = copies[method]
        return lambda: diff_trees(
            base, copy.changes, source="src/pkg", tests="tests", upper=copy.overlay is not None
        )

    actions: dict[str, Callable[[], Any]] = {BASELINE: baseline}
    for method in methods:
        actions[f"working copy: {method}"] = made(method)
    if "overlay" in methods:
        actions["working copy: overlay, mounted"] = mounted
    for method in copies:
        actions[f"patch of 3 edits: {method}"] = patch(method)
    for method, copy in copies.items():  # the patches must be right, not only fast
        found = diff_trees(
            base, copy.changes, source="src/pkg", tests="tests", upper=copy.overlay is not None
        )
        assert sorted(f.path for f in found.files) == sorted(EDITED), (method, found.files)
    pairs = paired_rounds(actions, repeat)  # the next size clears the scratch, then main
    return {
        "size": size,
        "repository": info,
        "methods": methods,
        "ratios": {name: paired_ratios(rounds, BASELINE)[name] for name, rounds in pairs.items()},
        "medians_s": {
            name: statistics.median(pair[name] for pair in rounds) for name, rounds in pairs.items()
        }
        | {BASELINE: statistics.median(p[BASELINE] for r in pairs.values() for p in r)},
        "rounds": pairs,
    }


def paired_rounds(
    actions: dict[str, Callable[[], Any]], repeat: int
) -> dict[str, list[dict[str, float]]]:
    """``repeat`` rounds, the order rotating; in each, every measure timed right after a
    baseline of its own. Each measure's ``{baseline, measure}`` pairs."""
    measures = [name for name in actions if name != BASELINE]
    pairs: dict[str, list[dict[str, float]]] = {name: [] for name in measures}
    for index, order in enumerate(rotations(measures, repeat), start=1):
        for name in order:
            before = _timed(actions[BASELINE])
            pairs[name].append({BASELINE: before, name: _timed(actions[name])})
        print(f"  round {index}/{repeat}", flush=True)
    return pairs


def markdown(results: list[dict[str, Any]], filesystem: str) -> str:
    """The report: one row per measure, one column per tree size."""
    header = (
        "| measure | " + " | ".join(f"{r['repository']['files']} files" for r in results) + " |"
    )
    lines = [
        f"Ratio to `git archive | tar -x` in the same round, min / median / max (median time); "
        f"filesystem {filesystem}.",
        "",
        header,
        "|---|" + "---|" * len(results),
    ]
    baseline = " | ".join(f"1 ({r['medians_s'][BASELINE] * 1000:.0f} ms)" for r in results)
    lines.append(f"| {_cell(BASELINE)} | {baseline} |")
    for name in results[0]["ratios"]:
        cells = []
        for result in results:
            ratio = result["ratios"].get(name)
            if ratio is None:
                cells.append("—")
                continue
            cells.append(
                f"{ratio['min']:.2f} / {ratio['median']:.2f} / {ratio['max']:.2f} "
                f"({result['medians_s'][name] * 1000:.1f} ms)"
            )
        lines.append(f"| {_cell(name)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """``text`` as a Markdown table cell (a ``|`` escaped)."""
    return text.replace("|", "\\|")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR, metavar="DIR")
    parser.add_argument("--repeat", type=int, default=5, metavar="K")
    parser.add_argument("--sizes", default=",".join(SCALES), help="of " + ",".join(SCALES))
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    sizes = args.sizes.split(",")
    if args.repeat < 1 or any(size not in SCALES for size in sizes):
        parser.error(f"--repeat must be at least 1, --sizes among {','.join(SCALES)}")
    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    results = [measure_size(size, workdir, args.repeat) for size in sizes]
    filesystem = _filesystem(workdir)
    table = markdown(results, filesystem)
    print(table)
    report = {
        "benchmark": "checkout",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "repeat": args.repeat,
        "edited_files": list(EDITED),
        "baseline": BASELINE,
        "environment": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "filesystem": filesystem,
        },
        "sizes": results,
    }
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "checkout.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.output / "checkout.md").write_text(table)
    print("cleaning up ...", flush=True)
    from bugbout.core.plumbing.trees.checkout import remove_tree

    remove_tree(workdir / "scratch-checkout")
    return 0


if __name__ == "__main__":
    sys.exit(main())
