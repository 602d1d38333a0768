"""One public vocabulary (issue 33): renamed parameters, defaults, the joint/conditional
contract and error messages that name only parameters that exist.

- every old keyword still works, warns with a ``FutureWarning`` naming the new one, and
  gives the result of the new keyword (one parametrised case per alias);
- bnexplore and the apps never call a deprecated name (an AST scan of their sources;
  ``pyproject.toml`` also turns such a warning raised from their modules into an error);
- the documented default prior and ess of every estimator are its actual ones;
- ``predict_proba`` is the softmax of ``predict_joint_log_proba`` for every classifier
  that has both; AMA(order="two-random") has no joint;
- the error messages of the public entry points on bad input name only parameters of
  the called entry point.
"""
from __future__ import annotations

import ast
import inspect
import pathlib
import re
import warnings

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import bnexplore as bx
from bnexplore import classifiers as C
from bnexplore import clustering, forests, networks, scores, search
from bnexplore._deprecation import RenamedParameterWarning
from bnexplore import averaging
from bnexplore.averaging import AllOrders, OrderedAveraging, count_parent_sets, order_mcmc
from bnexplore.classifiers._base import normalize_log
from bnexplore.experiments import cerquides, compare, dash_cooper, ziebart

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def asia():
    return networks.load("asia")


@pytest.fixture(scope="module")
def df(asia):
    return asia.sample(300, random_state=0)


@pytest.fixture(scope="module")
def xy():
    rng = np.random.default_rng(0)
    n = 80
    y = rng.integers(0, 2, n)
    X = pd.DataFrame({f"f{j}": np.where(rng.random(n) < 0.7, y, rng.integers(0, 2, n)).astype(str)
                      for j in range(4)})
    X["g"] = rng.choice(list("abc"), n)
    return X, pd.Series(np.where(y == 1, "yes", "no"), name="Class")


def _same(a, b) -> bool:
    if isinstance(a, nx.DiGraph):
        return set(a.edges) == set(b.edges) and set(a.nodes) == set(b.nodes)
    if isinstance(a, bx.data.DiscreteData):
        return a.names == b.names and np.array_equal(a.codes, b.codes)
    if isinstance(a, (pd.DataFrame, pd.Series)):
        return a.equals(b)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b


# (id, new name, call with the old keyword, call with the new keyword); each call returns
# something comparable
ALIASES = [
    ("random_network-max_indegree", "max_parents",
     lambda d: networks.random_network(6, max_indegree=2, random_state=1).dag,
     lambda d: networks.random_network(6, max_parents=2, random_state=1).dag),
    ("random_network-seed", "random_state",
     lambda d: networks.random_network(6, 2, seed=1).dag,
     lambda d: networks.random_network(6, 2, random_state=1).dag),
    ("count_dags-max_indegree", "max_parents",
     lambda d: networks.count_dags(4, max_indegree=1), lambda d: networks.count_dags(4, max_parents=1)),
    ("BayesNet.sample-seed", "random_state",
     lambda d: networks.load("asia").sample(20, seed=3),
     lambda d: networks.load("asia").sample(20, random_state=3)),
    ("BayesNet.sample_data", "as_frame=False",
     lambda d: networks.load("asia").sample_data(20, 3),
     lambda d: networks.load("asia").sample(20, 3, as_frame=False)),
    ("hill_climb-max_indegree", "max_parents",
     lambda d: search.hill_climb(d, max_indegree=1).dag, lambda d: search.hill_climb(d, max_parents=1).dag),
    ("greedy_thick_thin-max_indegree", "max_parents",
     lambda d: search.greedy_thick_thin(d, max_indegree=1).dag,
     lambda d: search.greedy_thick_thin(d, max_parents=1).dag),
    ("greedy_search-max_indegree", "max_parents",
     lambda d: clustering.greedy_search(d, max_indegree=1).dag,
     lambda d: clustering.greedy_search(d, max_parents=1).dag),
    ("incremental_search-seed-max_indegree", "random_state",
     lambda d: clustering.incremental_search(d, cluster_size=3, strategy="random", seed=2,
                                             max_indegree=2).dag,
     lambda d: clustering.incremental_search(d, cluster_size=3, strategy="random", random_state=2,
                                             max_parents=2).dag),
    ("random_strategy-seed", "random_state",
     lambda d: clustering.random_strategy(list("abcdefg"), 3, seed=4),
     lambda d: clustering.random_strategy(list("abcdefg"), 3, random_state=4)),
    ("honeycomb_network-seed", "random_state",
     lambda d: clustering.honeycomb_network(n_cells=1, seed=0)[0].dag,
     lambda d: clustering.honeycomb_network(n_cells=1, random_state=0)[0].dag),
    ("score_order_families-k", "max_parents",
     lambda d: scores.score_order_families(d, list(range(8)), k=1),
     lambda d: scores.score_order_families(d, list(range(8)), max_parents=1)),
    ("count_parent_sets-k", "max_parents",
     lambda d: count_parent_sets(6, k=2), lambda d: count_parent_sets(6, max_parents=2)),
    ("order_mcmc-seed", "random_state",
     lambda d: order_mcmc(d, n_iter=200, n_chains=2, seed=5).arc_posteriors(),
     lambda d: order_mcmc(d, n_iter=200, n_chains=2, random_state=5).arc_posteriors()),
    ("random_dbn-seed", "random_state",
     lambda d: forests.random_dbn(3, seed=0)["names"], lambda d: forests.random_dbn(3, random_state=0)["names"]),
    ("sample_dbn-seed", "random_state",
     lambda d: forests.sample_dbn(forests.random_dbn(3, random_state=0), 20, seed=1),
     lambda d: forests.sample_dbn(forests.random_dbn(3, random_state=0), 20, random_state=1)),
    ("check_params-k-alpha-w", "max_parents",
     lambda d: compare.check_params(k=3, alpha=1.5, w=10),
     lambda d: compare.check_params(max_parents=3, penalty=1.5, queue_width=10)),
    ("make_classifier-seed-k", "random_state",
     lambda d: compare.make_classifier("AMA", k=3, seed=2).get_params(),
     lambda d: compare.make_classifier("AMA", max_parents=3, random_state=2).get_params()),
    ("stratified_folds-seed", "random_state",
     lambda d: compare.stratified_folds(["a"] * 4 + ["b"] * 4, 2, seed=1)[0][1],
     lambda d: compare.stratified_folds(["a"] * 4 + ["b"] * 4, 2, random_state=1)[0][1]),
    ("cross_validate_classifiers-seed-k-alpha-w", "random_state",
     lambda d: compare.cross_validate_classifiers(d, "lung", ["SNN"], n_splits=2, seed=1, k=1,
                                                  alpha=1.0, w=5).proba["SNN"],
     lambda d: compare.cross_validate_classifiers(d, "lung", ["SNN"], n_splits=2, random_state=1,
                                                  max_parents=1, penalty=1.0,
                                                  queue_width=5).proba["SNN"]),
    ("weak_features-seed", "random_state",
     lambda d: ziebart.weak_features(30, 3, 2, seed=1), lambda d: ziebart.weak_features(30, 3, 2, random_state=1)),
    ("bat_dbn-seed", "random_state",
     lambda d: ziebart.bat_dbn(seed=2)["names"], lambda d: ziebart.bat_dbn(random_state=2)["names"]),
    ("sample_bat-seed", "random_state",
     lambda d: ziebart.sample_bat(ziebart.bat_dbn(random_state=0), 20, seed=1),
     lambda d: ziebart.sample_bat(ziebart.bat_dbn(random_state=0), 20, random_state=1)),
    ("lazy_random_sample-max_indegree", "max_parents",
     lambda d: dash_cooper.lazy_random_sample(6, max_indegree=2, n_rows=30, rng=np.random.default_rng(0))[1],
     lambda d: dash_cooper.lazy_random_sample(6, max_parents=2, n_rows=30, rng=np.random.default_rng(0))[1]),
    ("wdl_table-alpha", "level",
     lambda d: cerquides.wdl_table(_wdl_rows(), ["cfg"], alpha=0.1, comparisons=[("A", "B")],
                                   metrics=["AUC"]),
     lambda d: cerquides.wdl_table(_wdl_rows(), ["cfg"], level=0.1, comparisons=[("A", "B")],
                                   metrics=["AUC"])),
]


def _wdl_rows() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"cfg": [0] * 6, "AUC_A": rng.random(6) + 0.1, "AUC_B": rng.random(6)})


@pytest.mark.parametrize("case", ALIASES, ids=[a[0] for a in ALIASES])
def test_old_name_warns_and_gives_the_new_names_result(case, df):
    _, new, old_call, new_call = case
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = old_call(df)
    said = [str(w.message) for w in seen if issubclass(w.category, RenamedParameterWarning)]
    assert any(new in m and "deprecated" in m for m in said), said
    assert all(issubclass(w.category, FutureWarning) for w in seen
               if issubclass(w.category, RenamedParameterWarning))
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        want = new_call(df)
    assert _same(got, want)


@pytest.mark.parametrize("cls, old, new, value", [
    (C.GreedyThickThin, "max_indegree", "max_parents", 1),
    (C.AMA, "seed", "random_state", 3),
])
def test_renamed_estimator_parameters_follow_sklearn(cls, old, new, value, xy):
    """scikit-learn's pattern: the old name is a parameter defaulting to "deprecated",
    kept by clone/get_params, warning in fit; the fitted model equals the new name's."""
    from sklearn.base import clone
    X, y = xy
    extra = {"order": "random"} if cls is C.AMA else {}
    est = cls(**{old: value}, **extra)
    assert clone(est).get_params()[old] == value
    assert cls().get_params()[old] == "deprecated"
    with pytest.warns(RenamedParameterWarning, match=f"use {new}="):
        p_old = est.fit(X, y).predict_proba(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        p_new = cls(**{new: value}, **extra).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(p_old, p_new)
    with pytest.raises(ValueError, match=f"pass only {new}="):
        cls(**{old: value, new: 2}, **extra).fit(X, y)


def test_both_names_is_an_error(df):
    with pytest.raises(TypeError, match="pass only max_parents="):
        search.hill_climb(df, max_indegree=1, max_parents=2)


def test_no_alias_properties(df):
    """The ``.k`` aliases of ``max_parents`` are gone (one name per concept)."""
    res = OrderedAveraging(df, max_parents=1)
    assert res.max_parents == 1 and not hasattr(res, "k")
    assert not hasattr(AllOrders(df.iloc[:, :4], max_parents=1), "k")


# --------------------------------------------------------------------------- internal use
def _renamed_callables() -> dict[str, set[str]]:
    """name of every callable with a deprecated keyword -> its old keywords."""
    import importlib
    out: dict[str, set[str]] = {}
    for modname in ("bnexplore.networks._bayesnet", "bnexplore.networks._random", "bnexplore.search",
                    "bnexplore.clustering", "bnexplore.scores", "bnexplore._order_posterior",
                    "bnexplore._all_orders", "bnexplore.forests", "bnexplore.experiments.compare",
                    "bnexplore.experiments._compare_setup", "bnexplore.experiments.cerquides",
                    "bnexplore.experiments.ziebart", "bnexplore.experiments.dash_cooper",
                    "bnexplore.experiments.orders", "bnexplore.experiments.demo",
                    "bnexplore.experiments.castelo_siebes", "bnexplore.experiments.ismb",
                    "bnexplore.experiments.runner", "bnexplore.experiments.registry"):
        mod = importlib.import_module(modname)
        for obj in vars(mod).values():
            members = [obj] + (list(vars(obj).values()) if inspect.isclass(obj) else [])
            for f in members:
                if callable(f) and hasattr(f, "__renamed__"):
                    out.setdefault(f.__name__, set()).update(f.__renamed__)
    out.setdefault("GreedyThickThin", set()).add("max_indegree")
    out.setdefault("AMA", set()).add("seed")
    return out


def test_bnexplore_and_apps_never_call_a_deprecated_name():
    renamed = _renamed_callables()
    assert {"hill_climb", "sample", "order_mcmc", "cross_validate_classifiers"} <= set(renamed)
    bad = []
    for path in list((ROOT / "bnexplore").rglob("*.py")) + list((ROOT / "apps").rglob("*.py")):
        if path.name == "_deprecation.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if name == "sample_data" and path.name != "_bayesnet.py":
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno} sample_data()")
            for kw in node.keywords:
                if kw.arg in renamed.get(name, ()):
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}({kw.arg}=)")
    assert not bad, bad


# --------------------------------------------------------------------------- defaults
LIBRARY_DEFAULT = ("K2", 1.0)
DEFAULTS = {
    scores.LocalScore: LIBRARY_DEFAULT, OrderedAveraging: LIBRARY_DEFAULT,
    AllOrders: LIBRARY_DEFAULT, order_mcmc: LIBRARY_DEFAULT, search.hill_climb: LIBRARY_DEFAULT,
    search.greedy_thick_thin: LIBRARY_DEFAULT, clustering.greedy_search: LIBRARY_DEFAULT,
    clustering.incremental_search: LIBRARY_DEFAULT, C.NaiveBayes: LIBRARY_DEFAULT,
    C.NaiveAveraging: LIBRARY_DEFAULT, C.GreedyThickThin: LIBRARY_DEFAULT, C.AMA: LIBRARY_DEFAULT,
    # Ziebart, Dey & Bagnell (2007): BDeu; classification experiments at ess 10, DBNs at 20
    C.TAN: ("BDeu", 10.0), C.FAN: ("BDeu", 10.0), C.STAN: ("BDeu", 10.0), C.SFAN: ("BDeu", 10.0),
    forests.map_scf: ("BDeu", 1.0), forests.SCFAverage: ("BDeu", 1.0),
    forests.SCFFamilies: ("BDeu", 1.0), forests.edge_posteriors: ("BDeu", 1.0),
    forests.DBNSCF: ("BDeu", 20.0),
    averaging.AllDAGs: LIBRARY_DEFAULT, averaging.partition_mcmc: LIBRARY_DEFAULT,
    averaging.bootstrap_arcs: LIBRARY_DEFAULT, averaging.arc_table: LIBRARY_DEFAULT,
    averaging.ask_averaged_model: LIBRARY_DEFAULT, averaging.greedy_order: LIBRARY_DEFAULT,
}


@pytest.mark.parametrize("est", list(DEFAULTS), ids=lambda e: e.__name__)
def test_documented_defaults_are_the_actual_ones(est):
    params = inspect.signature(est).parameters
    assert (params["prior"].default, params["ess"].default) == DEFAULTS[est]
    doc = " ".join((inspect.getdoc(est) or "").split())
    assert re.search(rf'default "?{DEFAULTS[est][0]}"?', doc), "the docstring states the default prior"
    if DEFAULTS[est] != LIBRARY_DEFAULT:      # a different default says why, with its paper
        doc = inspect.getdoc(est) or ""
        for cls in (est.__mro__ if inspect.isclass(est) else ()):
            doc += inspect.getdoc(cls) or ""
        doc = " ".join(doc.split())
        assert "Ziebart" in doc and "BDeu" in doc
        assert f"{DEFAULTS[est][1]:g}" in doc


@pytest.mark.parametrize("name", averaging.__all__)
def test_averaging_keywords_mean_one_thing(name):
    """In bnexplore.averaging ``prior`` is the K2/BDeu string, a structure prior is
    ``structure_prior`` and ``score`` is never that string."""
    f = getattr(averaging, name)
    if not callable(f):
        return
    try:
        params = inspect.signature(f).parameters
    except (TypeError, ValueError):
        return
    if "prior" in params:
        assert params["prior"].default in ("K2", "BDeu"), f"{name}(prior=) is the K2/BDeu choice"
    if "score" in params:
        assert not isinstance(params["score"].default, str), f"{name}(score=) is a LocalScore, not a string"


# --------------------------------------------------------------------------- joint contract
def _all_classifiers():
    return [getattr(C, n) for n in C.__all__
            if inspect.isclass(getattr(C, n)) and n != "DiscreteClassifier"]


@pytest.mark.parametrize("cls", _all_classifiers(), ids=lambda c: c.__name__)
def test_predict_proba_is_the_softmax_of_the_joint(cls, xy):
    X, y = xy
    params = {"queue_width": 20} if cls is C.ISMB else {}
    clf = cls(**params).fit(X, y)
    T = X.iloc[:12]
    if not hasattr(clf, "predict_joint_log_proba"):   # absent where it cannot hold
        assert cls in (C.ISMB, C.MAPLMD)
        with pytest.raises(AttributeError, match="no joint"):
            clf.predict_joint_log_proba
    else:
        np.testing.assert_allclose(clf.predict_proba(T), normalize_log(clf.predict_joint_log_proba(T)),
                                   rtol=0, atol=1e-10)


def test_two_random_orders_have_no_joint(xy):
    X, y = xy
    clf = C.AMA(order="two-random", random_state=0).fit(X, y)
    assert not hasattr(clf, "predict_joint_log_proba")
    assert hasattr(C.AMA(order="random", random_state=0).fit(X, y), "predict_joint_log_proba")
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)


# --------------------------------------------------------------------------- error messages
#: a parameter-like name: ``name=`` or ``name must be`` / ``name is out of range``
_NAME = re.compile(r"(?<![\w.'\"])([a-z_][a-z0-9_]*)=(?!=)"
                   r"|(?<![\w.'\"])([a-z][a-z0-9]*_[a-z0-9_]+) (?:must be|is out of range)")


def _holey(d: pd.DataFrame) -> pd.DataFrame:
    d = d.astype(object).copy()
    d.iloc[0, 0] = None
    return d


BAD = [
    (AllOrders, lambda d: AllOrders(_holey(d), max_parents=1)),
    (order_mcmc, lambda d: order_mcmc(_holey(d), n_iter=10)),
    (AllOrders, lambda d: AllOrders(d, max_parents=-1)),
    (order_mcmc, lambda d: order_mcmc(d, n_iter=10, random_state=-1)),
    (OrderedAveraging, lambda d: OrderedAveraging(d, max_parents=-1)),
    (OrderedAveraging, lambda d: OrderedAveraging(_holey(d))),
    (OrderedAveraging, lambda d: OrderedAveraging(d, prior="AIC")),
    (scores.LocalScore, lambda d: scores.LocalScore(d, prior="BDeu", ess=0)),
    (scores.LocalScore, lambda d: scores.LocalScore(_holey(d))),
    (search.hill_climb, lambda d: search.hill_climb(d, max_parents=-1)),
    (search.hill_climb, lambda d: search.hill_climb(d, operators=["jump"])),
    (search.hill_climb, lambda d: search.hill_climb(d, max_parents=0, start=[("asia", "tub")])),
    (search.greedy_thick_thin, lambda d: search.greedy_thick_thin(d, max_parents=1.5)),
    (networks.random_network, lambda d: networks.random_network(5, max_parents=-1)),
    (networks.random_network, lambda d: networks.random_network(5, 2, random_state="x")),
    (networks.count_dags, lambda d: networks.count_dags(4, max_parents=-1)),
    (networks.BayesNet.sample, lambda d: networks.load("asia").sample(10, random_state=-2)),
    (networks.BayesNet.sample, lambda d: networks.load("asia").sample(10, target="nope")),
    (clustering.incremental_search, lambda d: clustering.incremental_search(d, cluster_size=0)),
    (clustering.incremental_search, lambda d: clustering.incremental_search(d, strategy="x")),
    (clustering.honeycomb_network, lambda d: clustering.honeycomb_network(arity=1)),
    (scores.score_order_families, lambda d: scores.score_order_families(d, list(range(8)), -1)),
    (forests.map_scf, lambda d: forests.map_scf(d, ["tub", "lung"], ["smoke"], penalty=-1)),
    (forests.map_scf, lambda d: forests.map_scf(d, ["tub", "lung"], ["smoke"], max_parents=-1)),
    (forests.random_dbn, lambda d: forests.random_dbn(n_vars=0)),
    (compare.check_params, lambda d: compare.check_params(max_parents=99)),
    (compare.check_params, lambda d: compare.check_params(penalty=-1)),
    (compare.check_params, lambda d: compare.check_params(queue_width=0.5)),
    (compare.cross_validate_classifiers,
     lambda d: compare.cross_validate_classifiers(d, "lung", ["SNN"], n_splits=1)),
    (compare.cross_validate_classifiers,
     lambda d: compare.cross_validate_classifiers(d, "lung", ["SNN"], backend="x")),
    (compare.stratified_folds, lambda d: compare.stratified_folds(["a", "b"], n_splits=3)),
    (clustering.random_strategy, lambda d: clustering.random_strategy([], 2)),
    (clustering.random_strategy, lambda d: clustering.random_strategy(["a"], 2, random_state=1.5)),
    (forests.SCFAverage, lambda d: forests.SCFAverage(d, ["tub", "lung"], ["smoke"], intra="x")),
    (forests.edge_posteriors, lambda d: forests.edge_posteriors(d, ["tub"], ["tub"])),
    (forests.DBNSCF, lambda d: forests.DBNSCF(max_parents=-1).fit(
        forests.sample_dbn(forests.random_dbn(3, random_state=0), 30, random_state=1))),
    (networks.load, lambda d: networks.load("no-such-network")),
    (bx.datasets.load, lambda d: bx.datasets.load("no-such-data")),
    (bx.datasets.load, lambda d: bx.datasets.load("iris", discretize="x")),
    (bx.data.as_discrete, lambda d: bx.data.as_discrete(_holey(d))),
    (bx.data.as_discrete, lambda d: bx.data.as_discrete(d, missing="x")),
    (bx.experiments.run_named, lambda d: bx.experiments.run_named("no-such-experiment")),
    (bx.experiments.run_named, lambda d: bx.experiments.run_named("demo_sampling",
                                                                  random_states=[99])),
    (bx.experiments.run, lambda d: bx.experiments.run(len, {"a": [1]}, random_states=[])),
    (bx.experiments.run, lambda d: bx.experiments.run(len, {"seed": [1]})),
    (bx.ismb.MBModel, lambda d: bx.ismb.MBModel(d, target="nope")),
    (averaging.AllDAGs, lambda d: averaging.AllDAGs(d, prior="AIC")),
    (averaging.AllDAGs, lambda d: averaging.AllDAGs(d, structure_prior="order-modular")),
    (averaging.AllDAGs, lambda d: averaging.AllDAGs(d, max_parents=-1)),
    (averaging.partition_mcmc, lambda d: averaging.partition_mcmc(d, prior="AIC")),
    (averaging.partition_mcmc, lambda d: averaging.partition_mcmc(d, structure_prior="order-modular")),
    (averaging.partition_mcmc, lambda d: averaging.partition_mcmc(d, p_swap=2)),
    (averaging.bootstrap_arcs, lambda d: averaging.bootstrap_arcs(d, prior="AIC")),
    (averaging.bootstrap_arcs, lambda d: averaging.bootstrap_arcs(d, method="pc")),
    (averaging.arc_table, lambda d: averaging.arc_table(d.iloc[:, :4], prior="AIC", n_boot=2)),
    (averaging.ask_averaged_model, lambda d: averaging.ask_averaged_model(d, prior="AIC")),
    (averaging.ask_averaged_model, lambda d: averaging.ask_averaged_model(d, method="exact")),
    (averaging.greedy_order, lambda d: averaging.greedy_order(d, prior="AIC")),
]
_FIT = [
    (C.AMA, {"max_parents": -1}), (C.AMA, {"order": "sideways"}), (C.AMA, {"random_state": -1}),
    (C.GreedyThickThin, {"prior": "AIC"}), (C.GreedyThickThin, {"max_parents": -1}),
    (C.NaiveBayes, {"ess": 0, "prior": "BDeu"}), (C.NaiveAveraging, {"handle_unknown": "x"}),
    (C.TAN, {"averaging": "x"}), (C.SFAN, {"penalty": -1}), (C.STAN, {"penalty": "x"}),
    (C.FAN, {"ess": -1}), (C.ISMB, {"queue_width": 0}), (C.ISMB, {"variant": "x"}),
    (C.AODE, {"threshold": -1}), (C.MAPLMG, {"method": "x"}), (C.MAPLMD, {"max_iter": 0}),
    (C.BMAAODE, {"handle_unknown": "x"}),
]


def _signature_names(f) -> set[str]:
    names = set(inspect.signature(f).parameters)
    if inspect.isclass(f):
        for m in ("fit", "predict_proba"):
            if hasattr(f, m):
                names |= set(inspect.signature(getattr(f, m)).parameters)
    return names


def _check_message(entry, msg: str, given: set[str] = frozenset()):
    named = {a or b for a, b in _NAME.findall(msg)}
    unknown = named - _signature_names(entry) - set(given)
    assert not unknown, f"{entry.__qualname__}: {msg!r} names {sorted(unknown)}"


@pytest.mark.parametrize("i", range(len(BAD)), ids=lambda i: f"{BAD[i][0].__qualname__}-{i}")
def test_error_messages_name_only_existing_parameters(i, df):
    entry, call = BAD[i]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises((ValueError, TypeError, KeyError)) as err:   # KeyError: run_named
            call(df)
    _check_message(entry, str(err.value))


@pytest.mark.parametrize("cls, params", _FIT, ids=lambda v: getattr(v, "__name__", None) or str(v))
def test_classifier_error_messages_name_only_existing_parameters(cls, params, xy):
    X, y = xy
    with pytest.raises((ValueError, TypeError)) as err:
        cls(**params).fit(X, y)
    _check_message(cls, str(err.value))


def test_the_message_checker_catches_a_wrong_name():
    with pytest.raises(AssertionError, match="missing"):
        _check_message(AllOrders, "pass missing='keep' or missing='drop'")
    with pytest.raises(AssertionError, match="max_indegree"):
        _check_message(search.hill_climb, "max_indegree must be >= 0, got -1")
    _check_message(search.hill_climb, "max_parents must be >= 0, got -1")


def test_the_call_site_rewriter_renames_top_level_keywords_only():
    import importlib.util
    spec = importlib.util.spec_from_file_location("rename_vocabulary",
                                                  ROOT / "scripts" / "rename_vocabulary.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    src = ('r = hill_climb(df, max_indegree=f(seed=1), tol=1)\n'
           'd = bn.sample_data(10, seed=s)\n'
           'x = df.sample(3, seed=0).pipe(order_mcmc, seed=2)\n'
           'y = compare_trial("iris", "SNN", k=2, seed=0)\n'
           'z = sample(3, seed=0)\n')
    got, n = mod.rewrite(src)
    assert got == ('r = hill_climb(df, max_parents=f(seed=1), tol=1)\n'
                   'd = bn.sample(10, random_state=s, as_frame=False)\n'
                   'x = df.sample(3, random_state=0).pipe(order_mcmc, seed=2)\n'
                   'y = compare_trial("iris", "SNN", max_parents=2, random_state=0)\n'
                   'z = sample(3, seed=0)\n')
    assert n == 6
