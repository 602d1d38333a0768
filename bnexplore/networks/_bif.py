"""Reading networks in the Bayesian Interchange Format (BIF 0.15) and the bundled networks.

An own regex-based reader: ``variable`` blocks give the states, ``probability`` blocks the
CPTs (``table`` statements, ``(parent states) probabilities;`` lines and ``default`` rows).
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ..data.core import check_table_size, config_strides
from ._bayesnet import BayesNet

_NETWORK_DIR = Path(__file__).resolve().parent.parent / "data" / "files" / "networks"

_COMMENT_RE = re.compile(r'("(?:[^"\\]|\\.)*")|/\*.*?\*/|//[^\n]*', re.DOTALL)
_NETWORK_RE = re.compile(r'\bnetwork\s+("[^"]*"|[^\s{]+)\s*\{')
_VARIABLE_RE = re.compile(r'\bvariable\s+("[^"]*"|[^\s{]+)\s*\{((?:[^{}"]|"[^"]*"|\{[^{}]*\})*)\}')
_TYPE_RE = re.compile(r'\btype\s+discrete\s*\[\s*(\d+)\s*\]\s*\{((?:[^{}"]|"[^"]*")*)\}\s*;')
_PROB_RE = re.compile(r'\bprobability\s*\(((?:[^()"]|"[^"]*")*)\)\s*\{((?:[^{}"]|"[^"]*")*)\}')
_NUM_RE = re.compile(r'[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?')


def _strip_comments(text: str) -> str:
    return _COMMENT_RE.sub(lambda m: m.group(1) or " ", text)


def _unquote(tok: str) -> str:
    tok = tok.strip()
    if len(tok) >= 2 and tok[0] == tok[-1] == '"':
        return tok[1:-1]
    return tok


def _split_list(text: str) -> list[str]:
    """Split a BIF list: by commas when any (outside quotes), else by whitespace."""
    parts, cur, inq, commas = [], [], False, False
    for ch in text:
        if ch == '"':
            inq = not inq
            cur.append(ch)
        elif ch == "," and not inq:
            commas = True
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    if not commas:
        toks = re.findall(r'"[^"]*"|[^\s"]+', text)
        return [_unquote(t) for t in toks]
    return [_unquote(p) for p in parts if p.strip()]


def _split_statements(body: str) -> list[str]:
    out, cur, inq = [], [], False
    for ch in body:
        if ch == '"':
            inq = not inq
        if ch == ";" and not inq:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    rest = "".join(cur).strip()
    if rest:
        out.append(rest)
    return [s for s in out if s]


def _numbers(text: str, where: str) -> list[float]:
    toks = [t for t in re.split(r"[\s,]+", text.strip()) if t]
    try:
        return [float(t) for t in toks]
    except ValueError:
        raise ValueError(f"BIF: {where}: expected numbers, got {text.strip()!r}") from None


def read_bif(path: str | Path, row_tol: float = 1e-3) -> BayesNet:
    """Read a network in the Bayesian Interchange Format (BIF 0.15, as on bnlearn.com).

    Handles ``table`` statements and ``(parent states) probabilities;`` lines,
    ``default`` rows, quoted names and state labels with spaces, comments and any
    whitespace. A ``table`` for a node with parents lists the child's states
    slowest and the parent configurations fastest (pgmpy's convention).

    Parameters
    ----------
    path : str or Path
    row_tol : float
        Rows whose probabilities sum to within ``row_tol`` of 1 are renormalised
        (published files are rounded); others raise ``ValueError``.

    Returns
    -------
    BayesNet
        Parents in the order of the ``probability ( child | p1, p2 )`` header.

    Examples
    --------
    >>> import bnexplore as bx
    >>> from bnexplore.networks import read_bif, _NETWORK_DIR
    >>> read_bif(_NETWORK_DIR / "asia.bif")
    BayesNet('asia', 8 nodes, 8 arcs, 18 parameters)
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no BIF file at {str(path)!r}")
    text = path.read_text(encoding="utf-8", errors="replace")
    return _parse_bif(text, name=path.stem, row_tol=row_tol)


def _parse_bif(text: str, name: str | None = None, row_tol: float = 1e-3) -> BayesNet:
    text = _strip_comments(text)
    states: dict[str, list[str]] = {}
    for m in _VARIABLE_RE.finditer(text):
        v = _unquote(m.group(1))
        t = _TYPE_RE.search(m.group(2))
        if t is None:
            raise ValueError(f"BIF: variable {v!r} has no 'type discrete [k] {{...}};' declaration")
        st = _split_list(t.group(2))
        if len(st) != int(t.group(1)):
            raise ValueError(f"BIF: variable {v!r} declares {t.group(1)} states but lists {len(st)}: {st}")
        if v in states:
            raise ValueError(f"BIF: variable {v!r} is declared twice")
        states[v] = st
    if not states:
        raise ValueError("BIF: no 'variable' blocks found")
    parents: dict[str, list[str]] = {}
    cpts: dict[str, np.ndarray] = {}
    for m in _PROB_RE.finditer(text):
        head = m.group(1)
        if "|" in head:
            child_txt, par_txt = head.split("|", 1)
            child = _unquote(child_txt)
            ps = _split_list(par_txt)
        else:
            toks = _split_list(head)
            if not toks:
                raise ValueError("BIF: empty 'probability ( )' header")
            child, ps = toks[0], toks[1:]
        for u in [child] + ps:
            if u not in states:
                raise ValueError(f"BIF: probability block for {child!r} refers to undeclared variable {u!r}")
        if child in cpts:
            raise ValueError(f"BIF: two probability blocks for {child!r}")
        r = len(states[child])
        par = [len(states[p]) for p in ps]
        size = check_table_size(par + [r], ps + [child], what=f"CPT of {child!r}")
        q = size // r
        strides = config_strides(par).tolist()
        cpt = np.full((q, r), np.nan)
        default = None
        for stmt in _split_statements(m.group(2)):
            where = f"CPT of {child!r}"
            if stmt.startswith("("):
                close = stmt.find(")")
                if close < 0:
                    raise ValueError(f"BIF: {where}: unclosed '(' in {stmt!r}")
                labels = _split_list(stmt[1:close])
                if len(labels) != len(ps):
                    raise ValueError(f"BIF: {where}: configuration {labels} has {len(labels)} states "
                                     f"for {len(ps)} parents {ps}")
                j = 0
                for p, lab, s in zip(ps, labels, strides):
                    if lab not in states[p]:
                        raise ValueError(f"BIF: {where}: {lab!r} is not a state of parent {p!r} "
                                         f"(states {states[p]})")
                    j += states[p].index(lab) * s
                vals = _numbers(stmt[close + 1:], where)
                if len(vals) != r:
                    raise ValueError(f"BIF: {where}: configuration {labels} has {len(vals)} "
                                     f"probabilities for {r} states")
                if not np.isnan(cpt[j, 0]):
                    raise ValueError(f"BIF: {where}: configuration {labels} is given twice")
                cpt[j] = vals
            elif re.match(r"table\b", stmt):
                vals = _numbers(stmt[5:], where)
                if len(vals) != q * r:
                    raise ValueError(f"BIF: {where}: table has {len(vals)} numbers, expected {q * r}")
                cpt = np.asarray(vals).reshape(r, q).T.copy()
            elif re.match(r"default\b", stmt):
                default = _numbers(stmt[7:], where)
                if len(default) != r:
                    raise ValueError(f"BIF: {where}: default row has {len(default)} numbers for {r} states")
            elif re.match(r"property\b", stmt):
                continue
            else:
                raise ValueError(f"BIF: {where}: cannot parse statement {stmt!r}")
        unset = np.isnan(cpt[:, 0])
        if unset.any():
            if default is None:
                j = int(np.argmax(unset))
                labels = [states[p][(j // s) % a] for p, s, a in zip(ps, strides, par)]
                raise ValueError(f"BIF: CPT of {child!r}: no probabilities for parent configuration "
                                 f"{labels} and no 'default' row")
            cpt[unset] = default
        sums = cpt.sum(axis=1)
        bad = np.nonzero(np.abs(sums - 1) > row_tol)[0]
        if bad.size:
            raise ValueError(f"BIF: CPT of {child!r}: row {int(bad[0])} sums to {sums[bad[0]]:.6g}, not 1 "
                             f"(tolerance row_tol={row_tol})")
        cpts[child] = cpt / sums[:, None]
        parents[child] = ps
    miss = [v for v in states if v not in cpts]
    if miss:
        raise ValueError(f"BIF: no probability block for variables {miss}")
    net = _NETWORK_RE.search(text)
    label = name
    if net is not None and _unquote(net.group(1)) not in ("unknown", ""):
        label = _unquote(net.group(1))
    return BayesNet(parents, states, cpts, name=label)


def names() -> list[str]:
    """Names of the bundled networks.

    Examples
    --------
    >>> import bnexplore as bx
    >>> bx.networks.names()
    ['alarm', 'asia', 'child', 'hailfinder', 'hepar2', 'insurance']
    """
    return sorted(p.stem for p in _NETWORK_DIR.glob("*.bif"))


def load(name: str) -> BayesNet:
    """Load a bundled network by name (case-insensitive).

    Examples
    --------
    >>> import bnexplore as bx
    >>> bx.networks.load("alarm")
    BayesNet('alarm', 37 nodes, 46 arcs, 509 parameters)
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, one of {names()}; got {type(name).__name__}")
    key = name.strip().lower()
    if key.endswith(".bif"):
        key = key[:-4]
    avail = names()
    if key not in avail:
        raise ValueError(f"unknown network {name!r}; available networks are {avail} "
                         f"(use read_bif(path) for other files)")
    return read_bif(_NETWORK_DIR / f"{key}.bif")
