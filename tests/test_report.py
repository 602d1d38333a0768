"""`bnexplore report`: the reproduction index built from per-paper files and results."""
from __future__ import annotations

import textwrap

import pandas as pd
import pytest

from bnexplore import report
from bnexplore.cli import main
from bnexplore.experiments import expand_grid, get, trial_id

ZIEBART = textwrap.dedent("""\
    # Reproduction: Ziebart et al.

    Run: `bnexplore run ziebart_uci --size full`

    ## Exactness

    Nothing to judge here.

    ## Figures 6-9: UCI accuracy

    | method | paper | ours |
    |---|---|---|
    | TAN | 80.1 | 79.5 |

    **Verdict: agrees on the main finding, differs on NB.** TAN and FAN lose two points
    with random features.

    Next paragraph, not part of the verdict.

    ## Figure 10: penalty

    **Verdict: differs.** The optimum is at alpha = 5, not 20.

    ## Figure 4: DBNs

    **Verdict.**
    * MAP SCF(k) beats every subclass, as in the paper: agrees.
    * BMA is close to MAP.

    ## Not done

    The 100-seed runs.
    """)


@pytest.fixture
def docs(tmp_path):
    d = tmp_path / "reproduction"
    d.mkdir()
    (d / "ziebart.md").write_text(ZIEBART)
    (d / "ismb.md").write_text("# ISMB\n\n## Table 3\n\nVerdict: the values do not match the"
                               " paper's table.\n")
    res = d / "results"
    res.mkdir()
    exp = get("ziebart_uci")
    grid, seeds = exp.settings("reduced")
    rows = [{**s, "random_state": seed, "trial_id": trial_id(s, seed), "acc": 0.8,
             "error": None, "elapsed_s": 0.1}
            for s in expand_grid(grid) for seed in seeds]
    rows[0]["error"] = "ValueError: boom"
    pd.DataFrame(rows).to_csv(res / "ziebart_uci.csv", index=False)
    return d


def test_parse_paper_file_finds_items_verdicts_commands(docs):
    title, items, cmds, not_done = report.parse_paper_file(docs / "ziebart.md")
    assert title == "Reproduction: Ziebart et al."
    assert [i.heading for i in items] == ["Figures 6-9: UCI accuracy", "Figure 10: penalty",
                                          "Figure 4: DBNs"]
    assert [i.status for i in items] == ["partly", "differs", "agrees"]
    assert "TAN and FAN lose two points" in items[0].verdict
    assert "Next paragraph" not in items[0].verdict
    assert "BMA is close to MAP" in items[2].verdict       # bullet list kept
    assert cmds == ["bnexplore run ziebart_uci --size full"]
    assert "100-seed" in not_done


def test_classify_verdict():
    assert report.classify_verdict("Verdict: agrees.") == "agrees"
    assert report.classify_verdict("Verdict: disagrees with Table 2") == "differs"
    assert report.classify_verdict("the values do not match") == "differs"
    assert report.classify_verdict("Verdict: agrees in order, differs in value") == "partly"
    assert report.classify_verdict("Verdict: pending") == "unclear"


def test_build_report_lists_every_paper_item_command_and_results(docs):
    text = report.build_report(docs)
    assert report.GENERATED_MARK in text
    # all five papers, the missing ones said to be missing
    for stem, citation, _ in report.PAPERS:
        assert citation in text
    assert "No `dash_cooper.md` yet" in text and "No `castelo_siebes.md` yet" in text
    # summary counts for ziebart: 3 items, 1 agrees, 1 partly, 1 differs
    row = next(ln for ln in text.splitlines() if ln.startswith("| Ziebart"))
    assert row.endswith("| 3 | 1 | 1 | 1 | 0 |")
    assert "| Figure 10: penalty | **differs** |" in text
    assert "| Table 3 | **differs** |" in text
    # full-size commands, local and Dask, for every registered experiment of the paper
    for name in ("ziebart_uci", "ziebart_weak", "ziebart_dbn", "compare_classifiers"):
        assert f"`bnexplore run {name} --size full --n-jobs -1" in text
        assert f"`bnexplore run {name} --size full --scheduler tcp://SCHEDULER:8786" in text
    # the results file: reduced run complete with one error row
    exp = get("ziebart_uci")
    n_red = exp.n_trials("reduced")
    line = next(ln for ln in text.splitlines() if "`ziebart_uci.csv`" in ln)
    assert f"{n_red}/{n_red} of the reduced run" in line and "1 error rows" in line
    assert "no results file yet" in text          # e.g. ziebart_weak here


def test_cli_report_writes_readme(docs, capsys):
    assert main(["report", "--docs", str(docs)]) == 0
    out = docs / "README.md"
    assert out.exists() and "Figures 6-9" in out.read_text()
    assert "wrote" in capsys.readouterr().out
    # rerun is stable (same input, same page)
    before = out.read_text()
    assert main(["report", "--docs", str(docs)]) == 0
    assert out.read_text() == before
    # '-' prints instead of writing
    assert main(["report", "--docs", str(docs), "--out", "-"]) == 0
    assert "# Reproduction of the five papers" in capsys.readouterr().out


def test_cli_report_bad_folder(tmp_path, capsys):
    assert main(["report", "--docs", str(tmp_path / "nope")]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_cli_list_and_run_still_work(capsys):
    assert main(["list"]) == 0
    assert "compare_classifiers" in capsys.readouterr().out
