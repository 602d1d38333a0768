"""Kernels split over Python threads (bnexplore._threads) give the results of one thread,
bit for bit: the order scoring (work items through an atomic counter) and the M* CPTs
(batches of nodes)."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import bnexplore as bx
import bnexplore._mstar_plan as mstar_plan
import bnexplore._order_scores as order_scores
from bnexplore._threads import n_parts, run_parts
from bnexplore.averaging import OrderedAveraging


def _build(data, order, monkeypatch, parts):
    """Arc posteriors, log evidence and every M* CPT with the work in ``parts`` parts."""
    def fixed(work, min_work, most=None):
        return min(parts, most) if most is not None else parts

    monkeypatch.setattr(order_scores, "n_parts", fixed)
    monkeypatch.setattr(mstar_plan, "n_parts", fixed)
    avg = OrderedAveraging(data, order=order, max_parents=3)
    net = avg.summary_network(6)
    return (avg.arc_posteriors().to_numpy(), avg.log_evidence,
            {v: np.asarray(net.cpts[v]) for v in net.nodes})


@pytest.mark.parametrize("rows", [40, 700])
def test_split_results_equal_one_thread_bit_for_bit(rows, monkeypatch):
    bn = bx.networks.load("alarm")
    data = bn.sample(rows, random_state=rows, as_frame=False)
    order = list(bn.nodes)
    post1, ev1, cpts1 = _build(data, order, monkeypatch, 1)
    for parts in (2, 5):
        post, ev, cpts = _build(data, order, monkeypatch, parts)
        assert np.array_equal(post, post1)
        assert ev == ev1
        assert cpts.keys() == cpts1.keys()
        assert all(np.array_equal(cpts[v], cpts1[v]) for v in cpts1)


def test_run_parts_runs_every_part_and_raises_after_all_ended():
    seen, ended = [], threading.Event()

    def part(i):
        if i == 0:
            raise ValueError("part 0")
        ended.wait(0.2)  # still running when part 0 fails
        seen.append(i)

    with pytest.raises(ValueError, match="part 0"):
        run_parts(part, 4)
    assert sorted(seen) == [1, 2, 3]


def test_n_parts_is_one_below_the_threshold_and_bounded():
    assert n_parts(10, 100) == 1
    assert 1 <= n_parts(1000, 100, most=1) == 1
    assert n_parts(1000, 100) >= 1
