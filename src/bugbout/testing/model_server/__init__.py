"""A scripted model server: the real agent CLIs talk to it instead of a vendor's API.

The server replays a :class:`Script` of steps — :class:`Shell` (the model asks to run a shell
command in the agent's working directory) or :class:`Say` (the model's final answer) — in each
vendor's native wire format, so a real Codex, Claude Code, Gemini CLI or mini-swe-agent does real
work on a real checkout without spending quota (docs/agents.md says how each CLI is pointed at it).

It is stateless per request: the step a request gets is the number of tool results already in
that request's history, so retries and parallel conversations behave. Requests that are clearly
not the agent's main loop (titles, quota checks, token counts, routers) get a short answer and
do not advance anything.

Protocols, by path (query strings are ignored, a missing ``/v1`` prefix is tolerated):

* Anthropic Messages — ``POST /v1/messages`` and ``/v1/messages/count_tokens``; ``HEAD``/``GET /``;
* OpenAI Responses — ``POST /v1/responses``;
* OpenAI Chat Completions — ``POST /v1/chat/completions`` (tool calls, or mini-swe-agent's text
  actions when no tool is offered);
* Gemini — ``POST /v1beta/models/<model>:generateContent``, ``:streamGenerateContent``,
  ``:countTokens``;
* ``GET /v1/models`` lists one model.

Example::

    script = Script([Shell("echo fixed > proof.txt"), Say("Fixed it.")])
    with ModelServer(script) as server:
        run_agent(base_url=server.url)
    assert server.requests[0].path == "/v1/messages"

The package, one concern a module: :mod:`.script` (steps, scripts, recorded requests),
:mod:`.tools` (the shell tool and its arguments), :mod:`.replies` (ids, usage, JSON and
server-sent events), one module per protocol (:mod:`.anthropic`, :mod:`.responses`,
:mod:`.chat`, :mod:`.gemini`) and :mod:`.server` (routing, HTTP, :class:`ModelServer`, the
command line).

Run standalone (prints the URL, serves until killed)::

    python -m bugbout.testing.model_server --script steps.json --port 8765
"""

from bugbout.testing.model_server.replies import INPUT_TOKENS, OUTPUT_TOKENS
from bugbout.testing.model_server.script import (
    MSWEA_SUBMIT,
    RecordedRequest,
    Say,
    Script,
    Shell,
    Step,
)
from bugbout.testing.model_server.server import ModelServer, main

__all__ = [
    "INPUT_TOKENS",
    "MSWEA_SUBMIT",
    "OUTPUT_TOKENS",
    "ModelServer",
    "RecordedRequest",
    "Say",
    "Script",
    "Shell",
    "Step",
    "main",
]
