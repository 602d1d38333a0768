"""Compare classifiers (the page of :class:`bnexplore.apps.CompareClassifiers`)."""
import bnexplore.apps as bxa

if __name__.startswith("bokeh"):
    bxa.serve("compare")
