""""Compare with": pin the structure of the current setting and draw the next one beside
it, its arcs coloured by :func:`bnexplore.viz.diff.arc_diff` (added, removed, reversed).

An app that draws a structure mixes in :class:`PinStructure` and implements
:meth:`PinStructure.current_structure`; :meth:`PinStructure.pin_controls` gives the two
buttons and :meth:`PinStructure.compare_view` the pair (nothing while nothing is pinned).
"""
from __future__ import annotations

import networkx as nx
import panel as pn
import param

from .text import md_text


class PinStructure(param.Parameterized):
    """A pinned structure (``(label, DAG)``) that the current one is drawn beside."""

    pinned = param.Parameter(default=None, precedence=-1,
                             doc="The pinned setting: (label, networkx.DiGraph) or None.")

    def current_structure(self) -> tuple[str, nx.DiGraph]:
        """The label of the current setting and its structure. Override."""
        raise NotImplementedError

    def pin(self, *_) -> None:
        """Pin the current setting's structure."""
        label, dag = self.current_structure()
        self.pinned = (label, dag.copy())

    def unpin(self, *_) -> None:
        self.pinned = None

    def pin_controls(self) -> pn.FlexBox:
        """"Compare with this setting" and "Clear comparison" buttons: made once per app,
        so that a view showing them is updated in place."""
        return self.kept("pin_controls", self._make_pin_controls)

    def _make_pin_controls(self) -> pn.FlexBox:
        pin = pn.widgets.Button(label="Pin this setting to compare", color="primary",
                                css_classes=["bnx-pin"], width=340)
        unpin = pn.widgets.Button(label="Clear comparison", css_classes=["bnx-unpin"], width=240,
                                  visible=self.param.pinned.rx().rx.is_not(None))
        pin.on_click(self.pin)
        unpin.on_click(self.unpin)
        return pn.FlexBox(pin, unpin, margin=(5, 5))

    def diff(self):
        """:func:`~bnexplore.viz.diff.arc_diff` of the pinned and the current structure,
        or None when nothing is pinned."""
        from bnexplore.viz.diff import arc_diff

        if self.pinned is None:
            return None
        return arc_diff(self.pinned[1], self.current_structure()[1])

    def compare_pane(self, **plot_kwargs) -> pn.viewable.Viewable:
        """The pinned structure beside the current one, with the counts (empty while
        nothing is pinned)."""
        from bnexplore.viz.diff import side_by_side

        if self.pinned is None:
            return pn.pane.Markdown("*Pin a setting to draw the next one beside it, with the "
                                    "arcs added, removed and reversed marked.*",
                                    css_classes=["bnx-compare-empty"], margin=(0, 10))
        label0, g0 = self.pinned
        label1, g1 = self.current_structure()
        d = self.diff()
        c = d.counts
        text = (f"**Pinned**: {md_text(label0)} · **now**: {md_text(label1)} · "
                f"<span class='bnx-diff-counts'>{c['added']} added, {c['removed']} removed, "
                f"{c['reversed']} reversed, {c['kept']} kept</span>")
        big = bool(getattr(self, "presentation", False))
        pair = side_by_side(g0, g1, titles=("pinned", "now"), presentation=big, **plot_kwargs)
        if big:             # projector sizes: one above the other, each the full width
            pair = pair.cols(1)
        return pn.Column(pn.pane.Markdown(text, css_classes=["bnx-compare"], margin=(0, 10)),
                         pn.pane.HoloViews(pair, sizing_mode="stretch_width"),
                         sizing_mode="stretch_width")
