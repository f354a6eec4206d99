"""bugbout-tinyagent: the ``tinyagent`` command line and bugbout's adapter for it.

``bugbout_tinyagent.tinyagent`` is the agent (standard library only, no bugbout import);
``bugbout_tinyagent.plugin`` is the adapter, published under the ``bugbout`` entry points.
"""

__version__ = "0.1.0"
