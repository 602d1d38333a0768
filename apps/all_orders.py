"""Averaging over orders (the page of :class:`bnexplore.apps.AllOrders`)."""
import bnexplore.apps as bxa

if __name__.startswith("bokeh"):
    bxa.serve("all_orders")
