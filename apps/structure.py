"""Learn a structure (the page of :class:`bnexplore.apps.LearnStructure`)."""
import bnexplore.apps as bxa

if __name__.startswith("bokeh"):
    bxa.serve("structure")
