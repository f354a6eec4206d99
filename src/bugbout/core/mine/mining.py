"""Mining: what a miner is asked, and the rules for reading fixes out of commit messages."""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from types import CodeType
from typing import TYPE_CHECKING, Protocol

from pydantic import SerializerFunctionWrapHandler, model_serializer

from bugbout.core.contract.settings import DEFAULT_TEST_RUNNER, PluginChoice, ProjectSettings
from bugbout.core.store.records import IssueRef, Record, TaskSet

if TYPE_CHECKING:
    from bugbout.core.plumbing.testruns.test_runner import TestRunner

TitleLookup = Callable[[int], str | None]
"""Gives the title of a pull request or issue by number, when a source knows it."""

_SLUG = r"[\w.-]+/[\w.-]+"
_URL = re.compile(
    rf"https?://github\.com/(?P<slug>{_SLUG})/(?:issues|pull)/(?P<number>\d+)\b", re.I
)
_QUALIFIED = re.compile(rf"(?<![\w/.-])(?P<slug>{_SLUG})#(?P<number>\d+)\b")
_HASH = re.compile(r"(?<![&#])#(?P<number>\d+)\b")
"""``#N`` anywhere but in an HTML character reference (``&#123;``)."""
_GH = re.compile(r"(?<![\w-])gh-(?P<number>\d+)\b", re.IGNORECASE)
_CLOSING = re.compile(r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b:?\s+$", re.IGNORECASE)


class MiningRequest(Record):
    """What a miner is asked: the repository and the project's settings; which fixes
    become tasks is the miner's own options (``miner:``)."""

    repository: Path
    project: ProjectSettings
    github: str | None = None
    """``owner/name`` on GitHub, when known: references to other repositories are ignored."""
    test_runner: PluginChoice = DEFAULT_TEST_RUNNER
    """The project's test runner (``test-runner``): what a test file is, what tests it
    defines."""

    @model_serializer(mode="wrap")
    def _runner_when_chosen(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        """The default runner is not written: the keys of minings stored before runners
        were plugins stay the same."""
        data: dict[str, object] = handler(self)
        if self.test_runner == DEFAULT_TEST_RUNNER:
            data.pop("test_runner", None)
        return data


class Miner(Protocol):
    """What a miner plugin's factory returns. A miner may also have a method
    ``head(request) -> str``: the commit id of the history it walks (see :func:`head_of`);
    then a result it found is reused while that head and its settings stay the same."""

    def mine(
        self,
        request: MiningRequest,
        titles: TitleLookup | None = None,
        runner: TestRunner | None = None,
    ) -> TaskSet:
        """The tasks found, newest first, with how much history was examined and why the
        rest was left out. Problem statements are filled in later, from issue sources.
        ``runner`` is the bout's test runner (what a test file is, the tests a file
        defines); ``None`` outside a bout: the installed one ``request.test_runner`` names."""
        ...


def head_of(miner: Miner, request: MiningRequest) -> str | None:
    """The commit id of the history ``miner`` walks, when it says (its method ``head``):
    with its settings, all its result depends on; ``None``: its results are never reused."""
    head = getattr(miner, "head", None)
    return str(head(request)) if callable(head) else None


class Mining(Record):
    """A mining kept for reuse (``mining.json``), under the key of everything it was
    computed from."""

    key: str
    head: str
    mined: TaskSet
    """What the miner found."""
    tasks: TaskSet | None = None
    """Those tasks with their issues' text, when every issue source answered."""


def code_changed(before: bytes | None, after: bytes | None) -> bool:
    """Whether a Python module's code differs from ``before`` to ``after`` (``None``: the
    module is absent), its docstrings, comments and layout aside: a change to those alone
    cannot make a test fail. Compared as the bytecode each compiles to, line numbers
    aside; a module that does not parse counts as changed."""
    if before is None or after is None:
        return before != after
    if before == after:
        return False
    try:
        with warnings.catch_warnings():  # an old module's invalid escapes
            warnings.simplefilter("ignore")
            old, new = (
                compile(
                    _without_docstrings(ast.parse(source)), "<module>", "exec", dont_inherit=True
                )
                for source in (before, after)
            )
    except (SyntaxError, ValueError):  # Python 2, or a NUL byte
        return True
    return not _same_code(old, new)


def _without_docstrings(tree: ast.Module) -> ast.Module:
    """``tree`` with the docstring of its module, classes and functions taken out (only
    statements are visited: a docstring is never inside an expression)."""
    nodes: list[ast.AST] = [tree]
    while nodes:
        node = nodes.pop()
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                node.body = node.body[1:] or [ast.copy_location(ast.Pass(), first)]
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            nodes.extend(getattr(node, field, None) or ())
    return tree


def _same_code(old: CodeType, new: CodeType) -> bool:
    """Whether two code objects do the same: their instructions, names and constants
    (nested code alike), their line numbers aside."""
    if (
        old.co_code != new.co_code
        or old.co_names != new.co_names
        or old.co_varnames != new.co_varnames
        or old.co_freevars != new.co_freevars
        or old.co_cellvars != new.co_cellvars
        or old.co_flags != new.co_flags
        or old.co_argcount != new.co_argcount
        or old.co_posonlyargcount != new.co_posonlyargcount
        or old.co_kwonlyargcount != new.co_kwonlyargcount
        or old.co_name != new.co_name
        or old.co_exceptiontable != new.co_exceptiontable
        or len(old.co_consts) != len(new.co_consts)
    ):
        return False
    return all(
        _same_code(a, b)
        if isinstance(a, CodeType) and isinstance(b, CodeType)
        else type(a) is type(b) and repr(a) == repr(b)
        for a, b in zip(old.co_consts, new.co_consts, strict=True)
    )


def issue_references(*texts: str, repository: str | None = None) -> list[IssueRef]:
    """The issues and pull requests ``texts`` name, most telling first.

    References after a closing keyword (``Fixes #12``) come first, then the others in the
    order they appear; each number appears once. A reference that names a repository
    (``owner/name#12`` or a GitHub URL) counts only when it is ``repository`` (or when
    the repository is not known).
    """
    found: list[tuple[bool, int, IssueRef]] = []
    for index, text in enumerate(texts):
        taken: list[tuple[int, int]] = []
        for pattern in (_URL, _QUALIFIED):
            for match in pattern.finditer(text):
                taken.append(match.span())
                slug = match["slug"]
                if repository is not None and slug.lower() != repository.lower():
                    continue
                url = match.group(0) if pattern is _URL else None
                found.append(_ref(text, index, match, url))
        for pattern in (_HASH, _GH):
            for match in pattern.finditer(text):
                if not any(start <= match.start() < end for start, end in taken):
                    found.append(_ref(text, index, match, None))
    seen: set[int] = set()
    ordered: list[IssueRef] = []
    for _, _, ref in sorted(found, key=lambda item: (not item[0], item[1])):
        if ref.number not in seen:
            seen.add(ref.number)
            ordered.append(ref)
    return ordered


def _ref(
    text: str, index: int, match: re.Match[str], url: str | None
) -> tuple[bool, int, IssueRef]:
    closing = bool(_CLOSING.search(text[: match.start()]))
    position = index * 10**9 + match.start()
    return closing, position, IssueRef(number=int(match["number"]), url=url, closing=closing)
