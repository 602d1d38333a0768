"""The abbreviations of the papers behind bnexplore, spelled out and defined in one line.

Apps and documentation render from here: :data:`GLOSSARY` maps each abbreviation to an
:class:`Entry` (full name, one-line definition, source), :func:`define` looks one up,
:func:`glossary_table` gives them all as a DataFrame, and :func:`abbreviations_in`
lists the ones a text uses (for "spelled out on first use" and hover definitions).
Every string is plain text (no HTML or TeX), to be shown as text.

Sources: Dash & Cooper, AISTATS 2003 (SNN, NMA, GTT, AMA, M*, L_k(pi)); Cerquides &
Lopez de Mantaras, ECML 2005 (AODE, LMD, LMG, MAPLMD, MAPLMG, BMAAODE); Ziebart, Dey &
Bagnell, UAI 2007 (SCF, TAN, FAN, STAN, SFAN); Visweswaran & Cooper, JMLR 2010 (ISMB,
ISMB-MS, NISMB, MB, CAL); Castelo & Siebes (Cramer's V, q); Friedman & Koller 2003
(order MCMC); Gelman et al. (R-hat, ESS).

Examples
--------
>>> from bnexplore.glossary import define, abbreviations_in
>>> define("GTT").name
'Greedy thick-thin'
>>> abbreviations_in("AMA beats GTT; see M* and L_2(pi).")
['AMA', 'GTT', 'M*', 'L_k(pi)']
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

__all__ = ["Entry", "GLOSSARY", "define", "glossary_table", "abbreviations_in", "spell_out"]


@dataclass(frozen=True)
class Entry:
    """One abbreviation: its full name, a one-line definition and where it comes from."""

    name: str
    definition: str
    source: str


_DC = "Dash & Cooper 2003"
_CL = "Cerquides & Lopez de Mantaras 2005"
_ZDB = "Ziebart, Dey & Bagnell 2007"
_VC = "Visweswaran & Cooper 2010"

#: abbreviation -> :class:`Entry`, in the order a lecture meets them
GLOSSARY: dict[str, Entry] = {
    "BN": Entry("Bayesian network", "A directed acyclic graph over the variables with one conditional "
                "probability table per node; the joint is the product of the tables.", _DC),
    "DAG": Entry("Directed acyclic graph", "A graph of arrows with no directed cycle: the structure of a "
                 "Bayesian network.", _DC),
    "CPT": Entry("Conditional probability table", "P(node | parents) for every configuration of the "
                 "parents.", _DC),
    "BMA": Entry("Bayesian model averaging", "Predict with every model weighted by its posterior "
                 "probability P(model | data) instead of with the single best model.", _DC),
    "MAP": Entry("Maximum a posteriori", "The single model (or parameter value) with the largest "
                 "posterior probability.", _ZDB),
    "K2": Entry("K2 score", "The marginal likelihood P(D | structure) with every Dirichlet parameter "
                "prior count equal to 1 (Cooper & Herskovits).", _DC),
    "BDeu": Entry("Bayesian Dirichlet, equivalent uniform", "The marginal likelihood with prior counts "
                  "ess / (q r) per cell: equivalent structures score the same.", _DC),
    "ESS": Entry("Equivalent sample size", "In BDeu, the total prior count spread over a table's cells; "
                 "for MCMC, the effective sample size of correlated draws.", _DC),
    "GTT": Entry("Greedy thick-thin", "Search from the empty graph: add the arc that most increases "
                 "P(D | S) until none helps, then remove arcs likewise; the single best network.", _DC),
    "SNN": Entry("Single naive network", "Naive Bayes: the class is the only parent of every "
                 "attribute, with the standard parameters.", _DC),
    "NMA": Entry("Naive model averaging", "Model averaging over every naive (selective naive Bayes) "
                 "structure: each attribute has the class as parent or no parent.", _DC),
    "L_k(pi)": Entry("The class L_k(pi)", "Every DAG whose arcs go from earlier to later nodes of the "
                     "order pi and whose nodes have at most k parents.", _DC),
    "MA": Entry("Model averaging (exact)", "Averaging over every DAG of L_k(pi), made tractable because "
                "its posterior factorises over the nodes.", _DC),
    "M*": Entry("Summary network M*", "One network whose node X_i has the union of its averaged parent "
                "sets and the posterior-weighted mixture CPT: inference in it equals model averaging.",
                _DC),
    "AMA": Entry("Approximate model averaging", "Model averaging over L_k(pi) restricted to parent sets "
                 "inside the n most probable parents of each node (Procedure 1), so M* stays small.",
                 _DC),
    "Order MCMC": Entry("Order Markov chain Monte Carlo", "Sample node orders with probability "
                        "proportional to P(D | order), averaging exactly over each order's DAGs "
                        "(Friedman & Koller).", _DC),
    "R-hat": Entry("Potential scale reduction", "Compares the spread within and between MCMC chains; "
                   "values near 1 (below 1.05) mean the chains agree, i.e. have converged.", _DC),
    "ODE": Entry("One-dependence estimator", "Naive Bayes in which every attribute also depends on one "
                 "chosen super-parent attribute.", _CL),
    "AODE": Entry("Averaged one-dependence estimators", "The uniform average of the predictions of every "
                  "one-dependence estimator (each attribute as super-parent in turn).", _CL),
    "LMD": Entry("Linear mixture of discriminative distributions", "A weighted sum of the models' "
                 "P(class | attributes) (the linear opinion pool).", _CL),
    "LMG": Entry("Linear mixture of generative distributions", "A weighted sum of the models' joint "
                 "P(class, attributes), normalised afterwards.", _CL),
    "MAPLMD": Entry("MAP linear mixture of discriminative distributions", "LMD with the mixture weights "
                    "at their maximum a posteriori value (found by EM).", _CL),
    "MAPLMG": Entry("MAP linear mixture of generative distributions", "LMG with the mixture weights at "
                    "their maximum a posteriori value (found by an augmented Lagrangian with BFGS).", _CL),
    "BMAAODE": Entry("Bayesian model averaging over one-dependence estimators", "Exact BMA over the ODEs "
                     "under a decomposable prior, in place of AODE's equal weights.", _CL),
    "TAN": Entry("Tree-augmented naive Bayes", "Naive Bayes plus a tree connecting the attributes: each "
                 "attribute has the class and at most one other attribute as parents.", _ZDB),
    "FAN": Entry("Forest-augmented naive Bayes", "Like TAN but the attributes are connected by a forest "
                 "(an attribute may have no attribute parent).", _ZDB),
    "STAN": Entry("Selective tree-augmented naive Bayes", "TAN in which an attribute may also leave out "
                  "the class as a parent (built-in feature selection).", _ZDB),
    "SFAN": Entry("Selective forest-augmented naive Bayes", "FAN in which an attribute may leave out the "
                  "class as a parent: a forest of attributes, each optionally depending on the class.",
                  _ZDB),
    "SCF": Entry("Selectively conditioned forest", "Ordered sets of variables: within a set a forest, "
                 "and each variable has at most k parents from earlier sets.", _ZDB),
    "DBN": Entry("Dynamic Bayesian network", "A Bayesian network repeated over time steps, with arcs "
                 "within a step and from earlier steps.", _ZDB),
    "MB": Entry("Markov blanket", "A node's parents, children and the children's other parents: given "
                "them, the node is independent of all other variables.", _VC),
    "ISMB": Entry("Instance-specific Markov blanket", "For each test instance, search Markov blanket "
                  "models of the target with a score that depends on that instance, and average "
                  "their predictions.", _VC),
    "ISMB-MS": Entry("Instance-specific Markov blanket, model selection", "ISMB that predicts with the "
                     "single most probable Markov blanket it found instead of averaging.", _VC),
    "NISMB": Entry("Non-instance-specific Markov blanket", "The population-wide version of ISMB: the "
                   "same number of models, chosen by a score that ignores the instance.", _VC),
    "CAL": Entry("Calibration score", "How far predicted probabilities are from observed frequencies, "
                 "from reliability diagrams (Caruana & Alexandru); lower is better.", _VC),
    "AUC": Entry("Area under the ROC curve", "The probability that a random positive case is ranked "
                 "above a random negative one.", _VC),
    "Cramer's V": Entry("Cramer's V", "A chi-square measure of association between two discrete "
                        "variables mapped into [0, 1] (0: independent).", "Castelo & Siebes"),
}

#: spellings a text may use for an entry (matched as whole words, case-sensitive)
_ALIASES = {"L_k(pi)": [r"L_\d+\(pi\)", r"L_k\(pi\)", r"L_k\^n\(pi\)"], "M*": [r"M\*"],
            "R-hat": [r"R-hat"], "Order MCMC": [r"order MCMC", r"Order MCMC"],
            "Cramer's V": [r"Cram[eé]r's V"]}


def define(abbreviation: str) -> Entry:
    """The :class:`Entry` of an abbreviation (exact key, or ignoring case).

    Raises
    ------
    KeyError
        Naming the abbreviation when it is not in the glossary.

    Examples
    --------
    >>> define("ismb-ms").name
    'Instance-specific Markov blanket, model selection'
    """
    if abbreviation in GLOSSARY:
        return GLOSSARY[abbreviation]
    low = {k.lower(): k for k in GLOSSARY}
    key = low.get(str(abbreviation).lower())
    if key is None:
        raise KeyError(f"{abbreviation!r} is not in the glossary; it has {list(GLOSSARY)}")
    return GLOSSARY[key]


def glossary_table() -> pd.DataFrame:
    """Every entry as a row: ``abbreviation``, ``name``, ``definition``, ``source``.

    Examples
    --------
    >>> t = glossary_table()
    >>> {"SNN", "MAPLMG", "SFAN"} <= set(t["abbreviation"])
    True
    """
    return pd.DataFrame([(k, e.name, e.definition, e.source) for k, e in GLOSSARY.items()],
                        columns=["abbreviation", "name", "definition", "source"])


def _patterns() -> list[tuple[str, re.Pattern]]:
    out = []
    for key in GLOSSARY:
        alts = _ALIASES.get(key, [re.escape(key)])
        out.append((key, re.compile(r"(?<![\w-])(?:" + "|".join(alts) + r")(?![\w-])")))
    return out


def abbreviations_in(text: str) -> list[str]:
    """The glossary entries a text uses, in the order of their first use.

    Examples
    --------
    >>> abbreviations_in("ISMB-MS selects; ISMB averages; NISMB ignores the instance.")
    ['ISMB-MS', 'ISMB', 'NISMB']
    """
    found = []
    for key, pat in _patterns():
        m = pat.search(str(text))
        if m:
            found.append((m.start(), key))
    return [k for _, k in sorted(found)]


def spell_out(text: str) -> str:
    """``text`` with the first use of each glossary abbreviation followed by its full
    name in parentheses (plain text, for a page that shows it as text).

    Examples
    --------
    >>> spell_out("GTT finds one network; AMA averages. GTT is greedy.")
    'GTT (Greedy thick-thin) finds one network; AMA (Approximate model averaging) averages. GTT is greedy.'
    """
    text = str(text)
    hits = []
    for key, pat in _patterns():
        m = pat.search(text)
        if m and GLOSSARY[key].name.lower() != m.group(0).lower():
            hits.append((m.end(), key))
    for end, key in sorted(hits, reverse=True):  # from the back, so positions stay valid
        text = f"{text[:end]} ({GLOSSARY[key].name}){text[end:]}"
    return text
