"""Forests (the page of :class:`bnexplore.apps.Forests`)."""
import bnexplore.apps as bxa

if __name__.startswith("bokeh"):
    bxa.serve("forests")
