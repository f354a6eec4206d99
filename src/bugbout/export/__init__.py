"""``bugbout export``: the tasks and their ground truth as datasets other tools run
(SWE-bench's JSONL, Harbor's task directories)."""
