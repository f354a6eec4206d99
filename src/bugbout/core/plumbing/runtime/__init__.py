"""How a bout's work runs: dispatched by an executor, stopped on a signal without losing
what is done, reporting its progress, and where bugbout keeps what outlives a bout."""
