"""Rewrite call sites that pass a keyword renamed in 0.2.0 (see CHANGELOG.md) to its new name.

Usage: ``python scripts/rename_vocabulary.py [FILE ...]`` (default: every tracked ``.py``,
``.ipynb`` and ``.md`` file). Only keywords at the top level of a call to a renamed
callable are rewritten (``hill_climb(df, max_indegree=2)`` -> ``max_parents=2``);
``x.sample_data(n, ...)`` becomes ``x.sample(n, ..., as_frame=False)``. Each changed file
and its number of rewrites are printed; run the tests afterwards
(``tests/test_vocabulary.py`` scans bnexplore/ and apps/ for what is left).
The ``.k`` alias properties are not rewritten: replace them by ``.max_parents`` by hand.
"""
from __future__ import annotations

import pathlib
import re
import subprocess
import sys

_SEED = {"seed": "random_state"}
_COMPARE = {"seed": "random_state", "k": "max_parents", "alpha": "penalty", "w": "queue_width"}
#: callable name -> {old keyword: new keyword}
RENAMED: dict[str, dict[str, str]] = {
    "random_network": {**_SEED, "max_indegree": "max_parents"},
    "count_dags": {"max_indegree": "max_parents"},
    "sample": _SEED, "sample_data": _SEED,
    "hill_climb": {"max_indegree": "max_parents"},
    "greedy_thick_thin": {"max_indegree": "max_parents"},
    "greedy_search": {"max_indegree": "max_parents"},
    "incremental_search": {**_SEED, "max_indegree": "max_parents"},
    "random_strategy": _SEED, "honeycomb_network": _SEED,
    "score_order_families": {"k": "max_parents"}, "count_parent_sets": {"k": "max_parents"},
    "order_mcmc": _SEED, "random_dbn": _SEED, "sample_dbn": _SEED,
    "GreedyThickThin": {"max_indegree": "max_parents"}, "AMA": _SEED,
    "cross_validate_classifiers": _COMPARE, "make_classifier": _COMPARE,
    "check_params": {k: v for k, v in _COMPARE.items() if k != "seed"},
    "compare_trial": _COMPARE,
    "stratified_folds": _SEED, "wdl_table": {"alpha": "level"},
    "weak_features": _SEED, "bat_dbn": _SEED, "sample_bat": _SEED,
    "lazy_random_sample": {"max_indegree": "max_parents"},
    # the experiments: trial functions, the runner and the registry
    **dict.fromkeys(("table2_trial", "table3_trial", "table4_trial", "conventions_trial",
                     "exact_vs_mcmc_trial", "network_mcmc_trial"), {**_SEED, "k": "max_parents"}),
    **dict.fromkeys(("demo_sampling", "random_bn_trial", "greedy_q_trial"),
                    {**_SEED, "max_indegree": "max_parents"}),
    **dict.fromkeys(("table5_trial", "bounded_width_network", "random_bn_width_trial", "uci_trial",
                     "alarm_trial", "honeycomb_trial", "ismb_synthetic", "ismb_uci",
                     "ismb_uci_peers", "weak_trial", "dbn_trial", "bat_trial", "trial_id"), _SEED),
    "run": {"seeds": "random_states"}, "run_named": {"seeds": "random_states"},
    "register": {"seeds": "random_states", "reduced_seeds": "reduced_random_states"},
}
_CALL = re.compile(r"(\.|(?<![\w.]))(" + "|".join(RENAMED) + r")\(")
_METHODS = ("sample", "sample_data")          # only as methods: x.sample(...)


def _close(text: str, i: int) -> int:
    """Index just past the parenthesis that closes the call whose arguments start at i."""
    depth = 1
    while i < len(text) and depth:
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(text[i], 0)
        i += 1
    return i


def _rename_keywords(args: str, names: dict[str, str]) -> tuple[str, int]:
    out, depth, i, n = [], 0, 0, 0
    while i < len(args):
        c = args[i]
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(c, 0)
        if depth == 0 and (i == 0 or not (args[i - 1].isalnum() or args[i - 1] == "_")):
            hit = next((o for o in names if re.match(rf"{o}\s*=(?!=)", args[i:])), None)
            if hit:
                out.append(names[hit])
                i += len(hit)
                n += 1
                continue
        out.append(c)
        i += 1
    return "".join(out), n


def rewrite(text: str) -> tuple[str, int]:
    """``text`` with its renamed keywords rewritten, and the number of rewrites."""
    out, pos, total = [], 0, 0
    for m in _CALL.finditer(text):
        name = m.group(2)
        if m.start() < pos or (name in _METHODS and m.group(1) != "."):
            continue
        if text[max(0, m.start() - 4):m.start()].endswith("def "):
            continue
        end = _close(text, m.end())
        args, n = _rename_keywords(text[m.end():end - 1], RENAMED[name])
        head = text[m.start():m.end()]
        if name == "sample_data":
            head, args, n = head.replace("sample_data(", "sample("), args + ", as_frame=False", n + 1
        out += [text[pos:m.start()], head, args, ")"]
        pos, total = end, total + n
    out.append(text[pos:])
    return "".join(out), total


def main(paths: list[str]) -> int:
    if not paths:
        paths = subprocess.run(["git", "ls-files", "*.py", "*.ipynb", "*.md"], capture_output=True,
                               text=True, check=True).stdout.split()
    for p in map(pathlib.Path, paths):
        if p.name in ("_deprecation.py", "rename_vocabulary.py", "test_vocabulary.py", "CHANGELOG.md"):
            continue
        new, n = rewrite(p.read_text())
        if n:
            p.write_text(new)
            print(f"{p}: {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
