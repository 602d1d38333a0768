"""Benchmark of AMA with its defaults on many-valued data (issue 18, item 4).

Data of the Wisconsin breast-cancer shape (699 rows, 10-state attributes, two
classes; generated, the file is not bundled) with 9 and 13 attributes (13: the last
node of the order has 13 candidate parents and M* keeps n = 12), complete and with 10 %
missing cells.  Reported: ``AMA().fit`` and ``predict_proba`` on the training rows
(best of ``--repeat``), and the largest M* CPT (rows), which is lazy: only the rows
prediction reads are computed.

Run: ``python benchmarks/bench_ama_many_valued.py [--repeat 3]``
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd


def _data(n_attributes: int, n: int = 699, seed: int = 0, p_missing: float = 0.0):
    rng = np.random.default_rng(seed)
    z = rng.random(n) < 0.35
    X = pd.DataFrame({f"a{j}": np.clip(np.where(z, rng.integers(3, 11, n), rng.integers(1, 5, n))
                                       + rng.integers(-1, 2, n), 1, 10) for j in range(n_attributes)})
    if p_missing:
        X = X.mask(rng.random(X.shape) < p_missing)
    return X, np.where(z, "malignant", "benign")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from bnexplore.classifiers import AMA

    AMA().fit(*_data(4, 100))  # compile / load the kernels once
    for n_attr in (9, 13):
        for p_missing in (0.0, 0.1):
            X, y = _data(n_attr, p_missing=p_missing)
            fit, pred = np.inf, np.inf
            for _ in range(args.repeat):
                t = time.perf_counter()
                clf = AMA().fit(X, y)
                fit = min(fit, time.perf_counter() - t)
                t = time.perf_counter()
                clf.predict_proba(X)
                pred = min(pred, time.perf_counter() - t)
            net = clf.networks_[0]
            rows = max(net.cpts[v].shape[0] for v in net.nodes)
            print(f"{n_attr} attributes, {p_missing:.0%} missing: AMA() fit {fit:.2f} s, predict 699 rows "
                  f"{pred:.2f} s, largest M* CPT {rows:.3g} rows (lazy)")


if __name__ == "__main__":
    main()
