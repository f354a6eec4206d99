"""The audit: every failure a patch causes, classified."""
