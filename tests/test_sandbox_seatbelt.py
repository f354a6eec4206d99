"""Seatbelt's profile as text, parsed and decided here as macOS would (so it is checked
on any machine), and its command line and diagnosis."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bugbout.core.contract.errors import PluginError
from bugbout.plugins.sandboxes import seatbelt as seatbelt_module
from bugbout.plugins.sandboxes.seatbelt import Seatbelt, SeatbeltOptions, profile, quote
from bugbout.sandbox.confinement import Confinement
from sandbox_world import World


class Str(str):
    """A string literal of a parsed profile (a plain ``str`` is a symbol)."""


class Regex(str):
    """A ``#"..."`` regular expression of a parsed profile."""


Form = list["Form | str"]


def parse(text: str) -> list[Form]:
    """The forms of a seatbelt profile (a Scheme subset: lists, symbols, strings, regexes)."""
    forms: list[Form] = []
    stack: list[Form] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char.isspace():
            index += 1
        elif char == ";":
            index = text.index("\n", index)
        elif char == "(":
            stack.append([])
            index += 1
        elif char == ")":
            form = stack.pop()
            (stack[-1] if stack else forms).append(form)
            index += 1
        elif char == '"' or text.startswith('#"', index):
            regex = char == "#"
            index += 2 if regex else 1
            value = []
            while text[index] != '"':
                if text[index] == "\\" and not regex:
                    index += 1
                    assert text[index] in '\\"', f"unexpected escape at {index}"
                value.append(text[index])
                index += 1
            index += 1
            stack[-1].append(Regex("".join(value)) if regex else Str("".join(value)))
        else:
            end = index
            while end < len(text) and not text[end].isspace() and text[end] not in "()":
                end += 1
            stack[-1].append(text[index:end])
            index = end
    assert not stack, "unbalanced parentheses"
    return forms


@dataclass(frozen=True)
class Request:
    operation: str
    path: str | None = None
    unix: str | None = None
    """``local`` (bind, accept) or ``remote`` (connect) for a unix socket at ``path``."""
    ip: str | None = None
    target: str | None = None


def decide(text: str, request: Request) -> str:
    """What the profile decides for ``request``: the last rule that matches wins."""
    decision = "unmatched"
    for form in parse(text):
        if form[0] not in ("allow", "deny"):
            continue
        operations = [item for item in form[1:] if isinstance(item, str)]
        filters = [item for item in form[1:] if isinstance(item, list)]
        if not any(_operation(rule, request.operation) for rule in operations):
            continue
        if filters and not any(_matches(item, request) for item in filters):
            continue
        decision = str(form[0])
    return decision


def _operation(rule: str, operation: str) -> bool:
    if rule in ("default", operation):
        return True
    return rule.endswith("*") and operation.startswith(rule[:-1])


def _matches(item: Form, request: Request) -> bool:
    head, *rest = item
    path = request.path
    if head == "subpath":
        return path is not None and (path == rest[0] or path.startswith(f"{rest[0]}/"))
    if head == "literal":
        return path == rest[0]
    if head == "regex":
        return path is not None and re.search(str(rest[0]), path) is not None
    if head in ("local", "remote") and rest[0] == "unix-socket":
        inner = [f for f in rest[1:] if isinstance(f, list)]
        return request.unix == head and (not inner or any(_matches(f, request) for f in inner))
    if head in ("local", "remote") and rest[0] == "ip":
        return request.ip == head
    if head == "target":
        return request.target == rest[0]
    raise AssertionError(f"the test does not know the filter {item}")


@pytest.fixture
def belted(tmp_path: Path) -> tuple[Confinement, dict[str, Path]]:
    """A confinement with awkward names: spaces, quotes, backslashes, accents."""
    root = Path(os.path.realpath(tmp_path)) / 'a "quoted" dir\\with spaces é'
    paths = {
        "repo": root / "repo",
        "store": root / "repo" / ".bugbout",
        "home": root / "bugbout home",
        "work": root / "bugbout home" / "attempts" / "t1" / "work",
        "logs": root / "bugbout home" / "attempts" / "t1" / "logs",
        "env": root / "bugbout home" / "envs" / "py311",
        "user": root / "user",
        "temp": root / "temporary",
    }
    confinement = Confinement(
        workdir=paths["work"],
        writable=(paths["logs"],),
        readable=(paths["env"],),
        masked=(paths["repo"], paths["store"], paths["home"], paths["user"]),
    )
    return confinement, paths


def test_seatbelt_profile_quotes_every_path_exactly(
    belted: tuple[Confinement, dict[str, Path]],
) -> None:
    confinement, paths = belted
    text = profile(confinement, [paths["temp"]])
    forms = parse(text)
    assert forms[0] == ["version", "1"] and forms[1] == ["allow", "default"]
    strings = {str(value) for value in _strings(forms)}
    for name in ("repo", "store", "home", "work", "logs", "env", "user", "temp"):
        assert str(paths[name]) in strings, name
    assert quote('a"b\\c') == '"a\\"b\\\\c"'
    with pytest.raises(PluginError, match="control character"):
        quote("evil\n(allow default)")
    with pytest.raises(PluginError, match="control character"):
        profile(confinement.model_copy(update={"masked": (paths["repo"] / "x\ny",)}))


def _strings(forms: list[Form]) -> Iterator[str]:
    for form in forms:
        for item in form:
            if isinstance(item, list):
                yield from _strings([item])
            elif isinstance(item, Str):
                yield item


def test_seatbelt_profile_orders_rules_from_general_to_specific(
    belted: tuple[Confinement, dict[str, Path]],
) -> None:
    confinement, paths = belted
    lines = profile(confinement).splitlines()

    def line(start: str, path: Path) -> int:
        wanted = f"{start} (subpath {quote(str(path))}))"
        index: int = lines.index(wanted)
        return index

    assert lines[:2] == ["(version 1)", "(allow default)"]
    assert line("(deny file-read*", paths["home"]) < line("(allow file-read*", paths["work"])
    assert line("(deny file-read*", paths["home"]) < line("(allow file-read*", paths["env"])
    assert line("(deny file-read*", paths["repo"]) < line("(deny file-read*", paths["store"])
    assert lines.index("(deny file-write*)") < line("(allow file-write*", paths["work"])
    assert lines.index("(deny network*)") < next(
        i for i, text in enumerate(lines) if text.startswith("(allow network-outbound")
    )


def test_seatbelt_profile_decides_like_the_confinement(
    belted: tuple[Confinement, dict[str, Path]],
) -> None:
    confinement, paths = belted
    text = profile(confinement, [paths["temp"]])

    def read(path: Path, operation: str = "file-read-data") -> str:
        return decide(text, Request(operation, str(path)))

    def write(path: Path, operation: str = "file-write-data") -> str:
        return decide(text, Request(operation, str(path)))

    assert read(paths["repo"] / ".git" / "secret") == "deny"
    assert read(paths["store"] / "tasks.json") == "deny"
    assert read(paths["home"] / "credentials" / "token") == "deny"
    assert read(paths["home"] / "attempts" / "t2" / "work" / "patch.diff") == "deny"
    assert read(paths["user"] / ".ssh" / "id_ed25519") == "deny"
    assert read(paths["home"], "file-read-data") == "deny"  # not even listed...
    assert read(paths["home"], "file-read-metadata") == "allow"  # ...but can be walked through
    assert read(paths["home"] / "credentials", "file-read-metadata") == "deny"
    assert read(paths["work"] / "calc.py") == "allow"
    assert read(paths["logs"] / "run.log") == "allow"
    assert read(paths["env"] / "lib.txt") == "allow"
    assert read(Path("/usr/lib/libc.dylib")) == "allow"

    assert write(paths["work"] / "calc.py") == "allow"
    assert write(paths["logs"] / "run.log", "file-write-create") == "allow"
    assert write(paths["temp"] / "x") == "allow"
    assert write(Path("/dev/null")) == "allow"
    assert write(Path("/dev/fd/3")) == "allow"
    assert write(paths["env"] / "lib.txt") == "deny"
    assert write(paths["home"] / "probe", "file-write-create") == "deny"
    assert write(paths["repo"] / ".git" / "config") == "deny"
    assert write(Path("/etc/hosts")) == "deny"
    assert write(Path("/Users/someone/.zshrc")) == "deny"
    assert write(Path("/dev/disk0")) == "deny"


def test_seatbelt_profile_keeps_what_is_inside_the_checkout(tmp_path: Path) -> None:
    """A masked ``.git`` and a readable ``.venv`` inside the writable checkout: neither
    written nor renamed away from their rules."""
    work = Path(os.path.realpath(tmp_path)) / "work"
    confinement = Confinement(
        workdir=work, masked=(work / "sub" / ".git",), readable=(work / ".venv",)
    )
    text = profile(confinement)
    assert decide(text, Request("file-read-data", str(work / "sub" / ".git" / "HEAD"))) == "deny"
    assert decide(text, Request("file-write-data", str(work / "sub" / ".git" / "HEAD"))) == "deny"
    assert decide(text, Request("file-write-data", str(work / ".venv" / "site.py"))) == "deny"
    assert decide(text, Request("file-read-data", str(work / ".venv" / "site.py"))) == "allow"
    for moved in (work / "sub", work / "sub" / ".git", work / ".venv"):
        assert decide(text, Request("file-write-unlink", str(moved))) == "deny", moved
    assert decide(text, Request("file-write-unlink", str(work / "calc.py"))) == "allow"
    assert decide(text, Request("file-write-data", str(work / "sub" / "calc.py"))) == "allow"


def test_seatbelt_profile_network_and_sockets(tmp_path: Path) -> None:
    work = Path(os.path.realpath(tmp_path)) / "work"
    masked = work / "secret"
    confinement = Confinement(workdir=work, masked=(masked,))
    agent_socket = "/private/tmp/com.apple.launchd.x/Listeners"
    docker = "/Users/me/.docker/run/docker.sock"
    resolver = seatbelt_module.RESOLVER_SOCKET
    for network in (False, True):
        text = profile(confinement.model_copy(update={"network": network}))
        expected = "allow" if network else "deny"
        assert decide(text, Request("network-outbound", ip="remote")) == expected
        assert decide(text, Request("network-bind", ip="local")) == expected
        assert decide(text, Request("network-outbound", resolver, unix="remote")) == expected
        for path in (agent_socket, docker, f"{masked}/s.sock"):
            assert decide(text, Request("network-outbound", path, unix="remote")) == "deny", path
        assert decide(text, Request("network-outbound", f"{work}/s", unix="remote")) == "allow"
        assert decide(text, Request("network-bind", f"{work}/s", unix="local")) == "allow"
        assert decide(text, Request("network-bind", f"{masked}/s", unix="local")) == "deny"
        assert decide(text, Request("signal", target="others")) == "deny"
        assert decide(text, Request("signal", target="same-sandbox")) == "allow"
        assert decide(text, Request("process-info-pidinfo", target="others")) == "deny"
        assert decide(text, Request("appleevent-send")) == "deny"


def test_seatbelt_wraps_with_sandbox_exec(world: World) -> None:
    sandbox = Seatbelt()
    command = sandbox.wrap(["pytest", "-x"], world.confinement())
    assert command == [
        "/usr/bin/sandbox-exec",
        "-p",
        profile(world.confinement(), SeatbeltOptions().temp_dirs),
        "pytest",
        "-x",
    ]


def test_seatbelt_problem_off_macos_and_without_sandbox_exec(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if sys.platform != "darwin":
        problem = Seatbelt().problem()
        assert problem is not None and problem.startswith("seatbelt needs macOS (sandbox-exec)")
    monkeypatch.setattr(seatbelt_module, "_on_macos", lambda: True)
    problem = Seatbelt(SeatbeltOptions(executable="/nowhere/sandbox-exec")).problem()
    assert problem is not None and "sandbox-exec is missing" in problem
    assert "/nowhere/sandbox-exec" in problem and "\n" not in problem
