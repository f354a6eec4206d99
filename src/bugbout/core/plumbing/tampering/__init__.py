"""What makes a test run tamper-evident: canaries and their twins in the files a run
targets, values that equal anything, pytest's own tally against the outcome stream's,
and the static look at a patch's source for code a fix has no reason to contain."""
