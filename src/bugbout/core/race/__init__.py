"""The race: contestants on every task, each in a fresh, confined checkout."""
