"""Cross-examination: every author's tests against every patch."""
