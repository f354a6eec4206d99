"""``bugbout tasks --mine-only`` without the command line, for ``bench_mining.py``: a fresh
interpreter builds the settings the benchmark's ``bugbout.yaml`` composes to directly (no
Hydra), makes the mining plugins and runs the core's task pipeline (mine, read each fix's
issue or tell it from its message, write ``tasks.json``) on a store of its own, so it
never reuses a mining.

    python benchmarks/mine_tasks_process.py REPO SOURCE TESTS REF

Its time over the miner process is the core pipeline's; the command's time over it, the
application's (starting, composing, the console). It prints one JSON line: the tasks
found and the seconds spent importing and mining.
"""

import sys
import time

started = time.perf_counter()

from bugbout.core.contract.manager import make_plugins  # noqa: E402  (imports are timed)
from bugbout.core.contract.settings import BoutSettings  # noqa: E402
from bugbout.core.pipeline import find_tasks  # noqa: E402
from bugbout.core.store.store import Store  # noqa: E402


def main() -> None:
    import json
    import tempfile
    from pathlib import Path

    repository, source, tests, ref = sys.argv[1:5]
    imported = time.perf_counter()
    settings = BoutSettings.model_validate(
        {
            "root": Path(repository).resolve(),
            "project": {"source": source.split(","), "tests": tests},
            "miner": {"name": "git-history", "ref": ref},
            "issue-sources": {"commit": {"issue-source": "commit"}},
        }
    )
    plugins = make_plugins(kinds=("miner", "issue-source"))
    with tempfile.TemporaryDirectory(prefix="bugbout-bench-store-") as scratch:
        tasks = find_tasks(settings, plugins, Store(Path(scratch)))
    mined = time.perf_counter()
    print(
        json.dumps(
            {
                "tasks": len(tasks.tasks),
                "import_s": round(imported - started, 4),
                "mine_s": round(mined - imported, 4),
            }
        )
    )


if __name__ == "__main__":
    main()
