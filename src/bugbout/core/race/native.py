"""A native setup: the team's own configuration of a coding CLI (its instruction file,
settings, MCP servers, skills), copied into the agent's private HOME. What it declares
cannot widen the sandbox: its files are copied (no symlink, no credentials), its MCP
servers' programs are shown read-only unless bugbout hides them, and the endpoints they
reach are named, for the egress allow-list and the doctor."""

from __future__ import annotations

import hashlib
import json
import shutil
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bugbout.core.contract.errors import ConfigError
from bugbout.core.race.agents import origin

CREDENTIALS = frozenset(
    {".credentials.json", "auth.json", "oauth_creds.json", "google_accounts.json"}
)
"""The files in which the CLIs keep their logins: never part of a setup."""
MAX_FILES = 1_000


@dataclass(frozen=True)
class McpServer:
    """An MCP server a setup declares: a program the CLI starts (inside the sandbox), or
    a URL it reaches."""

    name: str
    argv: tuple[str, ...] = ()
    url: str | None = None


@dataclass(frozen=True)
class NativeSetup:
    """The files of a team's setup (where each lands under the CLI's configuration folder,
    from where) and the MCP servers they declare."""

    source: Path
    folder: str
    """Where the CLI reads its user configuration in HOME: ``.claude``, ``.codex``."""
    files: dict[str, Path]
    servers: tuple[McpServer, ...] = field(default_factory=tuple)

    @classmethod
    def read(cls, given: str, folder: str, instructions: str) -> NativeSetup:
        """The setup at ``given``: a folder copied whole into ``~/<folder>``, or a single
        instruction file copied as ``~/<folder>/<instructions>``."""
        source = Path(given).expanduser()
        if not source.exists():
            raise ConfigError(f"native setup {given!r} does not exist; name a folder or a file")
        if source.is_file() and not source.is_symlink():
            return cls(source, folder, {instructions: source.resolve()})
        return cls(source, folder, _files(source))

    def digests(self) -> dict[str, str]:
        """Each file's SHA-256, by where it lands: the setup as part of an attempt's key."""
        return {
            name: hashlib.sha256(path.read_bytes()).hexdigest() for name, path in self.files.items()
        }

    def copy(self, home: Path) -> Path:
        """Copy the setup into ``home``; its configuration folder there."""
        target = home / self.folder
        for name, path in self.files.items():
            destination = target / name
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, destination)
        return target

    def endpoints(self) -> tuple[str, ...]:
        """The origins of the MCP servers it reaches over the network."""
        return tuple(sorted({origin(server.url) for server in self.servers if server.url}))

    def programs(self) -> tuple[str, ...]:
        """What its MCP servers' commands name: each program (found on ``PATH``) and its
        arguments, for the sandbox to show those that are files."""
        named: list[str] = []
        for server in self.servers:
            if server.argv:
                found = shutil.which(server.argv[0]) or server.argv[0]
                named += [str(Path(found).resolve()) if Path(found).exists() else found]
                named += server.argv[1:]
        return tuple(named)

    def declaring(self, name: str, key: str) -> NativeSetup:
        """This setup with the MCP servers its file ``name`` (JSON or TOML) declares under
        ``key``: a table in the shape Claude Code, Codex and Gemini CLI share
        (``command`` and ``args``, or a ``url``)."""
        path = self.files.get(name)
        if path is None:
            return self
        try:
            text = path.read_text()
            data = tomllib.loads(text) if name.endswith(".toml") else json.loads(text)
        except (ValueError, UnicodeError) as exc:
            raise ConfigError(f"native setup {self.source}: {name} cannot be read: {exc}") from None
        table = data.get(key) if isinstance(data, dict) else None
        return NativeSetup(self.source, self.folder, self.files, mcp_servers(table))

    def describe(self) -> str:
        """One line for the doctor: what is copied, which servers start, what opens."""
        started = [s.name for s in self.servers if s.argv] or ["none"]
        opened = list(self.endpoints()) or ["none"]
        return (
            f"copies {len(self.files)} file(s) from {self.source} into ~/{self.folder}; "
            f"MCP servers started: {', '.join(started)}; endpoints opened: {', '.join(opened)}"
        )


def mcp_servers(declared: Any) -> tuple[McpServer, ...]:
    """The servers of an ``mcpServers`` table; a malformed entry is an error."""
    if declared is None:
        return ()
    if not isinstance(declared, Mapping):
        raise ConfigError("a native setup's MCP servers must be a table of name: server")
    servers = []
    for name, entry in sorted(declared.items()):
        if not isinstance(entry, Mapping):
            raise ConfigError(f"MCP server {name!r}: give a command or a url")
        url = entry.get("url") or entry.get("httpUrl")
        command = entry.get("command")
        args = entry.get("args", [])
        if isinstance(command, str) and isinstance(args, list):
            servers.append(McpServer(str(name), (command, *map(str, args))))
        elif isinstance(url, str) and urlsplit(url).scheme in ("http", "https"):
            servers.append(McpServer(str(name), url=url))
        else:
            raise ConfigError(f"MCP server {name!r}: give a command (with args) or an http(s) url")
    return tuple(servers)


def _files(source: Path) -> dict[str, Path]:
    """Every file of the setup folder by its relative path; a symlink (it could name a
    file the sandbox hides) or a login file is refused."""
    files: dict[str, Path] = {}
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source).as_posix()
        if path.is_symlink():
            raise ConfigError(
                f"native setup {source}: {relative} is a symlink; copy the file it names instead"
            )
        if path.name in CREDENTIALS:
            raise ConfigError(
                f"native setup {source}: {relative} holds a login; remove it (the agent's key "
                "comes from the environment)"
            )
        if path.is_file():
            files[relative] = path
        if len(files) > MAX_FILES:
            raise ConfigError(
                f"native setup {source} holds over {MAX_FILES} files; name a smaller folder"
            )
    return files
