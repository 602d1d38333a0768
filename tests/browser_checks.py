"""Assertions shared by the apps' browser tests."""

#: the apps' deliberate sideways-scrolling panels (a picture wider than a narrow window).
SCROLL_PANELS = ".bnx-dag, .bnx-fixed"


def assert_no_horizontal_scroll(page) -> None:
    """Neither the page nor the template's main area scrolls sideways."""
    widths = page.evaluate("""() => {
        const out = {page: [document.scrollingElement.scrollWidth, window.innerWidth]};
        const main = document.querySelector('#main');
        if (main) out.main = [main.scrollWidth, main.clientWidth];
        return out; }""")
    for where, (scroll, client) in widths.items():
        assert scroll <= client + 1, (f"the {where} scrolls sideways: {scroll}px of content "
                                      f"in {client}px")


def assert_fits_and_no_error(page) -> None:
    """No horizontal scroll; no plot reaches past the window's right edge unless it sits
    in a sideways-scrolling panel that fits; no panel shows an error box."""
    assert_no_horizontal_scroll(page)
    right = page.locator("canvas").evaluate_all("""els => Math.max(0, ...els.map(e => {
        // a canvas lives in shadow roots: walk up through their hosts to a scroll panel
        let n = e, panel = null;
        while (n && !panel) {
            if (n.matches && n.matches('%s')) panel = n;
            n = n.parentElement || (n.getRootNode && n.getRootNode().host) || null;
        }
        return (panel || e).getBoundingClientRect().right; }))""" % SCROLL_PANELS)
    width = page.evaluate("() => window.innerWidth")
    assert right <= width + 1, f"a plot is cut off: its right edge is at {right}px of {width}px"
    boxes = page.locator(".alert-danger")
    # an Alert's text lives in its shadow root: inner_text of the host is empty
    assert boxes.count() == 0, boxes.evaluate_all(
        "els => els.map(e => Array.from((e.shadowRoot || e).childNodes)"
        "  .filter(n => n.nodeName !== 'STYLE').map(n => n.textContent).join(''))")


def assert_boxes_apart(plot) -> None:
    """No two node boxes of a :func:`bnexplore.viz.dag_plot` picture overlap, and each
    box is at least as wide as its label (computed from the layout, no browser)."""
    from bnexplore.viz.graphs import node_boxes, text_width_px

    b = node_boxes(plot)
    x0, x1, y0, y1 = (b[c].to_numpy() for c in ("x0", "x1", "y0", "y1"))
    for i in range(len(b)):
        for j in range(i + 1, len(b)):
            apart = x1[i] <= x0[j] or x1[j] <= x0[i] or y1[i] <= y0[j] or y1[j] <= y0[i]
            assert apart, f"the boxes of {b['name'][i]!r} and {b['name'][j]!r} overlap"
    for lab, w, f in zip(b["label"], x1 - x0, b["font_px"]):
        assert w >= text_width_px(lab, f), f"label {lab!r} is wider than its box"


def _px(size) -> float:
    s = str(size)
    if s.endswith("pt"):
        return float(s[:-2]) * 4 / 3
    if s.endswith("px"):
        return float(s[:-2])
    if s.endswith("em"):
        return float(s[:-2]) * 16
    return float(s)


def small_texts(fig, least: float = 18.0) -> list[str]:
    """The texts of a rendered Bokeh figure (title, axis labels and ticks, legend,
    colour bar, text glyphs such as node and cell labels) drawn smaller than ``least``
    pixels; a text that is not shown (no title, a hidden axis) does not count."""
    from bokeh.models import (Axis, CategoricalAxis, ColorBar, GlyphRenderer, Legend, Text,
                              Title)

    out = []

    def check(what, size):
        if isinstance(size, dict):
            size = size.get("value")
        if size is not None and not isinstance(size, str) or (isinstance(size, str) and size[:1].isdigit()):
            if _px(size) < least:
                out.append(f"{what}: {size}")

    for m in fig.references():
        if isinstance(m, Title) and m.text:
            check("title", m.text_font_size)
        elif isinstance(m, Axis) and m.visible:
            if m.axis_label:
                check("axis label", m.axis_label_text_font_size)
            if _px(m.major_label_text_font_size) > 1:      # 1 px: labels hidden on purpose
                check("ticks", m.major_label_text_font_size)
            if isinstance(m, CategoricalAxis) and m.group_text_font_size and any(
                    isinstance(f, tuple) for f in getattr(m.ticker, "factors", None) or []):
                check("group ticks", m.group_text_font_size)
        elif isinstance(m, Legend) and m.items:
            check("legend", m.label_text_font_size)
        elif isinstance(m, ColorBar):
            check("colour bar", m.major_label_text_font_size)
            if m.title:
                check("colour bar title", m.title_text_font_size)
        elif isinstance(m, GlyphRenderer) and isinstance(m.glyph, Text) and m.visible:
            check("text", m.glyph.text_font_size)
    return out


def assert_structures_not_squeezed(page) -> None:
    """No structure drawing (:func:`bnexplore.viz.dag_plot`, a Bokeh graph in pixel
    coordinates) is drawn narrower than its layout: a squeezed drawing keeps its text
    size while its boxes shrink, so labels would spill out of their boxes."""
    drawn = page.evaluate("""() => Array.from(Bokeh.index.query(v => v.model != null
            && Array.isArray(v.model.renderers) && v.frame !== undefined
            && v.model.renderers.some(r => r.type === 'GraphRenderer')))
        .filter(v => v.el && v.el.isConnected && v.frame.bbox.width > 0)
        .map(v => [v.model.title ? v.model.title.text : '', v.frame.bbox.width,
                   v.model.x_range.end - v.model.x_range.start])""")
    for title, frame, span in drawn:
        assert frame >= span - 2, (f"the structure {title!r} is squeezed: {frame:.0f}px for a "
                                   f"layout {span:.0f}px wide")


def assert_pictures_fit_main(page) -> None:
    """No picture panel (:data:`SCROLL_PANELS`) scrolls sideways and no figure is
    wider than the template's main area: every picture fits the window as it is."""
    found = page.evaluate("""() => {
        const main = document.querySelector('#main');
        const room = main ? main.clientWidth : window.innerWidth;
        const panels = [];
        const walk = root => root.querySelectorAll('*').forEach(e => {
            if (e.matches && e.matches('%s') && e.offsetParent !== null)
                panels.push([e.scrollWidth, e.clientWidth]);
            if (e.shadowRoot) walk(e.shadowRoot); });
        walk(document);
        const figures = Bokeh.index.query(v => v.model && v.model.type === 'Figure')
            .filter(v => v.el && v.el.isConnected && v.bbox && v.bbox.width > 0)
            .map(v => [v.model.title ? v.model.title.text : '', Math.round(v.bbox.width)]);
        return {room, panels, figures}; }""" % SCROLL_PANELS)
    for scroll, client in found["panels"]:
        assert scroll <= client + 1, (f"a picture scrolls sideways in its panel: {scroll}px "
                                      f"of picture in {client}px")
    for title, width in found["figures"]:
        assert width <= found["room"] + 1, (f"the figure {title!r} is {width}px wide, the main "
                                            f"area {found['room']}px")
