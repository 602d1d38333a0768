"""bnexplore apps: the landing page (``/apps``) and the router of ``?app=NAME``
(:mod:`bnexplore.apps.landing`)."""
from pathlib import Path

import bnexplore.apps.landing as landing

if __name__.startswith("bokeh"):
    landing.serve(Path(__file__).resolve().parent / "thumbnails")
