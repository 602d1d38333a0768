"""Bit primitives of the counting kernels: population count and bit compression.

``_pext(x, m)`` gathers the bits of ``x`` at the set bits of ``m`` into the low bits
of the result (the x86 BMI2 instruction ``pext``).  :func:`_compress` applies it word
by word to pack the rows of one parent configuration into a short bitset, so that
counting inside that configuration only visits its own rows.  On a CPU without BMI2
(or with ``BNEXPLORE_NO_PEXT=1`` in the environment) a portable loop gives the same
result, more slowly.

Examples
--------
>>> import numpy as np
>>> from bnexplore._bits import _pext_soft
>>> int(_pext_soft(np.uint64(0b101101), np.uint64(0b001110)))  # bits 1, 2, 3 of x
6
"""
from __future__ import annotations

import os
import platform

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["HAS_PEXT"]


@intrinsic
def _popcount(typingctx, x):
    """Number of set bits of a uint64 (LLVM ctpop)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])
    return sig, codegen


@intrinsic
def _pext_hw(typingctx, x, m):
    """BMI2 parallel bit extract (only compiled where the CPU has it)."""
    sig = types.uint64(types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(64), [ir.IntType(64), ir.IntType(64)])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.x86.bmi.pext.64")
        return builder.call(fn, args)
    return sig, codegen


@numba.njit(cache=True, nogil=True)
def _pext_soft(x, m):
    """Portable parallel bit extract: one step per set bit of ``m``."""
    out = np.uint64(0)
    b = np.uint64(1)
    while m:
        low = m & (~m + np.uint64(1))
        if x & low:
            out |= b
        b <<= np.uint64(1)
        m &= m - np.uint64(1)
    return out


def _host_has_pext() -> bool:
    """True if numba compiles for a CPU with BMI2 (and the user did not opt out)."""
    if os.environ.get("BNEXPLORE_NO_PEXT", "") not in ("", "0"):
        return False
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    from numba.core import config
    if config.CPU_NAME or config.CPU_FEATURES:  # numba targets a named CPU: trust its feature list
        return "+bmi2" in (config.CPU_FEATURES or "")
    try:
        import llvmlite.binding as llvm
        return bool(llvm.get_host_cpu_features().get("bmi2", False))
    except Exception:  # pragma: no cover - no feature query: stay portable
        return False


#: whether the counting kernels use the BMI2 instruction
HAS_PEXT = _host_has_pext()
_pext = _pext_hw if HAS_PEXT else _pext_soft


@numba.njit(cache=True, nogil=True, inline="always")
def _compress(src, mask, words, pk, nw, dst):
    """Pack the bits of ``src`` at the set bits of ``mask`` into ``dst`` (from bit 0).

    ``words[:nw]`` lists the words where ``mask`` is non-zero, in order, and ``pk``
    their popcounts.  Writes ``ceil(sum(pk) / 64)`` words of ``dst``.
    """
    o = 0
    acc = np.uint64(0)
    nb = 0
    for i in range(nw):
        w = words[i]
        v = _pext(src[w], mask[w])
        k = pk[i]
        acc |= v << np.uint64(nb)
        nb += k
        if nb >= 64:
            dst[o] = acc
            o += 1
            nb -= 64
            acc = (v >> np.uint64(k - nb)) if nb > 0 else np.uint64(0)
    if nb > 0:
        dst[o] = acc


@intrinsic
def _fetch_add(typingctx, arr, idx, val):
    """Atomically ``old = arr[idx]; arr[idx] += val; return old`` (int64 array): a
    shared work counter for threads of one parallel kernel."""
    sig = types.int64(arr, types.intp, types.int64)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])
        return builder.atomic_rmw("add", ptr, args[2], "seq_cst")
    return sig, codegen


# one compilation per argument type when the kernels call each other (see bnexplore._jit)
from ._jit import unliteral_calls  # noqa: E402

unliteral_calls(globals())
