"""Instance-specific prediction with one Markov blanket structure (ISMB, Eq. 6).

With one structure ``G`` only the families of the target ``Z`` and of its children
depend on ``Z``, so for an instance ``x`` (Visweswaran & Cooper, section 5.3)

    log P(Z = z | x, G, D) = f_Z(z) + sum_{C child} f_C(z) - log sum_z' exp(...)   (Eq. 6)

with the K2 posterior means as parameters, counted over the training rows that match
``x`` on the family's other members:

    f_Z(z) = log (N_z + 1) - log (N + r_Z),
    f_C(z) = log (N_{c,z} + 1) - log (N_z + r_C)                       (family terms)

(``N_z`` rows that match the target's / child's parents with ``Z = z``, ``N_{c,z}``
those that also have ``C = x_C``; with missing training cells each family counts the
rows where its variables are observed: available case).  A family is identified by
``(v, mask)`` and gets an id (``fid``); each instance caches its families' terms in
``F[fid]`` (:class:`_Instance`), so the structures of one search share them.

Missing values in ``x`` are summed out within the structure (module notes of
:mod:`bnexplore.ismb`): with ``M_G`` the missing members of the blanket,

    P(Z, x_obs | G)  ∝  sum_{m in states(M_G)} prod_{v in M_G root} P(v = m_v)
                        · P(Z | pa_Z) · prod_C P(C | pa_C, Z)          (missing sum)

after dropping barren missing children, grouped by shared missing variables
(:meth:`_Prediction._missing_sum`, :meth:`_Prediction._missing_term`).

Glossary
--------
inst
    An :class:`_Instance` (``eq[v]``: training rows whose ``v`` equals ``x_v``; ``F``
    and ``have``: the cached family terms) or a :class:`_MissingInstance`.
fid, _fams, _fid
    Family id; the families by id (id 0 the all-zero padding family); the ids by family.
id_lists
    Per structure, the ids of its prediction families (the target's, its children's).
miss
    Bit mask of the missing variables of an instance.
"""
from __future__ import annotations

import bisect
import itertools
import math
from typing import Sequence

import numpy as np

from ._mb_space import _bits

__all__: list[str] = []


def _logsumexp_rows(a: np.ndarray) -> np.ndarray:
    m = a.max(axis=-1, keepdims=True)
    return (m + np.log(np.exp(a - m).sum(axis=-1, keepdims=True)))


class _Instance:
    """Per-test-instance caches: row matches and family contributions to log P(Z | x)."""

    __slots__ = ("eq", "F", "have", "x")

    def __init__(self, cols: np.ndarray, x: np.ndarray, r: int):
        self.x = x
        self.eq = cols == x[:, None]
        self.F = np.zeros((256, r))      # row 0 is the all-zero padding family
        self.have = np.zeros(256, dtype=bool)
        self.have[0] = True


class _MissingInstance:
    """An instance with missing values, summed out within each Markov-blanket structure.

    Within a structure G the parents of the target and the spouses are roots; they get
    their K2 posterior-mean marginal ``(N_v(i) + 1) / (N + r_v)`` (available case), so
    that G defines a joint over the target and its blanket.  A missing child keeps its
    CPT; a missing non-member contributes only its marginal, which sums to one, so it
    drops out.  Hence (with ``M_G`` the missing members of G's blanket)

        P(Z, x_obs | G) ∝ sum over the completions m of M_G of
            prod_{v in M_G, v not a child} P(v = m_v) · P(Z | pa_Z) · prod_C P(C | pa_C, Z)

    which equals the sum over the completions of *every* missing variable (module notes).
    The families without a missing variable factor out of the sum (``base``); the rest
    enter through :meth:`_Prediction._missing_sum`, cached per set of them (``terms``) and per
    linked group (``groups``), so the structures of one search share them.

    Attributes
    ----------
    x : ndarray
        Codes, -1 where missing.
    miss : int
        Bit mask of the missing variables.
    base : _Instance
        Contributions of the families without a missing variable (the rows of ``eq`` of
        the missing variables are all False and never read).
    tables : dict fid -> (missing variables of the family, (prod arities, r) array)
        Contribution of a family for every joint state of its missing variables.
    terms : dict tuple of fids -> (r,) array
        log sum over the missing members of one structure's families that hold them.
    groups : dict tuple of fids -> (r,) array
        The same for one group of families linked by shared missing variables.
    """

    __slots__ = ("x", "miss", "base", "tables", "terms", "groups")

    def __init__(self, x: np.ndarray, miss: int, base: _Instance):
        self.x, self.miss, self.base = x, miss, base
        self.tables: dict[int, tuple[list[int], np.ndarray]] = {}
        self.terms: dict[tuple[int, ...], np.ndarray] = {}
        self.groups: dict[tuple[int, ...], np.ndarray] = {}


#: largest number of joint states of the missing members of one Markov blanket that
#: prediction with that structure sums over (an instance may have any number missing)
MAX_MISSING_COMPLETIONS = 1 << 16


class _Prediction:
    """The prediction half of :class:`bnexplore.ismb.MBModel` (Eq. 6 and the missing
    sums); it uses the model's training columns, arities, target and family caches."""

    def _family_id(self, v: int, mask: int) -> int:
        key = (v, mask)
        i = self._fid.get(key)
        if i is None:
            with self._lock:
                i = self._fid.get(key)
                if i is None:
                    self._fams.append(key)          # listed before its id is visible
                    i = self._fid[key] = len(self._fams) - 1
        return i

    def _pred_ids(self, pa: tuple[int, ...], keep: bool = True) -> tuple[int, ...]:
        """Ids of the families that enter P(Z | x, G): the target's and its children's
        (cached per structure unless ``keep`` is False)."""
        ids = self._ids_cache.get(pa)
        if ids is None:
            tb = 1 << self.t
            ids = (self._family_id(self.t, pa[self.t]),) + tuple(
                self._family_id(v, m) for v, m in enumerate(pa) if m & tb)
            if keep:
                self._ids_cache[pa] = ids
        return ids

    def _successor_ids(self, pa: tuple[int, ...], keys: list, changes: list) -> np.ndarray:
        """The prediction-family ids of every successor ``keys[s]`` of ``pa`` (which
        changed the parents of the nodes ``changes[s]``), rows of a zero-padded matrix:
        ``pa``'s row with the changed families replaced, rebuilt when a node joins or
        leaves the children (the same rows as :meth:`_pred_ids`)."""
        t, tb = self.t, 1 << self.t
        fget, fid = self._fid.get, self._family_id
        children = [v for v, m in enumerate(pa) if m & tb]
        col = {v: j + 1 for j, v in enumerate(children)}
        row = [fid(t, pa[t])] + [fid(v, pa[v]) for v in children]
        mat = np.zeros((len(keys), len(row) + 1), dtype=np.int32)
        mat[:, :len(row)] = row
        at_s, at_j, at_id = [], [], []
        for s, (new, changed) in enumerate(zip(keys, changes)):
            joins = leaves = -1                  # at most one node joins or leaves
            for v in changed:
                if v != t and bool(new[v] & tb) != (v in col):
                    if v in col:
                        leaves = col[v]
                    else:
                        joins = v
            if joins >= 0 or leaves >= 0:        # the children change: shift the row
                ids = row.copy()
                if leaves >= 0:
                    del ids[leaves]
                else:
                    ids.insert(1 + bisect.bisect(children, joins), fget((joins, new[joins]))
                               or fid(joins, new[joins]))
                if new[t] != pa[t]:
                    ids[0] = fget((t, new[t])) or fid(t, new[t])
                mat[s, :len(ids)] = ids
                mat[s, len(ids):] = 0
                continue
            for v in changed:
                at_s.append(s)
                at_j.append(0 if v == t else col[v])
                at_id.append(fget((v, new[v])) or fid(v, new[v]))
        if at_s:
            mat[at_s, at_j] = at_id
        return mat

    def _family_order(self, fids) -> tuple[int, ...]:
        """Family ids sorted by family ``(v, mask)``: one order of summation whatever the
        order in which the searches numbered the families."""
        return tuple(sorted(fids, key=self._fams.__getitem__))

    def _contrib_one(self, inst: _Instance, v: int, mask: int) -> np.ndarray:
        """Contribution of family (v, mask) to log P(Z = z | x, G, D) (K2 posterior means)."""
        rest = _bits(mask & ~(1 << self.t))
        if not rest:
            sel = None
        elif len(rest) == 1:
            sel = inst.eq[rest[0]]
        else:
            sel = np.logical_and.reduce(inst.eq[rest])
        z = self._zcol if sel is None else self._zcol[sel]
        nj = np.bincount(z, minlength=self.r).astype(float)
        if v == self.t:
            return np.log(nj + 1.0) - math.log(nj.sum() + self.r)
        hit = inst.eq[v] if sel is None else (sel & inst.eq[v])
        nk = np.bincount(self._zcol[hit], minlength=self.r).astype(float)
        if self._obs is not None:       # available cases: the rows where v is observed too
            seen = self._obs[v] if sel is None else (sel & self._obs[v])
            nj = np.bincount(self._zcol[seen], minlength=self.r).astype(float)
        return np.log(nk + 1.0) - np.log(nj + self._arity[v])

    def _ensure(self, inst: _Instance, ids: np.ndarray) -> None:
        n = len(self._fams)
        if inst.F.shape[0] < n:
            cap = max(n, 2 * inst.F.shape[0])
            F = np.zeros((cap, self.r))
            F[:inst.F.shape[0]] = inst.F
            have = np.zeros(cap, dtype=bool)
            have[:inst.have.shape[0]] = inst.have
            inst.F, inst.have = F, have
        mark = np.zeros(inst.have.shape[0], dtype=bool)
        mark[ids] = True                       # a scatter, not a sort of every id
        need = np.flatnonzero(mark & ~inst.have)
        if need.size:
            inst.F[need] = self._contrib_many(inst, need)
            inst.have[need] = True

    def _contrib_many(self, inst: _Instance, fids: np.ndarray) -> np.ndarray:
        """:meth:`_contrib_one` of many families at once, shape (len(fids), r): the counts
        in one numba pass (:func:`bnexplore._ismb_counts.family_counts`), the same terms."""
        from ._ismb_counts import family_counts

        fams = [self._fams[i] for i in fids]
        notb = ~(1 << self.t)
        rests = [_bits(m & notb) for _, m in fams]
        k = len(fams)
        rest = np.zeros((k, max(1, max(len(b) for b in rests))), dtype=np.int64)
        n_rest = np.zeros(k, dtype=np.int64)
        for f, b in enumerate(rests):
            rest[f, :len(b)] = b
            n_rest[f] = len(b)
        v = np.array([vf for vf, _ in fams], dtype=np.int64)
        child = v != self.t
        obs = self._obs
        if obs is None:
            obs = self._obs_all = getattr(self, "_obs_all", None)
            if obs is None or obs.shape != inst.eq.shape:
                obs = self._obs_all = np.ones(inst.eq.shape, dtype=bool)
        nj, nk = family_counts(inst.eq, obs, self._zcol, self.r, v, child, rest, n_rest)
        out = np.empty((k, self.r))
        nj = nj.astype(float)
        ch = np.flatnonzero(child)
        if ch.size:
            ar = np.asarray(self._arity, dtype=float)[v[ch]]
            out[ch] = np.log(nk[ch] + 1.0) - np.log(nj[ch] + ar[:, None])
        for f in np.flatnonzero(~child):
            out[f] = np.log(nj[f] + 1.0) - math.log(nj[f].sum() + self.r)
        return out

    def _log_pred_batch(self, inst: _Instance | _MissingInstance,
                        id_lists: Sequence[tuple[int, ...]]) -> np.ndarray:
        """log P(Z | x, G, D) of many structures given their family ids, shape (k, r).

        For an instance with missing values, the families without a missing variable
        are added as for a complete instance and those with one enter through
        :meth:`_missing_term`, the log-sum-exp over the completions of the missing
        members of the blanket (see :class:`_MissingInstance`).
        """
        if not id_lists:
            return np.zeros((0, self.r))
        width = max(len(ids) for ids in id_lists)
        mat = np.zeros((len(id_lists), width), dtype=np.int64)
        for row, ids in enumerate(id_lists):
            mat[row, :len(ids)] = ids
        return self._log_pred_mat(inst, mat)

    def _log_pred_mat(self, inst: _Instance | _MissingInstance, mat: np.ndarray,
                      fids: np.ndarray | None = None) -> np.ndarray:
        """:meth:`_log_pred_batch` with the ids as rows of a zero-padded matrix ``mat``
        (as narrow as its longest row: the sums then add the same terms in the same
        order; ``fids``, if given, its distinct ids); ``mat`` is not changed."""
        if not len(mat):
            return np.zeros((0, self.r))
        if isinstance(inst, _MissingInstance):
            tb = 1 << self.t
            mat = mat.copy()
            terms = np.zeros((len(mat), self.r))
            for row, ids in enumerate(mat.tolist()):
                touched = []
                for j, i in enumerate(ids):
                    if not i:
                        break                    # the zero padding
                    v, m = self._fams[i]
                    if (m | 1 << v) & ~tb & inst.miss:
                        touched.append(i)
                        mat[row, j] = 0          # summed out with the missing members
                if touched:
                    key = self._family_order(touched)
                    term = inst.terms.get(key)
                    if term is None:
                        term = inst.terms[key] = self._missing_sum(inst, key)
                    terms[row] = term
            self._ensure(inst.base, mat.ravel())
            acc = inst.base.F[mat].sum(axis=1) + terms
            return acc - _logsumexp_rows(acc)
        from ._ismb_counts import family_sums

        self._ensure(inst, mat.ravel() if fids is None else fids)
        acc = family_sums(inst.F, mat)
        return acc - _logsumexp_rows(acc)

    def _log_marginal(self, v: int) -> np.ndarray:
        """log K2 posterior-mean marginal of variable ``v`` (available case), per state."""
        out = self._logmarg.get(v)
        if out is None:
            col = self._cols[v] if self._obs is None else self._cols[v][self._obs[v]]
            counts = np.bincount(col, minlength=self._arity[v])
            out = np.log((counts + 1.0) / (self._n_obs[v] + self._arity[v]))
            self._logmarg[v] = out
        return out

    def _missing_table(self, inst: _MissingInstance, i: int) -> tuple[list[int], np.ndarray]:
        """Contribution of family ``i`` for every joint state of its missing variables
        (C order over those variables), cached on the instance."""
        hit = inst.tables.get(i)
        if hit is not None:
            return hit
        v, m = self._fams[i]
        fv = _bits((m | 1 << v) & ~(1 << self.t) & inst.miss)
        part = _Instance.__new__(_Instance)
        part.eq = inst.base.eq.copy()
        table = np.empty((math.prod(self._arity[u] for u in fv), self.r))
        for k, states in enumerate(itertools.product(*[range(self._arity[u]) for u in fv])):
            for u, st in zip(fv, states):
                part.eq[u] = self._cols[u] == st
            table[k] = self._contrib_one(part, v, m)
        inst.tables[i] = (fv, table)
        return fv, table

    def _missing_sum(self, inst: _MissingInstance, fids: tuple[int, ...]) -> np.ndarray:
        """log of the sum over the missing members of a blanket of the families ``fids``
        (those of one structure that hold a missing variable), shape (r,).

        Barren variables go first: a missing child that no other family holds has a CPT
        that sums to one over its states, so its family drops out (and then a missing
        spouse that only it held drops out with its marginal), repeatedly.  What is left
        splits into groups of families linked by shared missing variables; the sum is the
        product of the sums over each group (:meth:`_missing_term`, cached per group).
        """
        tb = 1 << self.t
        fam = {}
        for i in fids:
            v, m = self._fams[i]
            fam[i] = (v, (m | 1 << v) & ~tb & inst.miss)
        holders: dict[int, int] = {}         # missing variable -> families holding it
        head = {}                            # missing child -> its family
        for i, (v, mv) in fam.items():
            for u in _bits(mv):
                holders[u] = holders.get(u, 0) + 1
            if v != self.t and mv >> v & 1:
                head[v] = i
        barren = [v for v in head if holders[v] == 1]
        while barren:                        # drop the families of barren missing children
            _, mv = fam.pop(head.pop(barren.pop()))
            for u in _bits(mv):
                holders[u] -= 1
                if holders[u] == 1 and u in head:
                    barren.append(u)
        total = np.zeros(self.r)
        left = dict(fam)
        while left:                          # connected groups by shared missing variables
            i, (_, reach) = left.popitem()
            group = [i]
            grown = True
            while grown:
                grown = False
                for j, (_, mw) in list(left.items()):
                    if mw & reach:
                        reach |= mw
                        group.append(j)
                        del left[j]
                        grown = True
            key = self._family_order(group)
            term = inst.groups.get(key)
            if term is None:
                term = inst.groups[key] = self._missing_term(inst, key)
            total = total + term
        return total

    def _missing_term(self, inst: _MissingInstance, fids: tuple[int, ...]) -> np.ndarray:
        """log sum over the completions of the missing members of a blanket of the product
        of the families ``fids`` (those holding a missing variable) and of the marginals of
        the missing members that are not children, shape (r,)."""
        tb = 1 << self.t
        members = children = 0
        for i in fids:
            v, m = self._fams[i]
            members |= (m | 1 << v) & ~tb & inst.miss
            if v != self.t:
                children |= 1 << v
        svars = _bits(members)
        sizes = [self._arity[v] for v in svars]
        total = math.prod(sizes)
        if total > MAX_MISSING_COMPLETIONS:
            raise ValueError(
                f"a Markov blanket met by the ISMB search has {len(svars)} missing members "
                f"({', '.join(self.names[v] for v in svars)}) with {total:,} joint states to sum "
                f"over (limit {MAX_MISSING_COMPLETIONS:,} per structure): impute some of these "
                f"features in this row, or drop some of them from the data")
        grid = np.indices(sizes).reshape(len(svars), total)   # state of each member, C order
        row_of = {v: j for j, v in enumerate(svars)}
        acc = np.zeros((total, self.r))
        for i in fids:
            fv, table = self._missing_table(inst, i)
            idx = np.ravel_multi_index([grid[row_of[u]] for u in fv],
                                       [self._arity[u] for u in fv])
            acc += table[idx]
        for v in svars:
            if not children >> v & 1:                # a root of the blanket: its marginal
                acc += self._log_marginal(v)[grid[row_of[v]]][:, None]
        top = acc.max(axis=0)
        return top + np.log(np.exp(acc - top).sum(axis=0))

    def _log_pred(self, inst: _Instance, pa: tuple[int, ...]) -> np.ndarray:
        return self._log_pred_batch(inst, [self._pred_ids(pa)])[0]
