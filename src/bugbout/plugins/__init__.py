"""bugbout's built-in plugins: one module per plugin, under a folder per kind."""

BUILTIN_PLUGINS: tuple[str, ...] = (
    "bugbout.plugins.miners.git_history",
    "bugbout.plugins.issue_sources.github",
    "bugbout.plugins.issue_sources.file",
    "bugbout.plugins.issue_sources.commit",
    "bugbout.plugins.environments.uv",
    "bugbout.plugins.environments.interpreter",
    "bugbout.plugins.sandboxes.auto",
    "bugbout.plugins.sandboxes.bubblewrap",
    "bugbout.plugins.sandboxes.seatbelt",
    "bugbout.plugins.sandboxes.none",
    "bugbout.plugins.agents.codex",
    "bugbout.plugins.agents.claude_code",
    "bugbout.plugins.agents.gemini_cli",
    "bugbout.plugins.agents.mini_swe_agent",
    "bugbout.plugins.agents.command",
    "bugbout.plugins.examiners.reproduce",
    "bugbout.plugins.examiners.specify",
    "bugbout.plugins.judges.majority",
    "bugbout.plugins.judges.unanimous",
    "bugbout.plugins.judges.strict",
    "bugbout.plugins.judges.cross_vendor",
    "bugbout.plugins.auditors.gate",
)
"""Built-in plugin modules, registered in this order before any entry-point plugin."""
