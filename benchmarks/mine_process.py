"""One mine of a repository as a whole process, for ``bench_mining.py``: a fresh
interpreter imports the ``git-history`` miner and walks the whole first-parent history.

    python benchmarks/mine_process.py REPO SOURCE TESTS REF

``SOURCE`` may name several directories, comma-separated (``src/click,click``).

It prints one JSON line: what was found, the seconds spent importing and walking, and
the peak RSS of the process and of its git children.
"""

import sys
import time

started = time.perf_counter()

from bugbout.core.contract.settings import ProjectSettings  # noqa: E402
from bugbout.core.mine.mining import MiningRequest  # noqa: E402  (imports are what is timed)
from bugbout.plugins.miners.git_history import GitHistoryMiner, GitHistoryOptions  # noqa: E402


def main() -> None:
    import json
    import resource

    repository, source, tests, ref = sys.argv[1:5]
    imported = time.perf_counter()
    request = MiningRequest(
        repository=repository,
        project=ProjectSettings(source=tuple(source.split(",")), tests=tests),
    )
    found = GitHistoryMiner(GitHistoryOptions(limit=20, ref=ref)).mine(request)
    walked = time.perf_counter()
    print(
        json.dumps(
            {
                "tasks": len(found.tasks),
                "examined": found.examined,
                "excluded": dict(sorted(found.excluded.items())),
                "import_s": round(imported - started, 4),
                "walk_s": round(walked - imported, 4),
                "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                "git_peak_rss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
            }
        )
    )


if __name__ == "__main__":
    main()
