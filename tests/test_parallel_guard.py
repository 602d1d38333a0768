"""The guard around numba parallel launches: a lock only where the threading layer needs one,
and kernels launched from several threads at once give the results of serial calls."""
import threading

import numpy as np
import pytest

from bnexplore import _parallel


def _held_by_other_thread(guard) -> bool:
    """Whether another thread would have to wait for ``guard``'s lock now."""
    got = []

    def probe():
        ok = guard._lock.acquire(blocking=False)
        if ok:
            guard._lock.release()
        got.append(ok)

    t = threading.Thread(target=probe)
    t.start()
    t.join()
    return not got[0]


@pytest.mark.parametrize("layer, locks", [(None, True), ("workqueue", True), ("omp", False),
                                          ("tbb", False)])
def test_guard_locks_only_on_unsafe_or_unknown_layers(monkeypatch, layer, locks):
    monkeypatch.setattr(_parallel, "PARALLEL_KERNELS", True)
    monkeypatch.setattr(_parallel, "_layer", lambda: layer)
    guard = _parallel.ParallelGuard()
    with guard:
        with guard:                      # re-entrant
            assert _held_by_other_thread(guard) is locks
        assert _held_by_other_thread(guard) is locks
    assert not _held_by_other_thread(guard)


def test_layer_chosen_inside_an_entry_releases_the_lock(monkeypatch):
    monkeypatch.setattr(_parallel, "PARALLEL_KERNELS", True)
    layer = [None]
    monkeypatch.setattr(_parallel, "_layer", lambda: layer[0])
    guard = _parallel.ParallelGuard()
    with guard:
        layer[0] = "omp"                 # the first launch chose a threadsafe layer
        with guard:
            pass
    assert not _held_by_other_thread(guard)


def test_serial_kernels_never_lock(monkeypatch):
    monkeypatch.setattr(_parallel, "PARALLEL_KERNELS", False)
    monkeypatch.setattr(_parallel, "_layer", lambda: None)
    guard = _parallel.ParallelGuard()
    with guard:
        assert not _held_by_other_thread(guard)


def test_concurrent_order_averaging_equals_serial():
    import bnexplore as bx

    df = bx.networks.load("asia").sample(2000, random_state=1)
    order = list(df.columns)

    def run():
        avg = bx.averaging.OrderedAveraging(df, order=order, max_parents=3)
        net = avg.summary_network(3)
        return avg.arc_posteriors().to_numpy(), avg.log_evidence, \
            [np.asarray(net.cpts[v]) for v in net.nodes]

    want = run()                         # serial, also compiles and picks the layer
    out, errors = [None] * 4, []

    def worker(i):
        try:
            out[i] = run()
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not errors, errors
    for got in out:
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1] == want[1]
        for a, b in zip(got[2], want[2]):
            np.testing.assert_array_equal(a, b)
