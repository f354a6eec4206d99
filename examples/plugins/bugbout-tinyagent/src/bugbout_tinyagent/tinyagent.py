"""tinyagent: a very small coding agent for the command line, standard library only.

It reads its task on standard input, asks an OpenAI-compatible Chat Completions endpoint
what to do, runs the shell commands the model asks for (its one tool, ``bash``) in the
current directory, and loops until the model answers without asking for one.

    echo "Make the tests pass" | tinyagent --base-url http://127.0.0.1:8000/v1 --model m
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

SYSTEM = (
    "You are a coding agent in a checkout of a software project. Use the bash tool to read "
    "and change files and to run the tests. When you are done, reply with a short summary."
)
TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a shell command in the project's directory; returns its output.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The command."}},
            "required": ["command"],
        },
    },
}
MAX_OUTPUT = 20_000


def complete(args: argparse.Namespace, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """One Chat Completions request; the parsed response."""
    body = {"model": args.model, "messages": messages, "tools": [TOOL]}
    headers = {"Content-Type": "application/json"}
    if os.environ.get(args.api_key_env):
        headers["Authorization"] = f"Bearer {os.environ[args.api_key_env]}"
    url = args.base_url.rstrip("/") + "/chat/completions"
    request = urllib.request.Request(url, json.dumps(body).encode(), headers)
    with urllib.request.urlopen(request, timeout=args.timeout) as response:
        reply: dict[str, Any] = json.load(response)
    return reply


def run(command: str, timeout: float) -> str:
    """``command``'s output and exit status, as the model sees them."""
    try:
        done = subprocess.run(
            command, shell=True, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return f"(timed out after {timeout:g}s)"
    return f"{(done.stdout + done.stderr)[-MAX_OUTPUT:]}\n(exit status {done.returncode})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tinyagent", description="A very small coding agent.")
    parser.add_argument("--base-url", default="https://api.openai.com/v1")
    parser.add_argument("--model", default="gpt-4.1-mini")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY", help="variable with the key")
    parser.add_argument("--max-steps", type=int, default=50, help="model turns at most")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per request/command")
    parser.add_argument("--json", action="store_true", help="JSON lines on stdout")
    args = parser.parse_args(argv)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": sys.stdin.read()},
    ]
    usage = {"prompt_tokens": 0, "completion_tokens": 0}

    def emit(event: dict[str, Any]) -> None:
        if args.json:
            print(json.dumps({**event, "usage": usage}), flush=True)

    for _ in range(args.max_steps):
        try:
            reply = complete(args, messages)
            message = reply["choices"][0]["message"]
        except urllib.error.HTTPError as exc:
            print(f"tinyagent: the model answered {exc.code} {exc.reason}", file=sys.stderr)
            return 1
        except (OSError, ValueError, LookupError, TypeError) as exc:
            print(f"tinyagent: no answer from {args.base_url}: {exc}", file=sys.stderr)
            return 1
        for key in usage:
            usage[key] += int((reply.get("usage") or {}).get(key) or 0)
        messages.append(message)
        if not message.get("tool_calls"):
            text = message.get("content") or ""
            emit({"type": "done", "text": text})
            if not args.json:
                print(text)
            return 0
        for call in message["tool_calls"]:
            try:
                command = str(json.loads(call["function"]["arguments"])["command"])
            except (LookupError, TypeError, ValueError):
                command, output = "", 'error: call bash with {"command": "..."}'
            else:
                print(f"$ {command}", file=sys.stderr, flush=True)
                output = run(command, args.timeout)
            emit({"type": "command", "command": command, "output": output})
            messages.append({"role": "tool", "tool_call_id": call.get("id"), "content": output})
    print(f"tinyagent: stopped after {args.max_steps} model turns", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
