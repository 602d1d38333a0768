"""Clustering hierarchy (the page of :class:`bnexplore.apps.Clustering`)."""
import bnexplore.apps as bxa

if __name__.startswith("bokeh"):
    bxa.serve("clustering")
