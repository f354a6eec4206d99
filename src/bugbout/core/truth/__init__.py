"""Ground truth: the maintainers' tests before and after their fix."""
