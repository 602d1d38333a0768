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


#: every button group's buttons: (text, selected, background, text colour) as computed.
_BUTTON_GROUPS = """() => {
    const out = [];
    const walk = root => {
        for (const el of root.querySelectorAll('*')) {
            if (el.shadowRoot) walk(el.shadowRoot);
            if (!el.classList || !el.classList.contains('bk-btn-group')) continue;
            const buttons = Array.from(el.querySelectorAll('.bk-btn'));
            if (buttons.length < 2 && !buttons.some(b => b.classList.contains('bk-active'))) continue;
            out.push(buttons.map(b => { const s = getComputedStyle(b);
                return [b.textContent.trim(), b.classList.contains('bk-active'),
                        s.backgroundColor, s.color]; }));
        }
    };
    walk(document);
    return out; }"""


def _rgb_on_white(css: str) -> tuple[float, float, float]:
    parts = [float(x) for x in css[css.index("(") + 1:css.index(")")].split(",")]
    r, g, b, a = (parts + [1.0])[:4]
    return tuple(a * c + (1 - a) * 255.0 for c in (r, g, b))


def contrast(css_a: str, css_b: str) -> float:
    """WCAG contrast ratio of two CSS colours (each laid on white)."""
    def lum(css):
        ch = [c / 255.0 for c in _rgb_on_white(css)]
        ch = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in ch]
        return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2]
    hi, lo = sorted((lum(css_a), lum(css_b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def assert_selected_is_strong(page) -> None:
    """In every toggle or radio button group the selected button is the strong one: it
    stands out from the page (contrast >= 3 with white) more than any unselected button,
    and its text is readable on it (contrast >= 4.5)."""
    groups = page.evaluate(_BUTTON_GROUPS)
    assert groups, "no button group in the page"
    white = "rgb(255, 255, 255)"
    for buttons in groups:
        on = [b for b in buttons if b[1]]
        off = [b for b in buttons if not b[1]]
        for text, _, bg, fg in on:
            strong = contrast(bg, white)
            assert strong >= 3, f"the selected button {text!r} is pale ({bg})"
            assert contrast(fg, bg) >= 4.5, f"the selected button {text!r}: {fg} on {bg}"
            for t2, _, bg2, _ in off:
                assert contrast(bg2, white) < strong, (f"unselected {t2!r} ({bg2}) is as strong "
                                                       f"as selected {text!r} ({bg})")
