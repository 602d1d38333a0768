"""ISMB trace (the page of :class:`bnexplore.apps.ISMBTrace`)."""
import bnexplore.apps as bxa

if __name__.startswith("bokeh"):
    bxa.serve("ismb_trace")
