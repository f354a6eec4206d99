"""Which of a repository's tests a patch can affect, from a coverage map of the unfixed
code."""
