"""Rendering reports: text tables and HTML pages, shared by the reporters and the sweep summary."""
