"""Every app's toggle and radio button groups show the selected button as the strong one
(outlined buttons, the selected filled and lettered white); the browser check measures
it (tests/test_lecture_browser.py), these check every app's widgets and the measure."""
import panel as pn
import pytest
from browser_checks import contrast

import bnexplore.apps as bxa
from bnexplore.apps._base import SELECTED_STRONG

GROUPS = (pn.widgets.RadioButtonGroup, pn.widgets.CheckButtonGroup, pn.widgets.Toggle)


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
