"""The scripted model's ``Say(..., echo=...)``: it says back what the agent showed it."""

from __future__ import annotations

from bugbout.testing.model_server.script import Say, Script, Shell, scripted_action


def test_say_echoes_each_distinct_match_of_the_request() -> None:
    script = Script([Shell("ls"), Say("Done.", echo=r"code-\d+")])
    body = {"system": "rules... code-17 ...", "messages": ["code-17", "code-4", "other"]}
    assert scripted_action(script, 1, body) == Say("Done. code-17 code-4")
    assert scripted_action(script, 1, {"messages": []}) == Say("Done.")
    assert scripted_action(script, 0, body) == Shell("ls")
