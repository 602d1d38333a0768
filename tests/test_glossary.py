"""The glossary covers every abbreviation the apps use, with plain-text entries."""
import pytest

import bnexplore as bx
from bnexplore.glossary import GLOSSARY, abbreviations_in, define, glossary_table

REQUIRED = ["SNN", "NMA", "GTT", "AMA", "AODE", "BMA", "MAPLMD", "MAPLMG", "CAL", "ISMB", "ISMB-MS", "NISMB",
            "SCF", "TAN", "FAN", "STAN", "SFAN", "M*", "L_k(pi)", "MB", "R-hat"]


def test_every_required_abbreviation_is_defined_in_plain_text():
    for key in REQUIRED:
        e = define(key)
        assert e.name and e.definition.endswith(".") and e.source
        for text in (e.name, e.definition):
            assert "<" not in text and "$" not in text and "\\" not in text
    assert len(glossary_table()) == len(GLOSSARY)
    assert bx.glossary.define("gtt") is GLOSSARY["GTT"]
    with pytest.raises(KeyError, match="XYZ.*not in the glossary"):
        define("XYZ")


def test_abbreviations_in_text_in_order_of_first_use_and_whole_words():
    text = "Under L_2(pi), M* equals MA; AMA and ISMB-MS differ from AODE, MAPLMD and ISMB."
    assert abbreviations_in(text) == ["L_k(pi)", "M*", "MA", "AMA", "ISMB-MS", "AODE", "MAPLMD", "ISMB"]
    assert abbreviations_in("AMAZING MAPS") == []


def test_spell_out_first_use_only():
    from bnexplore.glossary import spell_out

    out = spell_out("M* equals MA over L_3(pi); ISMB-MS and ISMB; M* again.")
    assert out.startswith("M* (Summary network M*) equals MA (Model averaging (exact)) over L_3(pi) (The class")
    assert out.count("(Summary network M*)") == 1 and "ISMB-MS (Instance-specific Markov blanket, model" in out
    assert spell_out("no abbreviations here") == "no abbreviations here"
