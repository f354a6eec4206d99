"""What agents and test runs may see and consume: the confinement policy, limits and the
guard's lifeline, processes with timeouts, what a run left behind, and reading what an
agent could write."""
