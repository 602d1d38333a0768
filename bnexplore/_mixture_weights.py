"""MAP weights of linear mixtures of classifiers (Cerquides & Lopez de Mantaras, 2005).

Given ``n`` component models and ``M`` training instances, a linear mixture with weights
``a`` on the simplex (``sum_u a_u = 1``, ``a_u > 0``) and the prior ``P(a) ~ prod_u a_u``
(Eq. 6, a Dirichlet with every hyperparameter 2) has the log posteriors

    discriminative (Eq. 8):  f_D(a) = sum_x log sum_u a_u p_u(x_C | x_{-C}) + sum_u log a_u
    generative (Eq. 10):     f_G(a) = sum_x [log sum_u a_u p_{u,x_C} - log sum_u a_u p_u]
                                      + sum_u log a_u

with ``p_{u,c} = P_u(c, x_{-C})`` and ``p_u = sum_c p_{u,c}``.  Their gradients are

    g_D,u = sum_x p_u(x_C | x_{-C}) / sum_v a_v p_v(x_C | x_{-C}) + 1 / a_u
    g_G,u = sum_x [p_{u,x_C} / sum_v a_v p_{v,x_C} - p_u / sum_v a_v p_v] + 1 / a_u    (Eq. 13)

``f_D`` is concave and EM maximises it (:func:`maplmd_weights`: the M-step
``a_u = (sum_x r_{x,u} + 1) / (M + n)`` with responsibilities ``r``, accelerated by
SQUAREM); ``f_G`` is not, and :func:`maplmg_weights` finds a local maximum by L-BFGS in
softmax coordinates ``a = softmax([0, z])`` (``df/dz_k = a_k (g_k - a.g)``, whose
stationary points are the KKT points on the open simplex) or by SLSQP.  Both stop on
the scaled KKT residual (:func:`kkt_residual`)

    max_u |g_u - lambda| / (M + n),   lambda = sum_u a_u g_u.

Every row of the component probabilities is scaled by its largest entry (the ratios
of Eq. 8 and Eq. 10 are unchanged; the removed log constants are added back to the
objective).

Glossary
--------
log_cond
    ``log p_u(x_C | x_{-C})`` of every instance and component, (M, n).
log_joint, y
    ``log P_u(c, x_{-C})``, (M, n, K), and the class codes (M,).
a, f, g
    Weights, objective, gradient.

References
----------
J. Cerquides and R. Lopez de Mantaras. Robust Bayesian linear classifier ensembles.
ECML 2005. R. Varadhan and C. Roland. Simple and globally convergent methods for
accelerating the convergence of any EM algorithm. Scand. J. Statist. 35, 2008.

Examples
--------
>>> import numpy as np
>>> from bnexplore.mixtures import maplmd_weights
>>> r = maplmd_weights(np.log([[0.9, 0.5], [0.8, 0.5], [0.7, 0.5]]))
>>> r.converged, round(float(r.weights.sum()), 12)
(True, 1.0)
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize
from scipy.special import logsumexp

from ._validation import Options, check_int, check_number

__all__ = ["WeightsResult", "WeightsConvergenceWarning", "loo_conditional", "maplmd_objective",
           "maplmd_weights", "maplmg_objective", "maplmg_weights", "kkt_residual"]

#: the optimisers of :func:`maplmg_weights`
_LMG_METHODS = Options("slsqp", "softmax")


class WeightsConvergenceWarning(UserWarning):
    """The mixture weights did not reach the optimum within ``max_iter`` iterations."""


@dataclass
class WeightsResult:
    """Outcome of a weight optimisation.

    Attributes
    ----------
    weights : ndarray (n,)
        On the simplex, every entry > 0.
    objective : float
        Log posterior (up to a constant) at ``weights``.
    n_iter : int
    converged : bool
    kkt : float
        Scaled KKT residual ``max_u |g_u - lambda| / (M + n)`` (see :func:`kkt_residual`).
    method : str
    history : list of float
        Objective after each iteration (EM) or at the end of each solver call.
    """

    weights: np.ndarray
    objective: float
    n_iter: int
    converged: bool
    kkt: float
    method: str
    history: list = field(default_factory=list)


def loo_conditional(log_joint_loo: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``log P_u^LOO(x_C | x_{-C})`` (M, n): the true class's conditional per ODE."""
    y = np.asarray(y)
    return log_joint_loo[np.arange(len(y)), :, y] - logsumexp(log_joint_loo, axis=2)


def maplmd_objective(weights: np.ndarray, log_cond: np.ndarray) -> tuple[float, np.ndarray]:
    """Log of Eq. 8 and its gradient: ``sum_x log sum_u a_u p_u(x) + sum_u log a_u``.

    ``log_cond`` is (M, n): ``log P_DPD_u(x_C | x_{-C})`` of every training instance.
    """
    a = np.asarray(weights, float)
    with np.errstate(divide="ignore"):
        la = np.log(a)
    z = log_cond + la[None, :]
    lse = logsumexp(z, axis=1)
    f = float(lse.sum() + la.sum())
    g = np.exp(log_cond - lse[:, None]).sum(axis=0) + 1.0 / a
    return f, g


def _lmg_terms(log_joint: np.ndarray, y: np.ndarray):
    """Row-scaled ``p_{u, x_C}`` and ``p_u`` of Eq. 13 plus the removed log constant.

    Returns ``(A, B, const)`` with ``A[m, u] = p_{u, x_C} / max_u p_{u, x_C}``,
    ``B[m, u] = p_u / max_u p_u`` and ``const = sum_m log max_u p_{u,x_C} - log max_u p_u``
    (the scaling cancels in the ratio of Eq. 10 up to this constant).
    """
    y = np.asarray(y)
    a = log_joint[np.arange(len(y)), :, y]
    mj = log_joint.max(axis=2, keepdims=True)
    b = np.log(np.exp(log_joint - mj).sum(axis=2)) + mj[:, :, 0]
    am, bm = a.max(axis=1, keepdims=True), b.max(axis=1, keepdims=True)
    return np.exp(a - am), np.exp(b - bm), float((am - bm).sum())


def maplmg_objective(weights: np.ndarray, log_joint: np.ndarray | None = None,
                     y: np.ndarray | None = None, terms=None) -> tuple[float, np.ndarray]:
    """Log of Eq. 10 and its gradient (the bracket of Eq. 13).

    ``f(a) = sum_x [log sum_u a_u p_{u,x_C} - log sum_u a_u p_u] + sum_u log a_u`` with
    ``p_{u,c} = P_u(c, x_{-C})`` and ``p_u = sum_c p_{u,c}``; the gradient is
    ``g_u = sum_x [p_{u,x_C} / sum_v a_v p_{v,x_C} - p_u / sum_v a_v p_v] + 1 / a_u``.
    Pass either ``log_joint`` (M, n, K) and ``y`` or precomputed
    ``terms = _lmg_terms(log_joint, y)``.
    """
    A, B, const = _lmg_terms(log_joint, y) if terms is None else terms
    a = np.asarray(weights, float)
    with np.errstate(divide="ignore"):
        la = np.log(a)
        sa, sb = A @ a, B @ a
        f = float(np.log(sa).sum() - np.log(sb).sum() + const + la.sum())
    g = A.T @ (1.0 / sa) - B.T @ (1.0 / sb) + 1.0 / a
    return f, g


def kkt_residual(weights: np.ndarray, grad: np.ndarray, n_rows: int) -> float:
    """Scaled KKT residual of ``max f(a)`` on the open simplex.

    With every ``a_u > 0`` the inequality multipliers vanish and stationarity of the
    Lagrangian requires ``g_u = lambda`` for every ``u``, where
    ``lambda = sum_u a_u g_u`` (for Eq. 10: ``lambda = n``; for Eq. 8: ``lambda = M + n``).
    Returns ``max_u |g_u - lambda| / (M + n)`` (``M = n_rows``): the violation relative to
    the number of terms of the log posterior.
    """
    a = np.asarray(weights, float)
    g = np.asarray(grad, float)
    lam = float(a @ g)
    return float(np.max(np.abs(g - lam)) / (int(n_rows) + a.size))


def _finish(weights: np.ndarray) -> np.ndarray:
    w = np.clip(np.asarray(weights, float), 1e-300, None)
    return w / w.sum()


def _warn(name: str, res: "WeightsResult", tol: float) -> None:
    warnings.warn(f"{name}: the weights did not converge after {res.n_iter} iterations "
                  f"(scaled KKT residual {res.kkt:.2e} > tol {tol:.1e}); the returned "
                  f"weights are the last finite iterate: raise max_iter",
                  WeightsConvergenceWarning, stacklevel=3)


def maplmd_weights(log_cond: np.ndarray, max_iter: int = 5000, tol: float = 1e-6,
                   init: np.ndarray | None = None, warn: bool = True) -> WeightsResult:
    """MAP weights of the linear mixture of discriminative distributions (Eq. 8) by EM.

    Each instance gets a hidden indicator of the component that generated its class;
    with the prior ``P(a) ~ prod_u a_u`` (Eq. 6) the M-step is
    ``a_u = (sum_x r_{x,u} + 1) / (M + n)`` where ``r_{x,u}`` are the responsibilities.
    The objective (log of Eq. 8) is concave, so the optimum is unique.  EM is accelerated
    with SQUAREM (Varadhan & Roland 2008): two EM steps define a squared extrapolation,
    followed by a stabilising EM step, and the plain EM step is kept whenever the
    extrapolation does not increase the objective, so the objective never decreases.  Iteration stops when the relative KKT residual falls below ``tol``.

    Parameters
    ----------
    log_cond : ndarray (M, n)
        ``log P_u(x_C | x_{-C})`` of every training instance (leave-one-out for ODEs).
    max_iter : int
    tol : float
    init : array (n,), optional
        Starting weights (default uniform).
    warn : bool
        Emit :class:`WeightsConvergenceWarning` when not converged.

    Returns
    -------
    WeightsResult

    Examples
    --------
    >>> import numpy as np
    >>> lc = np.log([[0.9, 0.5], [0.8, 0.5], [0.7, 0.5]])
    >>> r = maplmd_weights(lc)
    >>> r.converged, bool(r.weights[0] > r.weights[1])
    (True, True)
    """
    log_cond = np.asarray(log_cond, float)
    if log_cond.ndim != 2 or log_cond.shape[1] == 0:
        raise ValueError(f"log_cond must be (n_rows, n_models), got shape {log_cond.shape}")
    if not np.all(np.isfinite(log_cond)):
        raise ValueError("log_cond has non-finite entries: every model must give every "
                         "instance a positive probability")
    return _maplmd_em(log_cond, check_int(max_iter, "max_iter", low=1),
                      check_number(tol, "tol", low=0, closed="neither"), init, warn)


def _maplmd_em(log_cond: np.ndarray, max_iter: int, tol: float,
               init: np.ndarray | None = None, warn: bool = True) -> WeightsResult:
    """:func:`maplmd_weights` on checked input (finite ``(M, n)`` floats, ``max_iter >= 1``,
    ``tol > 0``)."""
    M, n = log_cond.shape
    # work with the row-scaled probabilities: the mixture only needs ratios per row
    P = np.exp(log_cond - log_cond.max(axis=1, keepdims=True))
    shift = float(log_cond.max(axis=1).sum())

    def step(a):
        """One EM step from ``a``: (new weights, objective at a, KKT residual at a)."""
        mix = P @ a
        f = float(np.log(mix).sum() + shift + np.log(a).sum())
        R = a * (P.T @ (1.0 / mix))          # sum of responsibilities per component
        new = (R + 1.0) / (M + n)
        # g_u = (R_u + 1) / a_u, lambda = M + n: residual = max |new_u / a_u - 1|
        kkt = float(np.max(np.abs(new / a - 1.0)))
        return _finish(new), f, kkt

    a = np.full(n, 1.0 / n) if init is None else _finish(init)
    history = []
    a1, f, kkt = step(a)
    history.append(f)
    it = 0
    while kkt > tol and it < max_iter:
        if n > 1 and it + 3 <= max_iter:
            a2, f1, _ = step(a1)
            r = a1 - a
            v = a2 - a1 - r
            nv = float(np.sqrt(v @ v))
            it += 2
            cand = None
            if nv > 0:
                alpha = -float(np.sqrt(r @ r)) / nv
                ext = a - 2 * alpha * r + alpha * alpha * v
                if np.all(ext > 0):
                    cand, _, _ = step(_finish(ext))   # stabilising EM step
                    it += 1
            a_next = a2
            if cand is not None:
                fc = step(cand)[1]
                f2 = step(a2)[1]
                if fc >= f2:
                    a_next = cand
        else:
            a_next = a1
            it += 1
        a = a_next
        a1, f, kkt = step(a)
        history.append(f)
    res = WeightsResult(a, f, it, bool(kkt <= tol), kkt, "em", history)
    if warn and not res.converged:
        _warn("MAPLMD (EM)", res, tol)
    return res


def _softmax(z):
    z = np.concatenate([[0.0], z])
    e = np.exp(z - z.max())
    return e / e.sum()


#: the BLAS libraries loaded in the process (found at the first optimisation)
_BLAS = None


def _one_blas_thread():
    """A context with one BLAS thread: scipy's L-BFGS-B makes many tiny BLAS calls, and
    on a busy machine OpenBLAS threads waking up for each of them turn a 2 ms
    optimisation into 100 ms (its numbers are the same with one thread; SLSQP's are not
    quite, so it keeps the default threads)."""
    global _BLAS
    if _BLAS is None:
        from threadpoolctl import ThreadpoolController   # a dependency of scikit-learn
        _BLAS = ThreadpoolController().select(user_api="blas")
    return _BLAS.limit(limits=1)


def _solve_softmax(fun, n, x0, max_iter, scale):
    """Maximise ``fun(a) -> (f, g)`` over the simplex in softmax coordinates (L-BFGS-B).

    ``a = softmax([0, z])``; ``df/dz_k = a_k (g_k - a.g)``.  Stationary points in ``z``
    are exactly the KKT points on the open simplex.
    """
    z0 = np.log(np.clip(x0, 1e-300, None))
    z0 = z0[1:] - z0[0]

    def obj(z):
        a = _softmax(z)
        f, g = fun(a)
        gz = a * (g - a @ g)
        return -f / scale, -gz[1:] / scale

    with _one_blas_thread():
        r = minimize(obj, z0, jac=True, method="L-BFGS-B",
                     options={"maxiter": int(max_iter), "gtol": 1e-13, "ftol": 1e-16,
                              "maxcor": 30})
    return _softmax(r.x), int(r.nit)


def _solve_slsqp(fun, n, x0, max_iter, lower, scale):
    def obj(a):
        f, g = fun(a)
        return -f / scale, -g / scale

    cons = ({"type": "eq", "fun": lambda a: a.sum() - 1.0,
             "jac": lambda a: np.ones_like(a)},)
    r = minimize(obj, x0, jac=True, method="SLSQP", bounds=[(lower, 1.0)] * n,
                 constraints=cons, options={"maxiter": int(max_iter), "ftol": 1e-14})
    return _finish(r.x), int(r.nit)


def maplmg_weights(log_joint: np.ndarray, y: np.ndarray, method: str = "softmax",
                   max_iter: int = 500, tol: float = 1e-6, init: np.ndarray | None = None,
                   warn: bool = True) -> WeightsResult:
    """MAP weights of the linear mixture of generative distributions (Eq. 10).

    Maximises ``log P_LMG(a | D)`` subject to ``sum_u a_u = 1``, ``a_u > 0`` using the
    analytic gradient (Eq. 13).  The prior term ``sum_u log a_u`` keeps the optimum
    inside the simplex, and at the optimum ``g_u = n`` for all ``u`` (hence
    ``a_u >= 1 / (M + n)``, used as the lower bound).  The objective is not concave, so
    this is a local optimum from the uniform start; it is checked with the KKT residual.

    Parameters
    ----------
    log_joint : ndarray (M, n, K)
        ``log P_u(c, x_{-C})`` of every training instance (leave-one-out for ODEs).
    y : int array (M,)
        Class codes.
    method : {"softmax", "slsqp"}
        ``"softmax"`` (default): L-BFGS on ``a = softmax([0, z])``, which satisfies the
        constraints by construction; its stationary points are exactly the KKT points of
        the constrained problem (``df/dz_k = a_k (g_k - a.g)``).  ``"slsqp"``: sequential
        least squares on ``a`` with the explicit bound and equality constraints (the
        second optimiser; slower for many attributes), followed, if the KKT residual is
        still above ``tol``, by a polish in softmax coordinates.
    max_iter : int
        Iteration limit of each solver call.
    tol : float
        Tolerance on the scaled KKT residual (:func:`kkt_residual`).
    init : array (n,), optional
        Starting weights (default uniform).
    warn : bool
        Emit :class:`WeightsConvergenceWarning` when the residual stays above ``tol``.

    Returns
    -------
    WeightsResult
    """
    log_joint = np.asarray(log_joint, float)
    if log_joint.ndim != 3:
        raise ValueError(f"log_joint must be (n_rows, n_models, n_classes), got {log_joint.shape}")
    if not np.all(np.isfinite(log_joint)):
        raise ValueError("log_joint has non-finite entries")
    return _maplmg_optimise(log_joint, y, _LMG_METHODS(method, "method"),
                            check_int(max_iter, "max_iter", low=1),
                            check_number(tol, "tol", low=0, closed="neither"), init, warn)


def _maplmg_optimise(log_joint: np.ndarray, y: np.ndarray, method: str, max_iter: int,
                     tol: float, init: np.ndarray | None = None,
                     warn: bool = True) -> WeightsResult:
    """:func:`maplmg_weights` on checked input (finite ``(M, n, K)`` floats, a known
    ``method``, ``max_iter >= 1``, ``tol > 0``)."""
    M, n, _ = log_joint.shape
    terms = _lmg_terms(log_joint, y)
    fun = lambda a: maplmg_objective(a, terms=terms)  # noqa: E731
    x0 = np.full(n, 1.0 / n) if init is None else _finish(init)
    if n == 1:
        f, g = fun(x0)
        return WeightsResult(x0, f, 0, True, 0.0, method, [f])
    lower = 0.5 / (M + n)
    history = []
    if method == "slsqp":
        a, nit = _solve_slsqp(fun, n, x0, max_iter, lower, scale=float(M + n))
    else:
        a, nit = _solve_softmax(fun, n, x0, max_iter, float(M + n))
    f, g = fun(a)
    history.append(f)
    kkt = kkt_residual(a, g, M)
    if kkt > tol and max_iter > 1:     # polish (a fresh L-BFGS memory from the iterate)
        a2, nit2 = _solve_softmax(fun, n, a, max_iter, float(M + n))
        f2, g2 = fun(a2)
        history.append(f2)
        nit += nit2
        if f2 >= f or kkt_residual(a2, g2, M) < kkt:
            a, f, g = a2, f2, g2
            kkt = kkt_residual(a, g, M)
    if not np.all(np.isfinite(a)):  # never hand back NaN
        a = x0
        f, g = fun(a)
        kkt = kkt_residual(a, g, M)
    res = WeightsResult(_finish(a), f, nit, bool(kkt <= tol), kkt, method, history)
    if warn and not res.converged:
        _warn(f"MAPLMG ({method})", res, tol)
    return res
