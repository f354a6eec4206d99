"""A contestant's model drafting problem statements (``tasks.statement: drafted``).

The drafter is a contestant named by ``tasks.drafter``: bugbout reaches its model as its
agent would (its ``base-url``, ``model`` and vendor key), over the Anthropic Messages,
OpenAI Chat Completions or Gemini API, and sends it only what a reporter would have seen.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from bugbout.core.contract.errors import BugboutError, ConfigError
from bugbout.core.contract.instances import Instance, instance
from bugbout.core.contract.types import AgentPlugin
from bugbout.core.store.records import digest

Wire = Literal["anthropic", "openai", "gemini"]
DRAFT_VERSION = "1"
"""Changes when what the drafter is asked changes: a stored draft is then drafted again."""
TIMEOUT = 120
"""Seconds one drafting request may take."""
MAX_TOKENS = 1024
INSTRUCTION = """\
You write the bug report a user of this project would have filed. Below is what the \
reporter saw: a description of the problem and the tests that fail, with what they said. \
Write a short problem statement from it: what goes wrong, how it shows, and what was \
expected. Do not say how to fix it, and do not name a function, variable or line of code \
that the text below does not show. Answer with the problem statement only."""
_DEFAULT_URLS: dict[Wire, str] = {
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com/v1",
    "gemini": "https://generativelanguage.googleapis.com",
}
_KEYS: dict[Wire, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
}
_HARNESS_WIRES: dict[str, Wire] = {
    "claude-code": "anthropic",
    "codex": "openai",
    "gemini-cli": "gemini",
}
_PROVIDER_WIRES: dict[str, Wire] = {"anthropic": "anthropic", "gemini": "gemini"}
"""mini-swe-agent's LiteLLM providers that are not OpenAI-compatible."""


class DraftingFailed(BugboutError):
    """The drafter gave no statement: unreachable, refused, timed out or answered nothing."""


@dataclass(frozen=True)
class Drafter:
    """A contestant's model, reached directly: where, how and as whom."""

    name: str
    wire: Wire
    base_url: str
    model: str
    key: str | None = field(default=None, repr=False)
    timeout: float = TIMEOUT

    @classmethod
    def of(
        cls,
        name: str | None,
        contestants: Mapping[str, Mapping[str, Any] | None],
        chosen: Mapping[str, Mapping[str, Any]] | None,
        check: Callable[[Instance], BaseModel],
    ) -> Drafter:
        """The drafter ``name`` (``tasks.drafter``) names: its entry of ``contestants``,
        with its entry of ``chosen`` (``contestant``) over it, its options validated by
        ``check`` (by its agent plugin); one line saying what to set when it cannot be
        reached."""
        if not name:
            raise ConfigError(
                "tasks.statement is drafted but tasks.drafter names no contestant; set "
                "tasks.drafter to one, e.g. tasks.drafter=codex"
            )
        entry = {**(contestants.get(name) or {}), **(chosen or {}).get(name, {})}
        if not entry:
            raise ConfigError(
                f"tasks.drafter: no contestant {name!r}; define it under contestants in "
                "bugbout.yaml or choose it with contestant=<name>"
            )
        role = "contestants" if name in contestants else "contestant"
        given = instance(role, AgentPlugin.kind, name, entry, example="codex")
        options = check(given)
        model = str(getattr(options, "model", None) or "")
        base_url = getattr(options, "base_url", None)
        wire = _HARNESS_WIRES.get(given.plugin)
        provider = ""
        if given.plugin == "mini-swe-agent" and "/" in model:
            provider, _, model = model.partition("/")
            wire = _PROVIDER_WIRES.get(provider, "openai")
        if wire is None:
            raise ConfigError(
                f"tasks.drafter: contestant {name!r} runs {given.plugin}, whose model bugbout "
                "cannot reach; name a claude-code, codex, gemini-cli or mini-swe-agent contestant"
            )
        if not model:
            raise ConfigError(f"tasks.drafter: set {given.where}.model to draft with it")
        if not base_url and provider and provider not in ("openai", *_PROVIDER_WIRES):
            raise ConfigError(f"tasks.drafter: set {given.where}.base-url to its {provider} API")
        env: dict[str, str] = {**os.environ, **dict(getattr(options, "env", None) or {})}
        names = (f"{provider.upper()}_API_KEY",) if provider else ()
        key = next((env[n] for n in (*names, *_KEYS[wire]) if env.get(n)), None)
        url = str(base_url or _DEFAULT_URLS[wire]).rstrip("/")
        return cls(name=name, wire=wire, base_url=url, model=model, key=key)

    @property
    def label(self) -> str:
        """How the drafter is named on a task: ``codex (gpt-5)``."""
        return f"{self.name} ({self.model})"

    def key_of(self, reported: str) -> str:
        """What a draft depends on: the model (its API and name) and its input; not where
        it is served (a local server's port may change from one bout to the next)."""
        return digest(self.wire, self.model, DRAFT_VERSION, reported)

    def draft(self, reported: str) -> tuple[str, dict[str, int]]:
        """The model's statement drafted from ``reported``, and the tokens it took."""
        import urllib.error
        import urllib.request

        url, headers, body = self._request(reported)
        request = urllib.request.Request(
            url,
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json", **headers},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                answer = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise DraftingFailed(f"{self.label} answered HTTP {exc.code} {exc.reason}") from None
        except OSError as exc:  # URLError is one
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError):
                raise DraftingFailed(f"{self.label} did not answer in {self.timeout:g} s") from None
            raise DraftingFailed(f"{self.label} cannot be reached at {url}: {reason}") from None
        except ValueError:
            raise DraftingFailed(f"{self.label} answered something that is not JSON") from None
        text, usage = self._answer(answer)
        if not text.strip():
            raise DraftingFailed(f"{self.label} answered no text")
        return text.strip(), usage

    def _request(self, reported: str) -> tuple[str, dict[str, str], dict[str, Any]]:
        """The URL, headers and body that ask this drafter's API for a statement."""
        if self.wire == "anthropic":
            headers = {"anthropic-version": "2023-06-01"}
            if self.key:
                headers["x-api-key"] = self.key
            body: dict[str, Any] = {
                "model": self.model,
                "max_tokens": MAX_TOKENS,
                "system": INSTRUCTION,
                "messages": [{"role": "user", "content": reported}],
            }
            return f"{_versioned(self.base_url, 'v1')}/messages", headers, body
        if self.wire == "gemini":
            headers = {"x-goog-api-key": self.key} if self.key else {}
            body = {
                "systemInstruction": {"parts": [{"text": INSTRUCTION}]},
                "contents": [{"role": "user", "parts": [{"text": reported}]}],
            }
            path = f"models/{self.model}:generateContent"
            return f"{_versioned(self.base_url, 'v1beta')}/{path}", headers, body
        headers = {"authorization": f"Bearer {self.key}"} if self.key else {}
        body = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": INSTRUCTION},
                {"role": "user", "content": reported},
            ],
        }
        return f"{_versioned(self.base_url, 'v1')}/chat/completions", headers, body

    def _answer(self, answer: Any) -> tuple[str, dict[str, int]]:
        """The text and the tokens of an answer in this drafter's wire format."""
        try:
            if self.wire == "anthropic":
                text = "".join(p["text"] for p in answer["content"] if p.get("type") == "text")
                used = answer.get("usage") or {}
                return text, _usage(used.get("input_tokens"), used.get("output_tokens"))
            if self.wire == "gemini":
                parts = answer["candidates"][0]["content"]["parts"]
                used = answer.get("usageMetadata") or {}
                return "".join(p.get("text", "") for p in parts), _usage(
                    used.get("promptTokenCount"), used.get("candidatesTokenCount")
                )
            used = answer.get("usage") or {}
            text = answer["choices"][0]["message"]["content"] or ""
            return text, _usage(used.get("prompt_tokens"), used.get("completion_tokens"))
        except (KeyError, IndexError, TypeError, AttributeError):
            raise DraftingFailed(f"{self.label} answered without a statement") from None


def _versioned(base_url: str, version: str) -> str:
    """``base_url`` ending in its API version (``/v1``), added when it has none."""
    last = base_url.rsplit("/", 1)[-1]
    return base_url if last.startswith("v1") else f"{base_url}/{version}"


def _usage(given: Any, taken: Any) -> dict[str, int]:
    """Tokens by kind, named as the agents' usage names them."""
    return {"input_tokens": int(given or 0), "output_tokens": int(taken or 0)}
