"""Every app's toggle and radio button groups show the selected button as the strong one
(outlined buttons, the selected filled and lettered white); the browser check measures
it (assert_selected_is_strong, in tests/test_lecture_clicks_browser.py); these check every app's widgets and the measure."""
import panel as pn
import pytest

import bnexplore.apps as bxa
from bnexplore.apps._base import SELECTED_STRONG

GROUPS = (pn.widgets.RadioButtonGroup, pn.widgets.CheckButtonGroup, pn.widgets.Toggle)


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


@pytest.mark.parametrize("name", sorted(bxa.APPS))
def test_every_button_group_in_the_sidebar_fills_the_selected_button(name):
    app = bxa.app_class(name)("asia") if name != "compare" else bxa.app_class(name)()
    found = [w for w in app.sidebar().select(pn.widgets.Widget) if isinstance(w, GROUPS)]
    assert found                       # the data source and presentation mode at least
    for w in found:
        assert (w.color, w.variant) == ("primary", "outline"), (name, w)
        assert SELECTED_STRONG in w.stylesheets, (name, w)


def test_contrast_is_the_wcag_ratio():
    assert contrast("rgb(255, 255, 255)", "rgb(0, 0, 0)") == pytest.approx(21.0)
    assert contrast("rgba(0, 0, 0, 0)", "rgb(255, 255, 255)") == pytest.approx(1.0)
    # the theme's accent against white: a strong fill
    assert 5 < contrast("rgb(45, 105, 146)", "rgb(255, 255, 255)") < 7
