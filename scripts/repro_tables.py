"""Print the Markdown tables of the reproduction pages from the committed results files.

The pages in ``docs/reproduction/`` quote these tables; rerun this after a results file
grows (e.g. after resuming ``cerquides_random_bn``) and paste the part that changed.

Usage::

    python scripts/repro_tables.py cerquides      # Table 2 W/D/L, blanket-size tables
    python scripts/repro_tables.py conventions    # Dash & Cooper conventions tables
    python scripts/repro_tables.py cerquides_width
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))          # this checkout's bnexplore, not an installed one
RESULTS = REPO / "docs" / "reproduction" / "results"
CONFIG = ["n_attributes", "max_arity", "max_indegree"]


def _md(df: pd.DataFrame, index_name: str | None = None) -> str:
    """A DataFrame as a Markdown table (index as the first column)."""
    df = df.copy()
    cols = [index_name or (df.index.name or "")] + [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for idx, row in df.iterrows():
        lines.append("| " + " | ".join([str(idx)] + [str(v) for v in row]) + " |")
    return "\n".join(lines)


def _networks_line(df: pd.DataFrame, config: list[str], total: int) -> str:
    per = df.drop_duplicates("trial_id").groupby(config).size()
    parts = []
    for n_att, g in per.groupby(level=0):
        parts.append(f"{n_att} attributes {g.min()}-{g.max()} per configuration")
    n = df["trial_id"].nunique()
    return (f"**Networks run so far:** {n} of the {total} (100 per configuration): "
            + ", ".join(parts) + f"; {total - n} to go.")


def cerquides(path: Path, config: list[str], what: str) -> None:
    from bnexplore.experiments.cerquides import blanket_summary, wdl_table

    df = pd.read_csv(path)
    df = df[df["error"].isna()]
    total = 3600
    print(f"## {what}\n")
    print(_networks_line(df, config, total) + "\n")
    by = config + ["n_train"]
    print("Table 2 W/D/L over every network run so far:\n")
    print(_md(wdl_table(df, by), "") + "\n")
    first = df.groupby(config)["seed"].max().min()
    print(f"Over seeds 0-{first} (the networks every configuration has):\n")
    print(_md(wdl_table(df[df["seed"] <= first], by), "") + "\n")
    full = df[df["mb_size"] > 0]
    print("Without empty blankets (all networks run):\n")
    print(_md(wdl_table(full, by, comparisons=[("AODE0", "BMAAODE")]), "") + "\n")
    by_bin, by_size = blanket_summary(df)
    nice = pd.DataFrame({
        "share of networks": by_bin["networks_pct"].map(lambda v: f"{v:.1f}%"),
        "rows": by_bin["rows"].map(lambda v: f"{v:.0f}"),
        "AODE0 - BMAAODE AUC (± s.e.)": [f"{m:+.4f} ± {s:.4f}" for m, s in
                                         zip(by_bin["auc_margin"], by_bin["auc_se"])],
        "AODE0 higher": by_bin["AODE0_higher_pct"].map(lambda v: f"{v:.0f}%"),
        "BMAAODE higher": by_bin["BMAAODE_higher_pct"].map(lambda v: f"{v:.0f}%"),
        "BMAAODE - AODE0 error": by_bin["er_margin"].map(lambda v: f"{v:+.4f}"),
        "AODE0 - BMAAODE LogP": by_bin["logp_margin"].map(lambda v: f"{v:+.3f}")})
    print(_md(nice, "class blanket size") + "\n")
    print(_md(by_size.map(lambda v: f"{v:+.4f}"), "blanket") + "\n")


def width_comparison() -> None:
    """The bounded-width networks against the in-degree networks on the same
    configurations (attributes x arity x bound) and seeds."""
    from bnexplore.experiments.cerquides import blanket_summary, wdl_table

    w = pd.read_csv(RESULTS / "cerquides_random_bn_width.csv")
    d = pd.read_csv(RESULTS / "cerquides_random_bn.csv")
    w, d = w[w["error"].isna()], d[d["error"].isna()]
    w = w.rename(columns={"induced_width": "bound"})
    d = d.rename(columns={"max_indegree": "bound"})
    cfg = ["n_attributes", "max_arity", "bound"]
    # whole seeds only: those every configuration of the width run has
    done = w.drop_duplicates("trial_id").groupby("seed").size()
    n_cfg = w.drop_duplicates(cfg).shape[0]
    seeds = sorted(done[done == n_cfg].index)
    w = w[w["seed"].isin(seeds)]
    d = d[d["seed"].isin(seeds) & d["n_attributes"].isin(w["n_attributes"].unique())]
    print(f"seeds {seeds[0]}-{seeds[-1]} ({len(seeds)} networks per configuration), "
          f"{n_cfg} configurations, attributes {sorted(int(v) for v in w['n_attributes'].unique())}\n")
    nets = w.drop_duplicates("trial_id")
    print("realised moral treewidth (min-fill bound) by the bound:",
          nets.groupby("bound")["moral_width"].value_counts().unstack(fill_value=0).to_dict("index"))
    print("mean class blanket: width", round(nets["mb_size"].mean(), 2), "in-degree",
          round(d.drop_duplicates("trial_id")["mb_size"].mean(), 2))
    print("mean arcs: width", round(nets["n_arcs"].mean(), 2), "in-degree",
          round(d.drop_duplicates("trial_id")["n_arcs"].mean(), 2), "\n")
    for name, df in (("bounded width", w), ("in-degree", d)):
        print(f"{name}:\n")
        print(_md(wdl_table(df, cfg + ["n_train"]), "") + "\n")
        m = (df["AODE0_auc"] - df["BMAAODE_auc"]).groupby(df["n_train"]).mean()
        print("mean AODE0 - BMAAODE AUC by n:", m.round(4).to_dict())
        by_bin, _ = blanket_summary(df)
        print(by_bin[["networks_pct", "rows", "auc_margin", "auc_se"]].round(4).to_string(),
              "\n")


def conventions(path: Path) -> None:
    from bnexplore.experiments.dash_cooper import summarise_conventions

    df = pd.read_csv(path)
    t2, t3 = summarise_conventions(df)
    seeds = t2.attrs["seeds"]
    print(f"seeds {seeds[0]}-{seeds[-1]} ({len(seeds)} seeds); Table 2 cells >= "
          f"{t2.attrs['trials']} trials, Table 3 cells >= {t3.attrs['trials']}\n")
    print(_md(t2, "n") + "\n")
    print(_md(t3, "N, K") + "\n")
    d2 = df[(df["table"].astype(str) == "2") & (df["n"] == 1) & (df["ties"] == "half")]
    print("median distinct AMA scores at n = 1:",
          d2.groupby("class_node")["distinct_ama_scores"].agg(["median", "max"]).to_dict())
    per_seed = df.drop_duplicates("trial_id").groupby("seed").size()
    print("trials per seed:", per_seed.to_dict())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("cerquides", "cerquides_width", "conventions"))
    args = ap.parse_args(argv)
    if args.what == "cerquides":
        cerquides(RESULTS / "cerquides_random_bn.csv", CONFIG, "cerquides_random_bn")
    elif args.what == "cerquides_width":
        width_comparison()
    else:
        conventions(RESULTS / "dash_cooper_conventions.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
