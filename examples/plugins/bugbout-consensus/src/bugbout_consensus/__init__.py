"""bugbout-consensus: a judge policy that picks only on the consensus of several authors."""

__version__ = "0.1.0"
