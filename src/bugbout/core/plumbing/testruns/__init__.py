"""Test runs: the test-runner kind, pytest runs, their outcome plugins and reports, runs
that hung, never started or hit their timeout, and where a task's suite is."""
