"""The plugin contract: hook specs, plugin records, the plugin manager, settings and errors."""
