"""Ask the averaged model (the page of :class:`bnexplore.apps.AskModel`)."""
import bnexplore.apps as bxa

if __name__.startswith("bokeh"):
    bxa.serve("ask_model")
