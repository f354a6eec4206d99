"""bugbout's fixtures for plugin authors (bugbout_plugins, register_plugin,
fixed_bug_repository, model_server, bugbout_home) and the conformance suites' own."""

pytest_plugins = ["bugbout.testing.fixtures"]
