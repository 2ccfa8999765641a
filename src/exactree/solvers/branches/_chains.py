"""Ordered thresholds: bounds shared along a numeric column's chain of binary features
(BRANCHES' ``ordered`` technique).

A numeric column gives one binary solver feature per threshold ``x <= t`` (code 0, the left
child). Ordered by threshold, these features form a *chain*: the left child of a branch's split
on ``t_i`` holds a subset of the rows of the left child of its split on ``t_k`` for ``t_i <
t_k``, and the right child of ``t_k`` a subset of the right child of ``t_i``. The optimal
subtree cost of a branch can only grow with its rows (an optimal tree of the larger set,
applied to the smaller one, misclassifies no more with as many splits; both branches have the
same depth, so the same room under a depth limit, and the features their literals fix are
constant on their rows, see :mod:`._kernels`). So for ``i <= k <= j`` in a chain::

    opt(left_k) >= opt(left_i),   opt(right_k) >= opt(right_j),
    cost of a split on t_k >= lam_w + lb(left_i) + lb(right_j)

for any lower bounds ``lb``: every bound proven for one threshold's children lifts the bounds of
the thresholds beyond it (the interval bounds of the continuous-feature searches, Quant-BnB and
ConTree, here inside BRANCHES' best-first search). :func:`lift` computes the prefix maxima of
the left bounds and the suffix maxima of the right bounds along the active members of a chain.

The chains are given as ``nxt[f]`` / ``prv[f]`` (the next / previous feature of ``f``'s chain,
-1 at the ends; all -1 when the technique is off); the driver builds them from the feature map
and checks the nesting on the data (:func:`exactree.solvers.branches.search._chains`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._bits import popcount


# members, _weight and lift are inlined: a call passing arrays on keeps a reference count on
# each of them per call (see _pairs.row_leaf)
@njit(cache=True, inline="always")
def members(f, nxt, prv, active, out):
    """The features of ``f``'s chain with ``active[feature] >= 0``, in chain order, into
    ``out``; returns their number."""
    h = f
    while prv[h] >= 0:
        h = prv[h]
    m = 0
    while h >= 0:
        if active[h] >= 0:
            out[m] = h
            m += 1
        h = nxt[h]
    return m


@njit(cache=True, inline="always")
def _weight(cnt, g, K, s):
    """Weight of the rows of literal ``g``: its class counts ``cnt[g, :K]`` times ``s``."""
    t = 0.0
    for k in range(K):
        t += cnt[g, k]
    return t * s


@njit(cache=True, inline="always")
def lift(mem, m, lit_off, lo, hi, pre, cnt, K, s, back):
    """Lift the bounds ``lo[g]`` of the chain members ``mem[:m]`` into ``hi[g]``: for the left
    literal (code 0) of member ``k`` the largest ``lo`` of the left literals of members ``<= k``,
    for the right literal (code 1) the largest ``lo`` of the right literals of members ``>= k``
    (lower bounds on the optimal costs of nested row sets). ``pre``: scratch of ``2 * m``
    entries. ``lo`` and ``hi`` may be the same array.

    With ``back``, also the other way along the chain (GOSDT's similar-support bound on nested
    row sets): an optimal tree of a subset ``A`` of the rows of ``B``, applied to ``B``,
    misclassifies at most the weight of ``B - A`` more with as many splits, so ``opt(A) >=
    opt(B) - w(B) + w(A)``; the weights are ``cnt[g, :K]`` (class counts) times ``s``."""
    run = 0.0
    for k in range(m):
        g = lit_off[mem[k]]
        run = max(run, lo[g])
        pre[k] = run
    if back:
        # left literals: member i's rows lie inside member k's for i <= k
        run = -np.inf
        for k in range(m - 1, -1, -1):
            g = lit_off[mem[k]]
            wg = _weight(cnt, g, K, s)
            run = max(run, lo[g] - wg)
            pre[k] = max(pre[k], run + wg)
        # right literals: member k's rows lie inside member i's for i <= k
        run = -np.inf
        for k in range(m):
            g = lit_off[mem[k]] + 1
            wg = _weight(cnt, g, K, s)
            run = max(run, lo[g] - wg)
            pre[m + k] = run + wg
    run = 0.0
    for k in range(m - 1, -1, -1):
        g = lit_off[mem[k]] + 1
        run = max(run, lo[g])
        hi[g] = max(run, pre[m + k]) if back else run
    for k in range(m):
        hi[lit_off[mem[k]]] = pre[k]


@njit(cache=True)
def lift_all(q, nxt, prv, active, lit_off, lo, hi, mem, pre, cnt, K, s, back):
    """:func:`lift` over every chain of at least two active features (``hi`` is ``lo`` elsewhere
    on the active features' literals)."""
    for f in range(q):
        if active[f] >= 0:
            for g in range(lit_off[f], lit_off[f + 1]):
                hi[g] = lo[g]
    for f in range(q):
        if prv[f] < 0 and nxt[f] >= 0:
            m = members(f, nxt, prv, active, mem)
            if m >= 2:
                lift(mem, m, lit_off, lo, hi, pre, cnt, K, s, back)


@njit(cache=True)
def link_nested(lit_bits, lit_off, card, nxt, prv):
    """Chain nested binary features (in place; see
    :func:`exactree.solvers.branches.search._nested`): among the binary features on no chain
    yet, by increasing number of rows with code 0 (bit rows ``lit_bits[lit_off[f]]``), each is
    followed by the first later one with more such rows, no predecessor yet, and every one of
    its own code-0 rows. Returns the number of links."""
    q = card.shape[0]
    n_words = lit_bits.shape[1]
    cand = np.empty(q, np.int64)
    m = 0
    for f in range(q):
        if card[f] == 2 and nxt[f] < 0 and prv[f] < 0:
            cand[m] = f
            m += 1
    if m < 2:
        return 0
    nz = np.zeros(m, np.int64)
    for i in range(m):
        g = lit_off[cand[i]]
        for wi in range(n_words):
            nz[i] += np.int64(popcount(lit_bits[g, wi]))
    order = np.argsort(nz[:m], kind="mergesort")
    links = 0
    for u in range(m):
        a = order[u]
        ga = lit_off[cand[a]]
        for v in range(u + 1, m):
            b = order[v]
            if nz[b] <= nz[a] or prv[cand[b]] >= 0:
                continue
            gb = lit_off[cand[b]]
            inside = True
            for wi in range(n_words):
                if lit_bits[ga, wi] & ~lit_bits[gb, wi]:
                    inside = False
                    break
            if inside:
                nxt[cand[a]] = cand[b]
                prv[cand[b]] = cand[a]
                links += 1
                break
    return links
