"""An attempt's transcript on its task page: the test runs it made and the first failing
step up front, then every step (messages, commands with their exit codes, edits, tool
calls, the final message), folded; or the end of its logs when no plugin read them.
Everything is embedded and escaped: no link leaves the page."""

from __future__ import annotations

from html import escape

from bugbout.core.contract.transcript import Step
from bugbout.core.report.transcripts import Transcript

STYLE = """
ol.transcript { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; padding-left: 40px; }
ol.transcript li { margin: 2px 0; }
ol.transcript li.failed { background: #ffebe9; }
ol.transcript li.first-failure { outline: 2px solid #cf222e; }
ol.transcript li.final { font-weight: 600; }
ol.transcript pre { margin: 2px 0 6px; white-space: pre-wrap; color: #57606a; max-height: 240px;
                    overflow: auto; }
ol.transcript span.kind { color: #8250df; }
p.runs code { font-size: 12px; }
"""
_LABELS = {"message": "said", "command": "$", "edit": "edited", "tool": "tool", "final": "final"}


def transcript_html(transcript: Transcript | None, anchor: str) -> str:
    """``transcript`` as a folded list; ``anchor`` prefixes its steps' ids."""
    if transcript is None:
        return '<p class="empty">No transcript: the log folder is no longer on disk.</p>'
    if not transcript.steps:
        raw = transcript.raw or "(the agent printed nothing)"
        return (
            "<details><summary>the agent's output (its format is not read by its plugin)"
            f"</summary><pre>{escape(raw)}</pre></details>"
        )
    out = [_summary(transcript, anchor)]
    items = []
    for index, step in enumerate(transcript.steps):
        if transcript.left_out and index == len(transcript.steps) // 2:
            items.append(f"<li>… {transcript.left_out} steps left out …</li>")
        items.append(_step(step, index, anchor, first=index == transcript.first_failure))
    out.append(
        f"<details><summary>transcript ({len(transcript.steps) + transcript.left_out} "
        f'steps)</summary><ol class="transcript" start="1">{"".join(items)}</ol></details>'
    )
    return "\n".join(out)


def _summary(transcript: Transcript, anchor: str) -> str:
    """The test runs, each with its exit code, and the first failing step."""
    runs = [
        f'<a href="#{anchor}-{i + 1}"><code>{escape(_short(transcript.steps[i].text))}</code></a>'
        f" → {_exit(transcript.steps[i])}"
        for i in transcript.test_runs
    ]
    text = "test runs: " + ("; ".join(runs) if runs else "none")
    first = transcript.first_failure
    if first is not None:
        step = transcript.steps[first]
        text += (
            f'. First failure: <a href="#{anchor}-{first + 1}">step {first + 1}</a> '
            f"<code>{escape(_short(step.text))}</code> → {_exit(step)}"
        )
    return f'<p class="runs">{text}</p>'


def _step(step: Step, index: int, anchor: str, *, first: bool) -> str:
    classes = [step.kind] + (["failed"] if step.failed else []) + (["first-failure"] * first)
    head = f'<span class="kind">{_LABELS[step.kind]}</span> {escape(step.text)}'
    if step.kind == "command":
        head += f" → {_exit(step)}"
    output = f"<pre>{escape(step.output)}</pre>" if step.output.strip() else ""
    return f'<li id="{anchor}-{index + 1}" class="{" ".join(classes)}">{head}{output}</li>'


def _exit(step: Step) -> str:
    if step.exit_code is not None:
        return f"exit {step.exit_code}"
    return "failed" if step.failed else "ok"


def _short(text: str, limit: int = 120) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
