"""bugbout's fixtures for plugin authors."""

pytest_plugins = ["bugbout.testing.fixtures"]
