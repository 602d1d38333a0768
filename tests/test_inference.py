"""BayesNet.posteriors: exact inference checked against brute-force enumeration of the
joint, and against pyAgrum's LazyPropagation where it is installed."""
import math

import networkx as nx
import numpy as np
import pytest

import bnexplore as bx
from bnexplore.networks import BayesNet, ImpossibleEvidenceError


def _joint(bn, nodes):
    """The joint P(nodes) as a dense array (axes in ``nodes`` order), by multiplying the
    CPTs of an ancestrally closed set of nodes: brute-force enumeration of every
    assignment, independent of any elimination order."""
    idx = {v: i for i, v in enumerate(nodes)}
    shape = [len(bn.states[v]) for v in nodes]
    joint = np.ones(shape)
    for v in nodes:
        fam = bn.parents(v) + [v]
        t = np.asarray(bn.cpts[v]).reshape([len(bn.states[u]) for u in fam])
        order = sorted(range(len(fam)), key=lambda a: idx[fam[a]])
        t = np.transpose(t, order)
        present = {idx[u] for u in fam}
        joint = joint * t.reshape([shape[a] if a in present else 1 for a in range(len(nodes))])
    return joint


def _brute_posterior(bn, query, evidence):
    """P(query | evidence) over the ancestral closure of query and evidence (the other
    nodes are barren: they sum to one)."""
    want = {query, *evidence}
    closed = set(want)
    for v in want:
        closed |= nx.ancestors(bn.dag, v)
    nodes = [v for v in bn.nodes if v in closed]
    assert math.prod(len(bn.states[v]) for v in nodes) < 5_000_000
    joint = _joint(bn, nodes)
    index = []
    for v in nodes:
        index.append(bn.states[v].index(evidence[v]) if v in evidence else slice(None))
    sub = joint[tuple(index)]
    kept = [v for v in nodes if v not in evidence]
    if query in evidence:
        out = np.zeros(len(bn.states[query]))
        out[bn.states[query].index(evidence[query])] = 1.0
        return out
    axes = tuple(a for a, v in enumerate(kept) if v != query)
    m = sub.sum(axis=axes)
    return m / m.sum()


ASIA_EVIDENCE = [{}, {"smoke": "yes"}, {"xray": "yes", "dysp": "no"}, {"either": "yes", "asia": "yes"},
                 {"lung": "no", "tub": "no", "dysp": "yes", "bronc": "no"}]
CHILD_EVIDENCE = [{}, {"LowerBodyO2": "<5", "XrayReport": "Oligaemic"}, {"GruntingReport": "yes", "Age": "11-30_days"},
                  {"CO2Report": ">=7.5", "LVHreport": "yes", "BirthAsphyxia": "no"},
                  {"RUQO2": "12+", "Disease": "TGA"}]


def test_asia_equals_the_full_joint():
    bn = bx.networks.load("asia")
    joint = _joint(bn, bn.nodes)
    assert joint.size == 256 and abs(joint.sum() - 1) < 1e-12
    for ev in ASIA_EVIDENCE:
        post = bn.posteriors(ev)
        assert list(post) == list(bn.dag.nodes)
        index = tuple(bn.states[v].index(ev[v]) if v in ev else slice(None) for v in bn.nodes)
        sub = joint[index]
        kept = [v for v in bn.nodes if v not in ev]
        assert abs(bn.log_prob_evidence(ev) - np.log(sub.sum())) < 1e-12
        for v in kept:
            m = sub.sum(axis=tuple(a for a, u in enumerate(kept) if u != v))
            np.testing.assert_allclose(post[v], m / m.sum(), atol=1e-10, rtol=0)
        for v in ev:
            assert post[v][bn.states[v].index(ev[v])] == 1.0


@pytest.mark.parametrize("ev", CHILD_EVIDENCE)
def test_child_equals_enumeration(ev):
    bn = bx.networks.load("child")
    for v, s in ev.items():
        assert s in bn.states[v], (v, bn.states[v])
    post = bn.posteriors(ev)
    for v in bn.nodes:
        np.testing.assert_allclose(post[v], _brute_posterior(bn, v, ev), atol=1e-10, rtol=0)


def test_disconnected_network_and_state_strings():
    bn = BayesNet({"a": [], "b": ["a"], "c": []},
                  states={"a": [0, 1], "b": ["x", "y"], "c": ["u", "v", "w"]},
                  cpts={"a": np.array([[0.3, 0.7]]), "b": np.array([[0.9, 0.1], [0.2, 0.8]]),
                        "c": np.array([[0.2, 0.3, 0.5]])})
    post = bn.posteriors({"b": "y", "a": None})  # None: not observed
    pa = np.array([0.3 * 0.1, 0.7 * 0.8])
    np.testing.assert_allclose(post["a"], pa / pa.sum(), atol=1e-14)
    np.testing.assert_allclose(post["c"], [0.2, 0.3, 0.5], atol=1e-14)
    np.testing.assert_allclose(bn.posteriors({"a": "1"})["b"], [0.2, 0.8])  # the string form of a label
    assert abs(bn.log_prob_evidence({"b": "y", "c": "w"}) - np.log((0.03 + 0.56) * 0.5)) < 1e-12


def test_bad_evidence_is_refused_with_its_name():
    bn = bx.networks.load("asia")
    with pytest.raises(ValueError, match="'smokes'"):
        bn.posteriors({"smokes": "yes"})
    with pytest.raises(ValueError, match="'maybe'.*'smoke'|'smoke'.*'maybe'"):
        bn.posteriors({"smoke": "maybe"})
    with pytest.raises(TypeError, match="dict"):
        bn.posteriors([("smoke", "yes")])
    # either = lung or tub (deterministic): "either = no" with "lung = yes" is impossible
    with pytest.raises(ImpossibleEvidenceError, match="probability zero"):
        bn.posteriors({"lung": "yes", "either": "no"})
    assert bn.log_prob_evidence({"lung": "yes", "either": "no"}) == -np.inf
    assert isinstance(ImpossibleEvidenceError("x"), ValueError)


def test_many_observations_do_not_underflow():
    bn = bx.networks.load("alarm")
    row = bn.sample(1, random_state=3).iloc[0]
    ev = {v: row[v] for v in bn.nodes[:30]}
    lp = bn.log_prob_evidence(ev)
    assert np.isfinite(lp) and lp < -10
    post = bn.posteriors(ev)
    assert all(abs(p.sum() - 1) < 1e-12 for p in post.values())


@pytest.mark.parametrize("name", ["asia", "child", "alarm"])
def test_equals_pyagrum_lazy_propagation(name):
    gum = pytest.importorskip("pyagrum")
    bn = bx.networks.load(name)
    g = bn.to_pyagrum()
    rng = np.random.default_rng(0)
    for _ in range(3):
        row = bn.sample(1, random_state=int(rng.integers(1 << 30))).iloc[0]
        observed = list(rng.choice(bn.nodes, size=min(4, len(bn) // 2), replace=False))
        ev = {v: str(row[v]) for v in observed}
        ie = gum.LazyPropagation(g)
        ie.setEvidence(ev)
        ie.makeInference()
        post = bn.posteriors(ev)
        for v in bn.nodes:
            np.testing.assert_allclose(post[v], np.asarray(ie.posterior(v).toarray()), atol=1e-10, rtol=0)


def test_summary_network_with_lazy_cpts_and_a_dense_refusal():
    df = bx.networks.load("asia").sample(300, random_state=2)
    avg = bx.averaging.OrderedAveraging(df, max_parents=2)
    ev = {"dysp": "yes", "asia": "no"}
    lazy = avg.summary_network(None, lazy=True).posteriors(ev)
    dense = avg.summary_network(None, lazy=False).posteriors(ev)
    for v in dense:
        np.testing.assert_allclose(lazy[v], dense[v], atol=1e-12)
    dense_net = bx.networks.random_network(100, max_parents=3, random_state=0)  # treewidth about 38
    with pytest.raises(ValueError, match="clique table"):
        dense_net.posteriors({})
