"""Edge confidence (the page of :class:`bnexplore.apps.EdgeConfidence`)."""
import bnexplore.apps as bxa

if __name__.startswith("bokeh"):
    bxa.serve("edge_confidence")
