"""What the outcome plugin's end-of-session checks cost in the run's pytest process:
where a class or a hook's code lies is resolved as ``os.path.realpath`` resolves it,
each folder once (a session's files lie in a few), and the impostor scan looks for
Python comparisons only in the classes that name one, at each class once however many
parents it has (a lattice of classes once cost a look per path down to each)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from bugbout.core.plumbing.testruns.testrun import outcomes_plugin_dir


@pytest.fixture
def plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plugin's modules importable, and imported anew for this test."""
    monkeypatch.syspath_prepend(str(outcomes_plugin_dir()))
    for name in ("bugbout_shared", "bugbout_impostors"):
        monkeypatch.delitem(sys.modules, name, raising=False)


def _lstats(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths ``os.lstat`` is asked of from now on."""
    asked: list[str] = []
    lstat = os.lstat

    def counted(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        asked.append(os.fspath(path))
        return lstat(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", counted)
    return asked


@pytest.mark.usefixtures("plugin")
def test_a_path_is_resolved_as_realpath_does_each_folder_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bugbout_shared

    deep = tmp_path.joinpath("a", "b", "c", "d", "e")
    deep.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "target.py").write_text("")
    (deep / "linked.py").symlink_to(elsewhere / "target.py")
    (tmp_path / "hop").symlink_to(deep)
    files = [deep / f"m{index}.py" for index in range(20)]
    for path in files:
        path.write_text("")
    monkeypatch.chdir(deep)
    odd = [
        str(deep / "linked.py"),  # a link to a file elsewhere
        str(tmp_path / "hop" / "m1.py"),  # a file in a linked folder
        str(tmp_path / "hop" / ".." / "d" / "m2.py"),  # up from a link
        str(deep / "." / "m3.py"),
        "m4.py",  # relative
        str(deep / "missing.py"),
        str(deep) + os.sep,
        "<string>",
        os.sep,
    ]
    for path in odd:
        for folder in (str(deep), str(elsewhere), str(tmp_path / "a")):
            real = os.path.realpath(path)
            expected = real == folder or real.startswith(folder + os.sep)
            assert bugbout_shared.inside(path, folder) == expected, (path, folder)
    assert bugbout_shared.inside(str(tmp_path / "hop" / "m5.py"), str(deep))
    assert not bugbout_shared.inside(str(deep / "linked.py"), str(deep))

    asked = _lstats(monkeypatch)
    for path in files:
        assert bugbout_shared.inside(str(path), str(deep))
    # one look at each file (is it a link?), and the folders above them once in all
    depth = len(deep.parts)
    assert len(asked) <= len(files) + depth, len(asked)
    assert [bugbout_shared.real(path) for path in [*map(str, files), *odd]] == [
        os.path.realpath(path) for path in [*map(str, files), *odd]
    ]


@pytest.mark.usefixtures("plugin")
def test_a_file_deeper_than_the_recursion_limit_is_resolved(tmp_path: Path) -> None:
    """A legal path of 1,500 folders: a module a patch puts there is still where
    ``realpath`` says (a folder resolved through its parent's recursed past the limit)."""
    import bugbout_shared

    deep = tmp_path
    for _ in range(1500):  # one folder at a time: pathlib's and os's recurse too
        deep /= "a"
        deep.mkdir()
    module = deep / "m.py"
    module.write_text("")
    try:
        assert bugbout_shared.real(str(module)) == os.path.realpath(module)
        assert bugbout_shared.inside(str(module), str(tmp_path))
    finally:  # removed a folder at a time: a removal of the tree would recurse
        module.unlink()
        while deep != tmp_path:
            deep.rmdir()
            deep = deep.parent


@pytest.mark.usefixtures("plugin")
def test_only_a_class_naming_a_comparison_is_looked_at_and_the_suspects_stay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bugbout_impostors

    class Plain:
        pass

    class Cheat(int):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = int.__hash__

    class Slot:
        __eq__ = object.__eq__  # a builtin's slot: not its own code
        __hash__ = object.__hash__

    asked: list[type] = []
    python_level = bugbout_impostors.python_level

    def counted(member: object) -> bool:
        asked.append(member)  # type: ignore[arg-type]
        return bool(python_level(member))

    monkeypatch.setattr(bugbout_impostors, "python_level", counted)
    found = bugbout_impostors.Impostors(str(tmp_path))
    classes = [klass for klass in _every_class() if id(klass) in found.seen]
    naming = [k for k in classes if set(vars(k)) & set(bugbout_impostors.PROBED)]
    assert len(asked) <= 3 * len(naming) < len(classes)
    expected = [
        klass
        for klass in naming
        if any(python_level(vars(klass).get(name)) for name in bugbout_impostors.PROBED)
    ]
    assert {id(k) for k in found.suspects} == {id(k) for k in expected}
    assert Cheat in found.suspects
    assert Plain not in found.suspects and Slot not in found.suspects


@pytest.mark.usefixtures("plugin")
def test_a_full_scan_looks_at_each_class_once_however_many_its_parents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bugbout_impostors

    found = bugbout_impostors.Impostors(str(tmp_path))
    top: type = type("Top", (), {})
    lattice = [top]
    for depth in range(16):  # each joins two children of the one above: 2 ** 16 paths down
        left = type(f"Left{depth}", (top,), {})
        right = type(f"Right{depth}", (top,), {})
        top = type(f"Join{depth}", (left, right), {"__eq__": lambda self, other: True})
        lattice += [left, right, top]
    looked: dict[int, int] = {}
    consider = bugbout_impostors.Impostors._consider

    def counted(self: object, klass: type) -> None:
        looked[id(klass)] = looked.get(id(klass), 0) + 1
        consider(self, klass)  # type: ignore[arg-type]

    monkeypatch.setattr(bugbout_impostors.Impostors, "_consider", counted)
    found.scan(everything=True)
    assert max(looked.values()) == 1  # walked once: a path each would be 65,536 looks
    joins = [klass for klass in lattice if klass.__name__.startswith("Join")]
    assert all(looked.get(id(klass)) == 1 for klass in joins)
    assert all(id(klass) in found.seen for klass in lattice)
    assert {id(k) for k in joins} <= {id(k) for k in found.suspects}


@pytest.mark.usefixtures("plugin")
def test_a_collection_s_scan_finds_a_new_class_beside_one_with_two_parents(
    tmp_path: Path,
) -> None:
    import bugbout_impostors

    found = bugbout_impostors.Impostors(str(tmp_path))

    class Left:
        pass

    class Right:
        pass

    class Cheat(Right):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = object.__hash__

    class Join(Left, Right):  # met under Left first, then newest under Right
        pass

    found.scan()  # as at a collection's start: Cheat may be freed before the end
    assert all(id(klass) in found.seen for klass in (Left, Right, Cheat, Join))
    assert Cheat in found.suspects


def _every_class() -> list[type]:
    """Every class the interpreter holds, from ``object`` down."""
    found: dict[int, type] = {}
    stack: list[type] = [object]
    while stack:
        klass = stack.pop()
        try:
            subclasses = type.__subclasses__(klass)
        except TypeError:
            continue
        for sub in subclasses:
            if id(sub) not in found:
                found[id(sub)] = sub
                stack.append(sub)
    return list(found.values())


def test_test_modules_are_told_to_inspect_by_their_real_files_each_folder_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import inspect
    import tempfile
    import types

    from bugbout.core.plumbing.tampering.canaries import key_line

    monkeypatch.syspath_prepend(str(outcomes_plugin_dir()))
    for name in ("bugbout_shared", "bugbout_hooks"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    deep = tmp_path.joinpath("a", "b", "c", "d", "tests")
    deep.mkdir(parents=True)
    (tmp_path / "hop").symlink_to(deep)
    items = []
    for index in range(20):
        (deep / f"test_m{index}.py").write_text("")
        module = types.ModuleType(f"bugbout_probe_m{index}")
        module.__file__ = str(tmp_path / "hop" / f"test_m{index}.py")
        items.append(types.SimpleNamespace(module=module))
    monkeypatch.setattr(inspect, "modulesbyfile", {})
    with tempfile.TemporaryFile() as outcomes:
        outcomes.write(key_line("k" * 64))
        outcomes.flush()
        monkeypatch.setenv("BUGBOUT_OUTCOMES_FD", str(outcomes.fileno()))
        import bugbout_hooks

        asked = _lstats(monkeypatch)
        bugbout_hooks._known_to_inspect(items)
    del sys.modules["bugbout_hooks"]  # it writes to a file closed now
    # one look at each file, the folders above once, and the link's target once
    assert len(asked) <= len(items) + 2 * len(deep.parts), len(asked)
    for index, item in enumerate(items):
        real = os.path.realpath(item.module.__file__)
        assert inspect.modulesbyfile[real] == f"bugbout_probe_m{index}"
        assert inspect.modulesbyfile[item.module.__file__] == f"bugbout_probe_m{index}"
