"""bugbout's fixtures for plugin authors: the scripted model server, among others."""

pytest_plugins = ["bugbout.testing.fixtures"]
