"""Mixture weights (the page of :class:`bnexplore.apps.MixtureWeights`)."""
import bnexplore.apps as bxa

if __name__.startswith("bokeh"):
    bxa.serve("mixture_weights")
