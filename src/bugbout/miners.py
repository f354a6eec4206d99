"""The stable API for miner plugins: their record, ``hookimpl``, ``Options``, and the
mining request, the records it returns, git, the project's test modules, how a title is
read, and injected bugs.

A miner plugin imports these names from here; ``bugbout.core`` is private and may change
in any release. Each name is imported the first time it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bugbout.core.contract.exports import lazy_exports

__all__ = [
    "DEFAULT_FIX_WORDS",
    "DEFAULT_SAME_BEHAVIOUR_TYPES",
    "DEFAULT_SAME_BEHAVIOUR_WORDS",
    "HISTORY_TIERS",
    "ROOT_TEST_MODULES",
    "Change",
    "Commit",
    "ConfigError",
    "Git",
    "IssueRef",
    "Miner",
    "MinerPlugin",
    "MiningRequest",
    "MutantOptions",
    "NoOptions",
    "Options",
    "Progress",
    "SuiteRunner",
    "Task",
    "TaskIssue",
    "TaskSet",
    "TestRunner",
    "TestingMiner",
    "TitleLookup",
    "TitleReading",
    "added_tests",
    "changed_tests",
    "code_changed",
    "create_plugin",
    "defined_tests_memo",
    "first_parent_walk",
    "fix_title_pattern",
    "hookimpl",
    "is_test_module",
    "issue_references",
    "mine_mutants",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Change": "bugbout.core.plumbing.trees.git",
        "DEFAULT_FIX_WORDS": "bugbout.core.mine.titles",
        "DEFAULT_SAME_BEHAVIOUR_TYPES": "bugbout.core.mine.titles",
        "DEFAULT_SAME_BEHAVIOUR_WORDS": "bugbout.core.mine.titles",
        "Commit": "bugbout.core.plumbing.trees.git",
        "ConfigError": "bugbout.core.contract.errors",
        "Git": "bugbout.core.plumbing.trees.git",
        "HISTORY_TIERS": "bugbout.core.store.records",
        "ROOT_TEST_MODULES": "bugbout.core.plumbing.project.testmodules",
        "IssueRef": "bugbout.core.store.records",
        "Miner": "bugbout.core.mine.mining",
        "MinerPlugin": "bugbout.core.contract.types",
        "MiningRequest": "bugbout.core.mine.mining",
        "MutantOptions": "bugbout.core.mine.mutation",
        "NoOptions": "bugbout.core.contract.types",
        "Options": "bugbout.core.contract.types",
        "Progress": "bugbout.core.plumbing.runtime.progress",
        "SuiteRunner": "bugbout.core.mine.injection",
        "Task": "bugbout.core.store.records",
        "TaskIssue": "bugbout.core.store.records",
        "TaskSet": "bugbout.core.store.records",
        "TestingMiner": "bugbout.core.mine.injection",
        "TestRunner": "bugbout.core.plumbing.testruns.test_runner",
        "TitleLookup": "bugbout.core.mine.mining",
        "TitleReading": "bugbout.core.mine.titles",
        "added_tests": "bugbout.core.plumbing.project.testmodules",
        "changed_tests": "bugbout.core.plumbing.project.testmodules",
        "code_changed": "bugbout.core.mine.mining",
        "create_plugin": "bugbout.core.contract.manager",
        "defined_tests_memo": "bugbout.core.plumbing.project.testmodules",
        "first_parent_walk": "bugbout.core.mine.walk",
        "fix_title_pattern": "bugbout.core.mine.titles",
        "hookimpl": "bugbout.core.contract.hookspecs",
        "is_test_module": "bugbout.core.plumbing.project.testmodules",
        "issue_references": "bugbout.core.mine.mining",
        "mine_mutants": "bugbout.core.mine.injection",
    },
)

if TYPE_CHECKING:
    from bugbout.core.contract.errors import ConfigError
    from bugbout.core.contract.hookspecs import hookimpl
    from bugbout.core.contract.manager import create_plugin
    from bugbout.core.contract.types import MinerPlugin, NoOptions, Options
    from bugbout.core.mine.injection import SuiteRunner, TestingMiner, mine_mutants
    from bugbout.core.mine.mining import (
        Miner,
        MiningRequest,
        TitleLookup,
        code_changed,
        issue_references,
    )
    from bugbout.core.mine.mutation import MutantOptions
    from bugbout.core.mine.titles import (
        DEFAULT_FIX_WORDS,
        DEFAULT_SAME_BEHAVIOUR_TYPES,
        DEFAULT_SAME_BEHAVIOUR_WORDS,
        TitleReading,
        fix_title_pattern,
    )
    from bugbout.core.mine.walk import first_parent_walk
    from bugbout.core.plumbing.project.testmodules import (
        ROOT_TEST_MODULES,
        added_tests,
        changed_tests,
        defined_tests_memo,
        is_test_module,
    )
    from bugbout.core.plumbing.runtime.progress import Progress
    from bugbout.core.plumbing.testruns.test_runner import TestRunner
    from bugbout.core.plumbing.trees.git import Change, Commit, Git
    from bugbout.core.store.records import HISTORY_TIERS, IssueRef, Task, TaskIssue, TaskSet
