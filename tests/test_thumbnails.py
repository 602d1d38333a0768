"""The landing page's thumbnails: the script that makes them lists exactly the apps of
the landing page (in its lecture order), and every app has a thumbnail made from its
current page (the layout recorded in apps/thumbnails/manifest.json when the thumbnail
was made is the layout the app class declares now)."""
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


def test_every_thumbnail_shows_the_current_layout_of_its_page():
    script = load_script()
    made = script.read_manifest()
    stale = []
    for name in script._apps():
        now = script.page_layout(name)
        then = made.get(name)
        if then is None or then["fingerprint"] != now["fingerprint"]:
            what = "no record" if then is None else "; ".join(
                [f"parameters added or removed: "
                 f"{sorted(set(now['parameters']) ^ set(then['parameters']))}"] * (
                    now["parameters"] != then["parameters"])
                + [f"views now {now['views']}, then {then['views']}"] * (
                    now["views"] != then["views"]))
            stale.append(f"{name} changed since its thumbnail ({what}): run "
                         f"scripts/make_thumbnails.py {name}")
    assert not stale, "\n".join(stale)


def test_the_layout_fingerprint_follows_a_new_parameter_and_a_new_view(monkeypatch):
    """The check can fail: one more parameter or one more view changes the page."""
    import param

    from bnexplore.apps import app_class

    script = load_script()
    before = script.page_layout("forests")["fingerprint"]
    cls = app_class("forests")
    views = cls.views
    monkeypatch.setattr(cls, "views", lambda self: [*views(self), self.summary_view])
    assert script.page_layout("forests")["fingerprint"] != before
    monkeypatch.undo()

    class Wider(cls):
        extra = param.Integer(1)

    monkeypatch.setattr("bnexplore.apps.app_class", lambda name: Wider)
    assert script.page_layout("forests")["fingerprint"] != before
