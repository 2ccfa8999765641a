"""One-rule proper trees over a hyperplane/hypersurface family without listing the rules.

With ``n_splits=1`` the best tree is the best single split, so the rules never need to be
stored: :func:`stream_one_rule` scores every plane as it is formed (kernel :mod:`._stream`,
incremental over the last defining point), sends the few subsets the fast arithmetic cannot
decide to the exact generation of :mod:`.rules`, and verifies the winner there. A degree-2
hypersurface on 100 points (2.4 billion rules with ``ties="all"``) is searched this way.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._workers import n_workers
from . import _stream
from .rules import HYPERPLANE, POLYNOMIAL, RuleSet, _plane_geometry, _plane_rules, monomial_powers

#: candidates kept for verification by the exact generation
TOP = 64
#: prefixes per kernel call (the clock is read between calls)
_BLOCK = 4096
#: deferred subsets one kernel call may hand back
_DEFER_CAP = 1 << 16


@dataclass
class StreamResult:
    """The best one-rule tree: ``rules`` holds its rule (index 0) or nothing (a leaf)."""

    value: float
    rules: RuleSet
    proven: bool  # optimal over every split of the family
    complete: bool  # every subset was examined (False: the clock stopped it)
    stats: dict[str, Any]


def _family_basis(n_features: int, family: str, degree: int) -> tuple[np.ndarray, np.ndarray, int]:
    powers = monomial_powers(n_features, degree if family == "polynomial" else 1)
    if family == "polynomial":
        return powers, np.arange(len(powers)), POLYNOMIAL
    return powers, np.flatnonzero(powers.sum(axis=1) == 1), HYPERPLANE


def _split_costs(sides: np.ndarray, weights: np.ndarray, counts: np.ndarray,
                 min_leaf: int) -> np.ndarray:
    """Misclassification of the one-rule tree of every packed side row (inf when a side holds
    fewer than ``min_leaf`` samples)."""
    out = np.zeros(len(sides))
    _stream.split_costs(np.ascontiguousarray(sides), np.ascontiguousarray(weights, np.float64),
                        np.ascontiguousarray(counts, np.int64), max(min_leaf, 1), out)
    return out


def _rules_of(out: dict, n: int, powers: np.ndarray) -> RuleSet:
    def cat(key: str, empty: np.ndarray) -> np.ndarray:
        blocks = out[key]
        return np.concatenate([empty] + blocks) if blocks else empty

    g = max([b.shape[1] for b in out["defining"]] or [1])
    return RuleSet(family=cat("family", np.zeros(0, np.int8)),
                   feature=cat("feature", np.zeros(0, np.int64)),
                   coef=cat("coef", np.zeros((0, len(powers)))),
                   threshold=cat("threshold", np.zeros(0)), powers=powers,
                   defining=cat("defining", np.zeros((0, g), np.int64)),
                   sides=cat("packed_sides", np.zeros((0, max(1, (n + 63) // 64)), np.uint64)),
                   n_points=n)


def _unrank(rank: int, n: int, k: int) -> np.ndarray:
    """The ``rank``-th (from 0) ``k``-combination of ``range(n)`` in lexicographic order."""
    out = np.zeros(k, np.int64)
    x = 0
    for i in range(k):
        while True:
            below = math.comb(n - x - 1, k - i - 1)  # combinations starting with x here
            if rank < below:
                break
            rank -= below
            x += 1
        out[i] = x
        x += 1
    return out


def stream_one_rule(X: np.ndarray, weights: np.ndarray, counts: np.ndarray, family: str,
                    degree: int, min_leaf: int, deadline: float | None = None,
                    n_jobs: int | None = None) -> StreamResult | None:
    """Best single split (``ties="all"``) of ``family`` on the distinct points ``X``.

    Returns None when the family needs more points than there are (the caller's rule list
    handles that case). ``proven`` is True when the winner is the minimum over every split of
    the family (it was verified, and no subset left to the exact generation lost a rule to
    floating point); the value is then what the rule-list search would prove.
    """

    start = time.perf_counter()
    n, d = X.shape
    powers, cols, fam_code = _family_basis(d, family, degree)
    phi, Z, mu, sd, abs_phi, rel_err = _plane_geometry(X, powers, cols)
    g = Z.shape[1]
    if n < g + 1:
        return None
    Z = np.ascontiguousarray(Z)
    weights = np.ascontiguousarray(weights, np.float64)
    counts = np.ascontiguousarray(counts, np.int64)
    n_prefixes = math.comb(n, g - 1)
    workers = n_workers(n_jobs)
    tops: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    deferred: list[np.ndarray] = []
    scored = 0
    overflow = False
    complete = True
    done = 0

    def run(first: int, count: int) -> tuple:
        tv = np.full(TOP, np.inf)
        ts = np.zeros((TOP, g), np.int64)
        tp = np.zeros(TOP, np.int64)
        dfr = np.zeros((_DEFER_CAP, g), np.int64)
        nd = np.zeros(1, np.int64)
        s = _stream.stream_best(Z, _unrank(first, n, g - 1), count, weights, counts, min_leaf,
                                tv, ts, tp, dfr, nd)
        return tv, ts, tp, dfr[:min(int(nd[0]), _DEFER_CAP)].copy(), int(nd[0]) > _DEFER_CAP, s

    block = _BLOCK
    while done < n_prefixes:
        if deadline is not None and time.perf_counter() >= deadline:
            complete = False
            break
        jobs = [(first, min(block, n_prefixes - first))
                for first in range(done, min(done + workers * block, n_prefixes), block)]
        t0 = time.perf_counter()
        if len(jobs) == 1:
            results = [run(*jobs[0])]
        else:
            from joblib import Parallel, delayed

            results = Parallel(n_jobs=len(jobs), prefer="threads")(
                delayed(run)(first, count) for first, count in jobs)
        done = jobs[-1][0] + jobs[-1][1]
        for tv, ts, tp, dfr, over, s in results:
            tops.append((tv, ts, tp))
            deferred.append(dfr)
            overflow = overflow or over
            scored += s
        # about a quarter of a second per call: the clock is read often enough
        spent = time.perf_counter() - t0
        block = int(min(max(block * 0.25 / max(spent, 1e-3), 256), 1 << 20))
    # merge the candidate lists (stable: earlier blocks first among equal values)
    tv = np.concatenate([t[0] for t in tops]) if tops else np.zeros(0)
    ts = np.concatenate([t[1] for t in tops]) if tops else np.zeros((0, g), np.int64)
    tp = np.concatenate([t[2] for t in tops]) if tops else np.zeros(0, np.int64)
    keep = np.argsort(tv, kind="stable")[:TOP]
    keep = keep[np.isfinite(tv[keep])]
    # subsets left to the exact generation (a last point of -1 stands for the whole prefix)
    exact_subsets: list[tuple[int, ...]] = []
    for dfr in deferred:
        for row in dfr:
            if row[-1] >= 0:
                exact_subsets.append(tuple(int(i) for i in row))
            else:
                pre = tuple(int(i) for i in row[:-1])
                exact_subsets.extend(pre + (q,) for q in range((pre[-1] if pre else -1) + 1, n))
    best_value = np.inf
    best_rules: RuleSet | None = None
    lost = 0
    if exact_subsets:
        out = _plane_rules(X, powers, cols, fam_code, "all", subsets=exact_subsets)
        lost = sum(len(b) for b in out["dropped_defining"])
        rs = _rules_of(out, n, powers)
        if len(rs):
            cost = _split_costs(rs.sides, weights, counts, min_leaf)
            j = int(np.argmin(cost))
            if cost[j] < best_value:
                best_value, best_rules = float(cost[j]), rs.subset(np.array([j]))
    failed = 0
    for c in keep:
        if tv[c] >= best_value:
            break
        pat = np.where((tp[c] >> np.arange(g)) & 1, 1.0, -1.0)
        out = _plane_rules(X, powers, cols, fam_code, "all", subsets=[tuple(ts[c])],
                           patterns=np.stack([pat, -pat]))
        rs = _rules_of(out, n, powers)
        if len(rs):
            cost = _split_costs(rs.sides, weights, counts, min_leaf)
            j = int(np.argmin(cost))
            # the same split up to the order of a sum of weights
            if abs(cost[j] - tv[c]) <= 1e-9 * max(1.0, abs(tv[c])):
                best_value, best_rules = float(cost[j]), rs.subset(np.array([j]))
                break
        failed += 1
    # every split of the family scored >= the winner: either in the stream (the first candidate
    # verified) or exactly (deferred subsets, none of whose rules floating point lost)
    proven = complete and not overflow and lost == 0 and failed == 0
    rules = best_rules if best_rules is not None else _rules_of(
        dict(family=[], feature=[], coef=[], threshold=[], defining=[], packed_sides=[]), n,
        powers)
    return StreamResult(best_value, rules, proven, complete, dict(
        scored_subsets=scored, exact_subsets=len(exact_subsets), failed_candidates=failed,
        unrepresentable_in_exact=lost, deferred_overflow=overflow,
        prefixes=done, total_prefixes=n_prefixes, seconds=time.perf_counter() - start))
