"""Benchmark: ISMB time per test instance (w = 1000, epsilon = 1e-3).

Target: median <= 1 s per instance on vote and on MDL-discretised credit-g (the paper
reports about 2 minutes per instance, Table 13).  The same-process reference is
scikit-learn's CategoricalNB (fit on the training rows + predict of the test rows,
divided by the number of test rows), so the printed ratio says how many naive-Bayes
"instance costs" one ISMB instance takes.  The second table shows how the time grows with
the number of predictors (first k predictors of credit-g).

The third part is the 5-fold cross-validation of ISMB with its defaults on ionosphere
(351 rows, 34 MDL-discretised features; target <= 120 s on the 2-core machine, 1,087 s
before the phase-2 queue was shared across instances), wall and CPU seconds with the
load average, against CategoricalNB's in the same run.

Run:  python benchmarks/bench_ismb.py [--n-test 20] [--cv-only]
"""
from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.naive_bayes import CategoricalNB
from sklearn.preprocessing import OrdinalEncoder

import bnexplore as bx
from bnexplore.classifiers import ISMB


def load(name: str) -> tuple[pd.DataFrame, np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = bx.datasets.load(name, discretize="mdl", missing="state")
    t = df.attrs["target"]
    return df.drop(columns=[t]).astype(str), df[t].astype(str).to_numpy()


def time_ismb(X, y, n_test, seed=0):
    rng = np.random.default_rng(seed)
    test = rng.choice(len(X), n_test, replace=False)
    train = np.setdiff1d(np.arange(len(X)), test)
    t0 = time.perf_counter()
    clf = ISMB(queue_width=1000, epsilon=1e-3).fit(X.iloc[train], y[train])
    fit_s = time.perf_counter() - t0
    per = []
    for i in test:
        t0 = time.perf_counter()
        clf.predict_proba(X.iloc[[i]])
        per.append(time.perf_counter() - t0)
    # the peer: naive Bayes fit + predict, per test instance
    t0 = time.perf_counter()
    reps = 20
    for _ in range(reps):
        enc = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1).fit(X.iloc[train])
        nb = CategoricalNB().fit(enc.transform(X.iloc[train]), y[train])
        nb.predict_proba(np.maximum(enc.transform(X.iloc[test]), 0))
    nb_per = (time.perf_counter() - t0) / reps / n_test
    return fit_s, np.array(per), nb_per, clf


def ionosphere_cv() -> None:
    """5-fold CV of ISMB() on ionosphere: wall and CPU seconds, accuracy, load."""
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline

    X, y = load("ionosphere")
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    load0 = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), time.process_time()
    acc = cross_val_score(ISMB(), X, y, cv=cv).mean()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    t0 = time.perf_counter()
    nb = make_pipeline(OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1),
                       CategoricalNB(min_categories=8))
    nb_acc = cross_val_score(nb, X, y, cv=cv).mean()
    nb_wall = time.perf_counter() - t0
    print(f"ISMB 5-fold CV on ionosphere ({len(X)} rows, {X.shape[1]} features): wall {wall:.1f} s, "
          f"CPU {cpu:.1f} s, accuracy {acc:.4f}; target <= 120 s: {'met' if wall <= 120 else 'MISSED'}; "
          f"CategoricalNB {nb_wall:.2f} s (accuracy {nb_acc:.4f}); ratio ISMB/NB {wall / nb_wall:.0f}; "
          f"load {load0:.1f} -> {os.getloadavg()[0]:.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-test", type=int, default=20)
    ap.add_argument("--cv-only", action="store_true", help="only the ionosphere cross-validation")
    args = ap.parse_args()
    if args.cv_only:
        ionosphere_cv()
        return
    rows = []
    for name in ("vote", "credit-g"):
        X, y = load(name)
        fit_s, per, nb_per, clf = time_ismb(X, y, args.n_test)
        med = float(np.median(per))
        rows.append({"data": name, "rows": len(X), "predictors": X.shape[1],
                     "fit+phase1 s": round(fit_s, 3), "median s/instance": round(med, 4),
                     "max s/instance": round(float(per.max()), 4),
                     "NB s/instance": f"{nb_per:.2e}", "ratio ISMB/NB": round(med / nb_per),
                     "target <= 1 s": "met" if med <= 1.0 else "MISSED"})
    print("ISMB, w=1000, epsilon=1e-3, %d test instances each" % args.n_test)
    print(pd.DataFrame(rows).to_string(index=False))

    X, y = load("credit-g")
    grow = []
    for k in (5, 10, 15, 20):
        fit_s, per, nb_per, clf = time_ismb(X.iloc[:, :k], y, max(5, args.n_test // 2))
        grow.append({"predictors": k, "phase-1 models": len(clf.model_.phase1()[0]),
                     "fit+phase1 s": round(fit_s, 3), "median s/instance": round(float(np.median(per)), 4),
                     "ratio ISMB/NB": round(float(np.median(per)) / nb_per)})
    print("\nGrowth with the number of variables (credit-g, first k predictors)")
    print(pd.DataFrame(grow).to_string(index=False))
    print()
    ionosphere_cv()


if __name__ == "__main__":
    main()
