"""One compilation per argument type for kernels called from other kernels.

numba types a constant argument of a call inside a kernel as a literal
(``Literal[int](0)``, not ``int64``) and compiles the callee once for every pattern of
literal and non-literal arguments that its call sites pass: ``_moebius_scatter`` was
compiled ten times, ``_binary_whole`` three times, each a full compilation (about a
sixth of a fresh install's compile time). The callees never need the literal value
(every one also runs with run-time integers), so :func:`unliteral_calls` makes the
dispatchers of a module type such calls with the plain types: one compilation per
argument type. The machine code computes the same numbers (constants are only
propagated by LLVM, which keeps IEEE semantics), so results are bit for bit the same.

Examples
--------
>>> import numba
>>> @numba.njit
... def twice(x):
...     return 2 * x
>>> @numba.njit
... def caller(y):
...     return twice(1) + twice(y)
>>> unliteral_calls({"twice": twice})
1
>>> caller(3), len(twice.signatures)
(8, 1)
"""
from __future__ import annotations

from typing import Any, Mapping

from numba.core import types
from numba.core.registry import CPUDispatcher

__all__ = ["unliteral_calls"]


def _unliteral_template(disp: CPUDispatcher) -> None:
    plain = disp.get_call_template

    def get_call_template(args, kws):
        # the types a call inside a kernel gives, with literals made plain
        return plain(tuple(types.unliteral(a) for a in args),
                     {k: types.unliteral(v) for k, v in kws.items()})

    disp.get_call_template = get_call_template
    disp._bnx_unliteral = True


def unliteral_calls(namespace: Mapping[str, Any]) -> int:
    """Type calls of the numba kernels in ``namespace`` without literal arguments.

    Apply to a module's ``globals()`` after its kernels are defined; kernels already
    treated (imported from another module) are left alone. Returns how many kernels
    were treated.
    """
    n = 0
    for obj in list(namespace.values()):
        if isinstance(obj, CPUDispatcher) and not getattr(obj, "_bnx_unliteral", False):
            _unliteral_template(obj)
            n += 1
    return n
