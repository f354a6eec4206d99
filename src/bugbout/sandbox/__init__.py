"""Confinement primitives shared by sandbox plugins and test runs."""

from bugbout.sandbox.confinement import Confinement, Sandbox

__all__ = ["Confinement", "Sandbox"]
