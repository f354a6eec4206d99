"""Applies the patch on standard input to the working directory (the ``predictions``
agent's attempt, run confined like any agent's command): ``python -m`` this module."""

from __future__ import annotations

import sys
from pathlib import Path

from bugbout.agents import PatchError, apply_patch


def main() -> int:
    patch = sys.stdin.read()
    if not patch.strip():
        print("the prediction's patch is empty", file=sys.stderr)
        return 0
    try:
        apply_patch(Path.cwd(), patch)
    except PatchError as exc:
        print(f"the prediction's patch does not apply: {exc}", file=sys.stderr)
        return 1
    print("applied the prediction's patch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
