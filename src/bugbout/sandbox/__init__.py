"""Confinement primitives shared by sandbox plugins and test runs."""
