"""Family scores (BDeu and K2, parent sets of size 0-3) on 1,000, 10,000 and 100,000
ALARM rows against pybnesian (C++) and pgmpy, in the same process, same families.

Our scorer runs uncached, so every call counts the data (on the one-hot bit columns or
the distinct rows, whichever is cheaper for the family; only the lgamma values of BDeu
are kept between calls, per ``ess / x``): "per call" is one ``LocalScore.score`` call per
family (Python overhead included), "batch" scores the families of one child in one
kernel call (``score_many``; the searches use the same kernels).  The fixed cost of a
call is printed with it: a no-op numba function called with the kernel's argument
types, and the name-to-position lookups of the family.  pybnesian has a BDe score (= BDeu) but no K2: K2 is compared with pgmpy only.
A peer that is not installed is skipped with a message.  Each figure is the CPU time
(``time.process_time``) of the best of ``--repeat`` interleaved rounds; the load
average is printed with it.  At 100,000 rows
the bytes a family's count reads and writes are compared with the copy bandwidth
measured here (numpy, 256 MiB): a few MB per family stay in the last-level cache, so
the figure can pass 100%, and what bounds counting is the increments, not DRAM.

Run: python benchmarks/bench_scores.py [--rows 1000,10000,100000] [--families 400]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import report  # noqa: E402

import bnexplore as bx  # noqa: E402
from bnexplore.scores import LocalScore  # noqa: E402


def _families(names, n, seed=0):
    rng = np.random.default_rng(seed)
    fams = []
    for _ in range(n):
        child = names[rng.integers(len(names))]
        k = int(rng.integers(0, 4))
        fams.append((child, [str(x) for x in rng.choice([x for x in names if x != child], size=k,
                                                         replace=False)]))
    return fams


def _best(fn, repeat, clock=time.process_time):
    """Smallest time of ``repeat`` calls: CPU time (every thread of the process) unless
    another clock is given (on a shared machine CPU time moves less with the load)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = clock()
        fn()
        best = min(best, clock() - t0)
    return best


def _copy_bandwidth() -> float:
    """Bytes per second of a large array copy (read + write)."""
    a = np.ones(1 << 25)
    b = np.empty_like(a)
    t = _best(lambda: np.copyto(b, a), 5, time.perf_counter)
    return 2 * a.nbytes / t


@numba.njit(cache=True, nogil=True)
def _noop(at, child, k, p0, p1, p2):
    """What a per-call kernel call costs before it does anything."""
    return 0.0


def _fixed_cost(ours: LocalScore, fams, repeat: int) -> tuple[float, float]:
    """(numba call, name lookups) per family, CPU seconds: the no-op kernel with the
    arguments of :func:`bnexplore.scores._score_family_ctx` (the context's address, the
    child, the number of parents and three parents), and a dict lookup per name, as
    ``LocalScore.score`` does them."""
    names = ours.data._index
    at = ours._context()
    _noop(at, 0, 0, 0, 0, 0)
    t_noop = _best(lambda: [_noop(at, 0, len(p), 0, 0, 0) for c, p in fams], repeat) / len(fams)
    t_key = _best(lambda: [(names[c], *[names[u] for u in p]) for c, p in fams], repeat) / len(fams)
    return t_noop, t_key


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", type=int, default=400)
    ap.add_argument("--rows", default="1000,10000,100000")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    try:
        import pybnesian as pbn
    except ImportError:
        pbn = None
        print("pybnesian: skipped (not installed: pip install 'bnexplore[bench]')")
    try:
        from pgmpy.estimators import BDeu, K2
    except ImportError:
        BDeu = K2 = None
        print("pgmpy: skipped (not installed)")
    bw = _copy_bandwidth()
    print(f"copy bandwidth {bw / 1e9:.1f} GB/s; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    alarm = bx.networks.load("alarm")
    for n in (int(x) for x in args.rows.split(",")):
        df = alarm.sample(n, random_state=0).astype("category")
        names = list(df.columns)
        fams = _families(names, args.families)
        by_child: dict[str, list] = {}
        for c, p in fams:
            by_child.setdefault(c, []).append(p)
        for prior in ("BDeu", "K2"):
            ours = LocalScore(df, prior=prior, ess=1.0, cache=False)
            mine = [ours.score(c, p) for c, p in fams]          # warm-up: compilation, distinct rows
            t_call = _best(lambda: [ours.score(c, p) for c, p in fams], args.repeat) / len(fams)
            t_batch = _best(lambda: [ours.score_many(c, ps) for c, ps in by_child.items()],
                            args.repeat) / len(fams)
            t_noop, t_key = _fixed_cost(ours, fams, args.repeat)
            load = os.getloadavg()[0]
            tag = f"{prior} family score, {n:,} ALARM rows"
            print(f"  {tag}: per call {t_call * 1e6:.2f} us, of which a no-op numba call with the same argument "
                  f"types {t_noop * 1e6:.2f} us ({t_noop / t_call:.0%}) and looking the names up "
                  f"{t_key * 1e6:.2f} us ({t_key / t_call:.0%}); batch {t_batch * 1e6:.2f} us")
            if prior == "BDeu" and pbn is not None:
                score = pbn.BDe(df, 1.0)
                model = pbn.DiscreteBN(names)
                theirs = [score.local_score(model, c, p) for c, p in fams]
                t_peer = _best(lambda: [score.local_score(model, c, p) for c, p in fams], args.repeat) / len(fams)
                err = max(abs(a - b) / abs(b) for a, b in zip(mine, theirs))
                print(f"  max relative difference vs pybnesian BDe: {err:.1e}")
                report(f"{tag}, per call, CPU (load {load:.1f})", t_call * 1e6, t_peer * 1e6, "pybnesian", unit="us")
                report(f"{tag}, batch, CPU (load {load:.1f})", t_batch * 1e6, t_peer * 1e6, "pybnesian", unit="us")
            if BDeu is not None and n <= 10_000:
                peer = BDeu(df, equivalent_sample_size=1.0) if prior == "BDeu" else K2(df)
                t_pg = _best(lambda: [peer.local_score(c, p) for c, p in fams], 1) / len(fams)
                report(f"{tag}, per call (load {load:.1f})", t_call * 1e6, t_pg * 1e6, "pgmpy", unit="us")
            if n >= 100_000:
                from bnexplore.scores import _bits_cost, _use_bits
                ucols, w = ours._rows()
                bits, off = ours._bit_columns()
                total = 0.0
                for c, p in fams:
                    ci, ps = ours._key(c, p)
                    ps = np.array(ps, dtype=np.int64)
                    if _use_bits(bits, ucols.shape[1], ci, ps, ours._arities):
                        # each word operation reads two words (8 bytes each); the levels it writes stay in cache
                        total += 16 * _bits_cost(bits.shape[1], ci, ps, ours._arities)
                    else:
                        # per distinct row: the child and each parent column (int32), the weight (int64)
                        # and the base key (int64) written and read once per column pass
                        total += ucols.shape[1] * ((len(ps) + 1) * 4 + 8 + (len(ps) + 1) * 16)
                bytes_fam = total / len(fams)
                print(f"  {tag}: at most ~{bytes_fam / 1e6:.2f} MB read per family (bit columns: "
                      f"{bits.nbytes / 1e6:.1f} MB) at {bytes_fam / t_batch / 1e9:.1f} GB/s = "
                      f"{bytes_fam / t_batch / bw:.0%} of the copy bandwidth")

if __name__ == "__main__":
    main()
