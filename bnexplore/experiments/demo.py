"""A small real experiment: how well a known structure's CPTs are learned from samples.

``demo_sampling`` draws a random network G(N, K) (Dash & Cooper's generator,
:func:`bnexplore.networks.random_network`), samples ``n_samples`` training rows and
1000 test rows from it, fits the CPTs of the true structure to the training rows
(K2 prior) and records mean log-likelihoods.  ``kl_estimate`` - the mean log-ratio of
true and fitted probabilities on the test rows - estimates KL(true || fitted) and
shrinks as ``n_samples`` grows.  ``max_parents`` is the in-degree bound K of the
random graph and ``random_state`` (an int) the replicate; ``max_indegree=`` and
``seed=`` are their deprecated names.
"""
from __future__ import annotations

from .registry import register
from .._deprecation import renamed
from .._validation import check_random_state

__all__ = ["demo_sampling"]

N_TEST = 1000


@renamed(max_indegree="max_parents", seed="random_state")
def demo_sampling(n_nodes: int, max_parents: int, n_samples: int, random_state: int) -> dict:
    """Log-likelihood of samples from a random network and of its K2 fit.

    Examples
    --------
    >>> r = demo_sampling(n_nodes=5, max_parents=2, n_samples=200, random_state=0)
    >>> sorted(r)  # doctest: +NORMALIZE_WHITESPACE
    ['kl_estimate', 'loglik_test_fitted', 'loglik_test_true', 'loglik_train',
     'n_arcs']
    >>> r["kl_estimate"] > -0.1
    True
    """
    import numpy as np

    from bnexplore import networks

    rng = check_random_state(random_state)
    bn = networks.random_network(n_nodes, max_parents, random_state=rng)
    train = bn.sample(n_samples, random_state=rng)
    test = bn.sample(N_TEST, random_state=rng)
    fitted = networks.BayesNet.fit(bn, train, prior="K2")
    true_test = bn.log_prob(test)
    fitted_test = fitted.log_prob(test)
    return {
        "n_arcs": int(bn.dag.number_of_edges()),
        "loglik_train": float(bn.log_prob(train).mean()),
        "loglik_test_true": float(true_test.mean()),
        "loglik_test_fitted": float(fitted_test.mean()),
        "kl_estimate": float((true_test - fitted_test).mean()),
    }


register(
    "demo_sampling",
    demo_sampling,
    grid={"n_nodes": [10, 20, 40], "max_parents": [1, 2, 3],
          "n_samples": [100, 1000, 10000]},
    reduced_grid={"n_nodes": [6], "max_parents": [2], "n_samples": [100, 1000]},
    random_states=range(10),
    reduced_random_states=(0, 1),
    description="Random G(N, K) network: mean log-likelihood of its samples and "
                "KL of a K2 fit of its CPTs, as the sample size grows",
)
