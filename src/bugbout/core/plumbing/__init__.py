"""The plumbing the stages share, one subsystem per package; imports point down:

- ``tools`` and ``bench``: the bout's tools and the test bench every run after the race takes;
- ``selection``: which tests a patch can affect;
- ``testruns``: the test-runner kind and pytest runs;
- ``environments`` and ``tampering``, independent of each other: test environments, and what
  makes a test run tamper-evident;
- ``trees``: git, checkouts, test trees and patches;
- ``confinement``, ``project`` and ``models``, independent of each other: what agents and
  tests may see and consume, what a project's files declare, what models cost and know;
- ``runtime``: executors, stopping, progress and ``BUGBOUT_HOME``.
"""
