"""HoloViews/Bokeh plot builders: one function per picture, no Panel and no algorithms.

Examples
--------
>>> import networkx as nx
>>> import bnexplore.viz as bv
>>> plot = bv.dag_plot(nx.DiGraph([("A", "B")]), title="A -> B")
"""
from ._style import TABLE_CSS, label_colors, presentation
from .curves import heatmap, roc_plot
from .diff import arc_diff, arc_diff_plot
from .graphs import dag_plot, layered_layout
from .inference import posterior_plot

__all__ = ["dag_plot", "layered_layout", "roc_plot", "heatmap", "arc_diff", "arc_diff_plot", "presentation",
           "label_colors", "TABLE_CSS", "posterior_plot"]
