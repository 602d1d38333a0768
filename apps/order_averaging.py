"""Order averaging (the page of :class:`bnexplore.apps.OrderAveraging`)."""
import bnexplore.apps as bxa

if __name__.startswith("bokeh"):
    bxa.serve("order_averaging")
