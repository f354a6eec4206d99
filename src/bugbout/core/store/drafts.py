"""The drafts of problem statements a model wrote (``drafts.json``): read by mining, which
drafts them, and by the report, which counts what drafting them cost."""

from __future__ import annotations

from pydantic import Field

from bugbout.core.store.records import Record, RecordRoot

DRAFTS = "drafts.json"
SCRUBBED = "scrubbed"
"""The origin of a task's scrubbed statement, and how its origin starts when a draft
was refused or failed."""
DRAFTED = "drafted by"


class Draft(Record):
    """A model's draft of a task's statement, kept whether it was used or refused."""

    key: str
    drafter: str
    """The contestant and model that drafted it: ``codex (gpt-5)``."""
    contestant: str = ""
    """The contestant whose model drafted it (empty in a draft kept before it was said)."""
    model: str = ""
    """Its model, as the contestant names it (empty as ``contestant`` is)."""
    reported: str
    """What the model was given: the task's scrubbed statement."""
    text: str
    refused: str = ""
    """Why it is not used (how it leaks the fix); empty when it is."""
    usage: dict[str, int] = Field(default_factory=dict)
    """The tokens drafting it took, by kind."""

    @property
    def origin(self) -> str:
        """The origin of the statement of a task given this draft: drafted by it, or,
        when it is refused, scrubbed and why."""
        if self.refused:
            return f"{SCRUBBED}: the draft by {self.drafter} is refused: {self.refused}"
        return f"{DRAFTED} {self.drafter}"


class Drafts(RecordRoot[dict[str, Draft]]):
    """Every task's draft, by task id, as stored in ``drafts.json``."""

    root: dict[str, Draft] = Field(default_factory=dict)
