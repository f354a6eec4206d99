"""PyDriller's walk equivalent to the miner's, for ``bench_mining.py``; run by the Python
of a virtual environment where PyDriller is installed, never by bugbout's.

    python pydriller_walk.py REPO REF TESTS

Every first-parent commit, newest first, with its message and modified files, and the
diff of every changed Python file under TESTS (what the miner reads of a fix). It
prints one JSON line with the counts.
"""

import json
import sys

from pydriller import Git


def main() -> None:
    repository, ref, tests = sys.argv[1:4]
    commits = files = diff_bytes = 0
    for commit in Git(repository).get_list_commits(ref, first_parent=True, reverse=False):
        commits += 1
        _ = commit.msg
        for modified in commit.modified_files:  # PyDriller gives none for a merge
            files += 1
            path = modified.new_path or modified.old_path or ""
            if path.startswith(tests) and path.endswith(".py"):
                diff_bytes += len(modified.diff)
    print(json.dumps({"commits": commits, "modified_files": files, "test_diff_chars": diff_bytes}))


if __name__ == "__main__":
    main()
