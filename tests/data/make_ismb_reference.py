"""Write tests/data/ismb_reference.npz: ISMB predictions of the code before the wide-data
and speed work (issue 38, commit 2a60c47), which tests/test_ismb_reference.py pins.

Run:  python tests/data/make_ismb_reference.py
"""
from __future__ import annotations

import pathlib
import warnings

import numpy as np

import bnexplore as bx
from bnexplore.classifiers import ISMB

OUT = pathlib.Path(__file__).with_name("ismb_reference.npz")


def cases():
    """(name, X_train, y_train, X_test, params): small data on which every search is fast."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vote = bx.datasets.load("vote", discretize="mdl")            # missing cells kept
        iono = bx.datasets.load("ionosphere", discretize="mdl")
        soy = bx.datasets.load("soybean", discretize="mdl")          # 19 classes, missing
    out = []
    for name, df, n_cols, train, test, params in [
        ("vote", vote, 16, slice(0, 200), slice(200, 230), {}),
        ("vote_w20", vote, 16, slice(0, 200), slice(230, 250), {"queue_width": 20}),
        ("iono14", iono, 14, slice(0, 250), slice(250, 275), {}),
        ("iono34_w50", iono, 34, slice(0, 280), slice(280, 292), {"queue_width": 50}),
        ("soy12", soy, 12, slice(0, 300), slice(300, 315), {"queue_width": 200}),
    ]:
        t = df.attrs["target"]
        X = df.drop(columns=t).iloc[:, :n_cols]
        y = df[t].astype(str)
        out.append((name, X.iloc[train], y.iloc[train], X.iloc[test], params))
    return out


def main() -> None:
    arrays = {}
    for name, Xtr, ytr, Xte, params in cases():
        clf = ISMB(**params).fit(Xtr, ytr)
        probs = clf.predict_proba_variants(Xte)
        for variant, p in probs.items():
            arrays[f"{name}/{variant}"] = p
        res = clf.search_instances(Xte)
        arrays[f"{name}/n_models"] = np.array([len(r["ismb"].models) for r in res])
        arrays[f"{name}/log_scores"] = np.concatenate([r["ismb"].log_scores for r in res])
        arrays[f"{name}/masks"] = np.array(
            [m for r in res for mb in r["ismb"].models for m in mb.masks], dtype=np.int64)
        print(name, {k: v.shape for k, v in probs.items()})
    np.savez_compressed(OUT, **arrays)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
