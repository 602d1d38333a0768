"""The glossary page (:class:`bnexplore.apps.glossary.GlossaryPage`)."""
import bnexplore.apps as bxa

if __name__.startswith("bokeh"):
    bxa.serve("glossary")
