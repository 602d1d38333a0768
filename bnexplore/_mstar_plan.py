"""Planning the summary network M*: which CPTs are built in full, under what budget,
and how the build of Eq. 15 is split over threads.

Node ``X_i`` of :math:`M^*` (Dash & Cooper, Theorem 2) with parents ``P_i^*`` (the
*star*) has a CPT of

    cells_i = r_i * prod_{u in P_i^*} r_u

cells (``r`` the arities), one row per configuration of the star.  Building it by
Eq. 15 (``bnexplore._mstar``) needs, besides the CPT, the Moebius table ``Psi`` of
``(r_i - 1) cells_i / r_i`` cells and the tables of the largest subset
(:func:`~bnexplore._mstar.mstar_work`); the working memory is at most
``3 cells_i`` cells, so only a node above a third of the budget is costed in full.

* A *dense* CPT is built in full; with ``lazy="auto"`` a node is dense when
  ``cells_i <= MSTAR_DENSE_CELLS``, its work fits the budget, and the dense CPTs,
  smallest first, still fit the budget together (:func:`dense_nodes`).  The others are
  lazy (``bnexplore._lazy_mixture``): their rows are computed when prediction reads
  them.
* With ``lazy=False`` every CPT is dense and a network over the budget is refused
  before anything is allocated (:func:`check_dense`).
* The dense nodes are built by one serial kernel launched once per batch, each batch
  in a Python thread of its own (:mod:`bnexplore._threads`): the nodes go, largest
  cost first (``cells_i`` plus its number of subsets ``sum_{s <= k} C(|P_i^*|, s)``),
  to the lightest batch (the greedy longest-processing-time schedule); every batch
  keeps one ``Psi`` scratch, so there are no more batches than the budget holds
  ``Psi`` tables (:func:`star_cpts`).

Glossary
--------
star        ``P_i^*``, the parents of node i in M* (Procedure 1's union, or every candidate)
cells       the number of cells of a CPT, ``r_i * prod r_u``
work        the working cells of one CPT's build (``mstar_work``)
max_parents ``k``, the largest parent set of the averaging
"""
from __future__ import annotations

import numpy as np

from ._mstar import eq15_star_cpts, mstar_work, psi_scratch
from ._mstar_counts import bitset_capacity
from ._order_posterior import count_parent_sets
from ._threads import n_parts, run_parts
from .data.core import MemoryBudgetError, check_table_size

__all__ = ["check_dense", "dense_nodes", "star_cpts"]

#: cells and star subsets of all CPTs from which the nodes are split over the calling
#: thread's numba threads (below it a thread hand-off costs more than it saves)
SPLIT_WORK = 50_000

#: the most parents a node of M* may have (configuration keys are 64-bit)
MAX_STAR = 62

_ALLOC_FAILED = (
    "building the summary network's CPTs could not allocate working memory ({missing} nodes not built): the "
    "machine has less free memory than the budget assumes; use a smaller n or k, or lower the budget "
    "(budget= or bnexplore.data.set_table_budget) so that such runs are refused before they start")


def _refuse_wide(names: list[str], star_sizes: list[int]) -> None:
    """Refuse a star of more than :data:`MAX_STAR` parents."""
    v = next((v for v, m in enumerate(star_sizes) if m > MAX_STAR), None)
    if v is not None:
        raise MemoryBudgetError(f"{names[v]!r} would get {star_sizes[v]} parents in M*: at most {MAX_STAR}")


def check_dense(names: list[str], arities: list[int], stars: list[list[int]], all_cells: list[int],
                n: int | None, max_parents: int, budget: int) -> None:
    """Refuse (before allocating) a summary network whose full CPTs or their working
    memory exceed the budget."""
    total = sum(all_cells)
    lim = min(budget, 2**31 - 1)
    for v in range(len(names)) if 3 * max(all_cells, default=0) > lim else ():  # every table before any
        cells = all_cells[v]
        if cells > budget:
            check_table_size([arities[u] for u in stars[v]] + [arities[v]],
                             [names[u] for u in stars[v]] + [names[v]],
                             what=f"summary-network CPT of {names[v]!r} (n={n})", budget=budget)
        if 3 * cells <= lim:  # the working cells are at most 3 * cells
            continue
        work = mstar_work([arities[u] for u in stars[v]], arities[v], max_parents)
        if work > budget or work >= 2**31:  # (row keys of the subset tables are 32-bit)
            raise MemoryBudgetError(
                f"building the M* CPT of {names[v]!r} (n={n}) needs {work:,} working cells "
                f"(the Moebius table and the largest subset's tables), over the budget of "
                f"{budget:,}: use a smaller n or k")
    if total > budget:
        raise MemoryBudgetError(
            f"the summary network (n={n}) would need {total:,} CPT cells in all, over the budget "
            f"of {budget:,}: use a smaller n or k")
    _refuse_wide(names, [len(st) for st in stars])


def dense_nodes(arities: list[int], stars: list[list[int]], all_cells: list[int], max_parents: int,
                budget: int, dense_cells: int) -> list[int]:
    """The nodes whose M* CPT is built in full by ``lazy="auto"``: at most
    ``dense_cells`` cells, working memory within the budget, smallest first while their
    total fits the budget."""
    lim = min(budget, 2**31 - 1)
    out, total = [], 0
    for v in sorted(range(len(stars)), key=lambda v: all_cells[v]):
        cells = all_cells[v]
        if cells > min(budget, dense_cells) or len(stars[v]) > MAX_STAR or total + cells > budget:
            continue
        if 3 * cells > lim:
            work = mstar_work([arities[u] for u in stars[v]], arities[v], max_parents)
            if work > budget or work >= 2**31:
                continue
        out.append(v)
        total += cells
    return sorted(out)


def star_cpts(names: list[str], rows: tuple, parent_set_lists: tuple, star_arr: np.ndarray,
              star_len: np.ndarray, cells: list[int], max_parents: int, bdeu: bool, ess: float,
              budget: int) -> list[np.ndarray]:
    """Every node's M* CPT (Eq. 15): ``rows`` the fields of
    :class:`~bnexplore._mstar_counts.TrainingRows` (codes, row bitsets, arities),
    ``parent_set_lists`` those of :class:`~bnexplore._order_posterior.ParentSetLists`, the
    stars as rows padded with -1 and their lengths (0 for a node not built here),
    ``cells`` the CPT sizes; the nodes split into one balanced batch per thread."""
    codes, bits, arities = rows
    lens = star_len.tolist()
    p = len(lens)
    ar = arities.tolist()
    _refuse_wide(names, lens)
    cost = [cells[v] + count_parent_sets(lens[v], max_parents) for v in range(p)]  # cells, star subsets
    work = max((cells[v] // ar[v] * (ar[v] - 1) for v in range(p)), default=1)  # Psi of Eq. 15
    n_bins = n_parts(sum(cost), SPLIT_WORK, most=p)  # small: one thread
    n_bins = max(1, min(n_bins, budget // max(work, 1)))  # one Psi per thread, within the budget
    bins: list[list[int]] = [[] for _ in range(n_bins)]
    load = [0] * n_bins
    for v in sorted(range(p), key=lambda v: -cost[v]):  # largest first, to the lightest bin
        b = load.index(min(load))
        bins[b].append(v)
        load[b] += cost[v]
    cpt_off = np.concatenate([[0], np.cumsum(cells)]).astype(np.int64)
    out = np.empty(int(cpt_off[-1]))
    done = np.zeros(p, dtype=np.bool_)
    scratch = psi_scratch(n_bins, work)  # one Psi table per batch
    cap = bitset_capacity(codes.shape[1])
    one_batch = np.array([0, 0], dtype=np.int64)

    def batch(b: int) -> None:  # the nodes of bin b, in a thread of their own (bnexplore._threads)
        nodes = np.array(bins[b], dtype=np.int64)
        off = one_batch.copy()
        off[1] = nodes.size
        eq15_star_cpts(codes, bits, arities, *parent_set_lists, star_arr, star_len, max_parents, bdeu, ess, cap,
                       nodes, off, scratch[b:b + 1], out, cpt_off, done)

    try:
        run_parts(batch, n_bins)
    except (MemoryError, SystemError) as exc:  # an allocation failed inside the kernel
        raise MemoryError(_ALLOC_FAILED.format(missing=int(p - done.sum()))) from exc
    if not done.all():  # never return a CPT that was not written
        raise MemoryError(_ALLOC_FAILED.format(missing=int(p - done.sum())))
    return [out[cpt_off[v]:cpt_off[v + 1]].reshape(cells[v] // ar[v], ar[v]) for v in range(p)]
