"""bugbout's core: hook specs, plugin manager, records, store and pipeline stages.

Nothing here imports Hydra: the core takes pydantic settings only.
"""
