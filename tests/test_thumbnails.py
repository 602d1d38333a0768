"""The landing page's thumbnails: the script that makes them lists exactly the apps of
the landing page (in its lecture order), and every app has a current thumbnail."""
import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def load_script():
    spec = importlib.util.spec_from_file_location("make_thumbnails", REPO / "scripts" / "make_thumbnails.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_script_lists_exactly_the_landing_pages_apps_in_lecture_order():
    from bnexplore.apps import PAGES
    from bnexplore.apps.landing import LECTURE, cards

    names = load_script()._apps()
    files = sorted(p.stem for p in (REPO / "apps").glob("*.py")      # pages have no card
                   if p.stem not in {"main", *PAGES} and not p.name.startswith("_"))
    assert sorted(names) == files and names == [c.name for c in cards()]
    assert names == [n for n in LECTURE if n in files] + sorted(set(files) - set(LECTURE))
    assert names[0] == "structure" and names[-1] == "ask_model"


def test_every_app_has_a_thumbnail_made_from_its_current_page():
    from PIL import Image

    for name in load_script()._apps():
        path = REPO / "apps" / "thumbnails" / f"{name}.png"
        assert path.exists(), f"no thumbnail for {name}: run scripts/make_thumbnails.py {name}"
        assert Image.open(path).size[0] >= 300
        assert path.stat().st_size > 2000, f"{name}'s thumbnail is blank"
