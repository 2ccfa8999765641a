"""Splitting rules as data (He & Little, section 2 and 4.2).

A rule family turns a point set into a list of candidate rules. Every rule is *defined by data
points* (one point for an axis-parallel rule, ``D`` points for a hyperplane, ``G = C(D+M, D) - 1``
points for a degree-``M`` hypersurface) and splits the points into a positive side and a negative
side. exactree's convention: the **positive side is the left child** of the tree node, i.e. the
points whose rule value is ``<= threshold``, matching the :class:`~exactree.tree.Tree` semantics.

Points on a hyperplane (the defining points at least) are ambiguous. A rule here is a hyperplane
through its defining points *plus a side for each defining point*: the plane is tilted by a tiny
amount so that the chosen defining points fall on the requested side and no other point changes
side, and the stored threshold sits half-way between the largest left value and the smallest
right value. With ``ties="all"`` every side assignment of the defining points is a rule
(``2**D`` per point subset), which makes the family cover every linear split of the points (the
tests check this against linear-programming separability); with ``ties="left"`` only the
paper's plain construction (all defining points left) is generated, which misses splits, so a
search over it proves optimality over those rules only.

**Geometry is affine invariant.** The plane, the tilt and the sides are computed on the
monomials centred and scaled per column (translating or scaling the data changes nothing).
Only the stored rule is in raw coordinates, where the :class:`~exactree.tree.Tree` evaluates
it in floating point; a rule is kept when every point's raw value lies on its side of the
threshold by more than a bound on that evaluation's rounding error (relative to the terms'
magnitudes, so also invariant), so a point's side computed here equals the side the fitted
tree gives it. A rule whose margin is below the rounding bound cannot be stored faithfully: it
is dropped and counted in :attr:`RuleSet.n_unrepresentable` (a search over the remaining rules
then does not claim optimality over all rules).

The ancestry relation (Definition 2.2) between rules is read off the sides of the *defining
points*: ``K[i, j] = 1`` when all defining points of rule ``j`` are on the positive side of rule
``i``, ``-1`` when all are on the negative side, ``0`` otherwise (and on the diagonal).
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _generate as gen

AXIS, HYPERPLANE, POLYNOMIAL = 0, 1, 2
FAMILY_NAMES = ("axis", "hyperplane", "polynomial")
#: former default cap on the rule count; kept for callers that import it (no longer a default:
#: :func:`~exactree.solvers.proper.search.estimate_work` judges the real work instead)
DEFAULT_MAX_RULES = 200_000


@dataclass
class RuleSet:
    """Candidate rules over ``n_points`` points, all arrays indexed by rule.

    - ``family`` (int8): ``AXIS``, ``HYPERPLANE`` or ``POLYNOMIAL``;
    - ``feature`` (int64): the tested column of an axis rule, -1 otherwise;
    - ``coef`` (M x P float64): the rule polynomial over the monomial basis ``powers`` (P x D);
      a point is on the positive (left) side when ``coef . monomials(x) <= threshold``;
    - ``threshold`` (float64);
    - ``defining`` (M x G int64): indices of the defining points, padded with -1;
    - ``sides`` (M x W uint64): bit ``n`` of row ``m`` is set when point ``n`` lies on the
      positive side of rule ``m`` (``W = ceil(n_points / 64)``).
    """

    family: np.ndarray
    feature: np.ndarray
    coef: np.ndarray
    threshold: np.ndarray
    powers: np.ndarray
    defining: np.ndarray
    sides: np.ndarray
    n_points: int
    #: rules of the family that floating-point arithmetic in raw coordinates cannot reproduce
    #: (margin below the rounding bound) and that no kept rule duplicates
    n_unrepresentable: int = 0
    #: False when a deadline stopped the generation before every rule was listed
    complete: bool = True
    #: True when the family holds every split of its kind: False for ``ties="left"``
    #: hyperplanes/hypersurfaces and for fewer distinct points than a rule needs
    exhaustive: bool = True

    def __len__(self) -> int:
        return len(self.family)

    def side_matrix(self) -> np.ndarray:
        """Boolean ``(M, n_points)`` matrix: True where the point is on the positive side."""
        return unpack_bits(self.sides, self.n_points)

    def subset(self, index: np.ndarray) -> RuleSet:
        """The rules at ``index`` (same points)."""
        index = np.asarray(index, np.int64)
        return RuleSet(self.family[index], self.feature[index], self.coef[index],
                       self.threshold[index], self.powers, self.defining[index], self.sides[index],
                       self.n_points, self.n_unrepresentable, self.complete, self.exhaustive)

    def terms(self, m: int) -> tuple[np.ndarray, np.ndarray]:
        """``(coef, powers)`` of rule ``m`` without its zero terms."""
        nz = np.flatnonzero(self.coef[m] != 0.0)
        return self.coef[m, nz], self.powers[nz]

    def formula(self, m: int, names: list[str] | None = None) -> str:
        """Readable text of rule ``m``'s positive side, e.g. ``x0 - 0.5*x1 <= 2.1``."""
        d = self.powers.shape[1]
        names = names or [f"x{i}" for i in range(d)]
        if self.family[m] == AXIS:
            return f"{names[self.feature[m]]} <= {self.threshold[m]:.6g}"
        parts = []
        for c, p in zip(*self.terms(m)):
            term = "*".join(names[f] + (f"^{e}" if e > 1 else "") for f, e in enumerate(p) if e > 0)
            parts.append(f"{'-' if c < 0 else '+'} {abs(c):.6g}*{term}")
        text = " ".join(parts)
        text = text[2:] if text.startswith("+ ") else "-" + text[2:]
        return f"{text} <= {self.threshold[m]:.6g}"


# ---------------------------------------------------------------------------- bit helpers
def pack_bits(mask: np.ndarray) -> np.ndarray:
    """Boolean ``(M, n)`` to ``(M, ceil(n/64))`` uint64; point ``n`` is bit ``n % 64`` of word ``n // 64``."""
    mask = np.atleast_2d(np.asarray(mask, bool))
    m, n = mask.shape
    w = max(1, (n + 63) // 64)
    padded = np.zeros((m, w * 64), bool)
    padded[:, :n] = mask
    packed = np.packbits(padded, axis=1, bitorder="little")
    return np.ascontiguousarray(packed).view("<u8").astype(np.uint64).reshape(m, w)


def unpack_bits(bits: np.ndarray, n: int) -> np.ndarray:
    """Inverse of :func:`pack_bits`."""
    bits = np.ascontiguousarray(np.atleast_2d(bits).astype("<u8"))
    return np.unpackbits(bits.view(np.uint8), axis=1, bitorder="little")[:, :n].astype(bool)


# ---------------------------------------------------------------------------- monomials
def monomial_powers(n_features: int, degree: int) -> np.ndarray:
    """All monomials of total degree 1..``degree`` (rows of exponents), degree-1 terms first."""
    rows = []
    for deg in range(1, degree + 1):
        for combo in itertools.combinations_with_replacement(range(n_features), deg):
            p = np.zeros(n_features, np.int64)
            for f in combo:
                p[f] += 1
            rows.append(p)
    return np.array(rows, np.int64).reshape(-1, n_features)


def monomials(X: np.ndarray, powers: np.ndarray) -> np.ndarray:
    """``(n, P)`` monomial values, computed exactly as :meth:`Tree.rule_values` does."""
    X = np.asarray(X, np.float64)
    return np.prod(X[:, None, :] ** powers[None, :, :], axis=2)


def n_monomials(n_features: int, degree: int) -> int:
    """``G = C(D + M, D) - 1``: the points needed to pin down a degree-``M`` hypersurface."""
    return math.comb(n_features + degree, n_features) - 1


# ---------------------------------------------------------------------------- counting
def estimate_rule_count(n_points: int, n_features: int, family: str, degree: int = 2,
                        ties: str = "all") -> int:
    """Upper estimate of the number of rules a family generates on ``n_points`` distinct points."""
    if family == "axis":
        return n_points * n_features
    g = n_features if family == "hyperplane" else n_monomials(n_features, degree)
    per_subset = 2 ** g if ties == "all" else 1
    return math.comb(n_points, g) * per_subset


# ---------------------------------------------------------------------------- families
def _axis_rules(X: np.ndarray, powers: np.ndarray) -> dict:
    """One rule ``x_f <= (v + next larger value) / 2`` per point and feature (drops the top value)."""
    n, d = X.shape
    out = dict(family=[], feature=[], coef=[], threshold=[], defining=[], packed_sides=[])
    unit = {tuple(p): j for j, p in enumerate(powers) if p.sum() == 1}
    for f in range(d):
        values = np.unique(X[:, f])
        if len(values) < 2:
            continue
        lower, upper = values[:-1], values[1:]
        mids = lower + (upper - lower) / 2.0  # no overflow at +-1e308
        # adjacent floats have no midpoint: `x <= lower` splits them exactly
        mids = np.where((mids > lower) & (mids < upper), mids, lower)
        pos = np.searchsorted(values, X[:, f])
        rows = np.flatnonzero(pos < len(values) - 1)  # one rule per point, in point order
        t = mids[pos[rows]]
        coef = np.zeros((len(rows), len(powers)))
        coef[:, unit[tuple(np.eye(d, dtype=np.int64)[f])]] = 1.0
        out["family"].append(np.full(len(rows), AXIS, np.int8))
        out["feature"].append(np.full(len(rows), f, np.int64))
        out["coef"].append(coef)
        out["threshold"].append(t)
        out["defining"].append(rows[:, None].astype(np.int64))
        out["packed_sides"].append(pack_bits(X[None, :, f] <= t[:, None]))
    return out


def _plane_geometry(X: np.ndarray, powers: np.ndarray, basis_cols: np.ndarray) -> tuple:
    """``(phi, Z, mu, sd, abs_phi, rel_err)``: the monomials of the rule space, standardised,
    and the rounding bound of the Tree's evaluation of a rule (see :func:`_plane_rules`)."""
    phi = monomials(X, powers)[:, basis_cols]
    g = phi.shape[1]
    # Rounding bound of the Tree's evaluation of a rule on one point, per unit of
    # sum_m |c_m * phi_m|: a dot product of g terms (gamma_g <= g * eps / 2) of monomials, each a
    # product of D powers (<= 3 D * eps / 2), so twice the first-order bound.
    n_feat = powers.shape[1]
    rel_err = (g + 3 * n_feat + 2) * np.finfo(np.float64).eps
    abs_phi = np.abs(phi)
    # Geometry in standardised coordinates (conditioning); final rules in raw coordinates.
    mu = phi.mean(axis=0)
    sd = phi.std(axis=0)
    sd[sd == 0] = 1.0
    Z = (phi - mu) / sd
    return phi, Z, mu, sd, abs_phi, rel_err


def _plane_rules(X: np.ndarray, powers: np.ndarray, basis_cols: np.ndarray, family: int,
                 ties: str, chunk: int = 2048, deadline: float | None = None,
                 subsets: Any = None, patterns: np.ndarray | None = None) -> dict:
    """Hyperplanes in the monomial space ``monomials(X, powers[basis_cols])`` through G points.

    ``subsets`` (an iterable of sorted G-tuples; all G-subsets by default) and ``patterns``
    (rows of -1/+1 sides of the defining points; all of them, or all -1 for ``ties="left"``, by
    default) restrict the generation. Stops early (``out["complete"] = False``) once
    ``time.perf_counter()`` passes ``deadline``.
    """
    n = len(X)
    phi, Z, mu, sd, abs_phi, rel_err = _plane_geometry(X, powers, basis_cols)
    g = phi.shape[1]
    out = dict(family=[], feature=[], coef=[], threshold=[], defining=[], packed_sides=[],
               dropped_defining=[], dropped_sides=[], complete=True)
    n_words = max(1, (n + 63) // 64)
    if n < g:
        return out
    if patterns is None:
        patterns = (np.array(list(itertools.product((-1.0, 1.0), repeat=g))) if ties == "all"
                    else -np.ones((1, g)))
    subsets_iter = iter(itertools.combinations(range(n), g) if subsets is None else subsets)
    while True:
        if deadline is not None and time.perf_counter() >= deadline:
            out["complete"] = next(subsets_iter, None) is None
            break
        block = np.array(list(itertools.islice(subsets_iter, chunk)), np.int64).reshape(-1, g)
        if len(block) == 0:
            break
        A = np.concatenate([Z[block], -np.ones((len(block), g, 1))], axis=2)  # (S, g, g+1)
        u, sv, vt = np.linalg.svd(A, full_matrices=True)
        ok = sv[:, -1] > 1e-9 * np.maximum(sv[:, 0], 1e-300)  # rank g: a unique hyperplane
        if not np.any(ok):
            continue
        block, u, sv, vt = block[ok], u[ok], sv[ok], vt[ok]
        null = vt[:, -1, :].copy()
        null /= np.linalg.norm(null[:, :g], axis=1, keepdims=True)
        if deadline is not None and time.perf_counter() >= deadline:
            out["complete"] = False
            return out
        n_rows = len(patterns) * len(block)
        status = np.zeros(n_rows, np.int8)
        coef = np.zeros((n_rows, g))
        thr = np.zeros(n_rows)
        sides = np.zeros((n_rows, n_words), np.uint64)
        # one kernel pass: tilt, raw form, representability and sides of every (subset,
        # pattern); rows are pattern-major, the order the rules are listed in
        gen.pattern_rules(block, Z, null, u, sv, vt, patterns, phi, abs_phi, mu, sd, rel_err,
                          status, coef, thr, sides)
        sub = np.tile(np.arange(len(block)), len(patterns))
        lost = np.flatnonzero(status == 2)
        out["dropped_defining"].append(block[sub[lost]])
        out["dropped_sides"].append(unpack_bits(sides[lost], n) if len(lost) else
                                    np.zeros((0, n), bool))
        sel = np.flatnonzero(status == 1)
        rows_c = np.zeros((len(sel), len(powers)))
        rows_c[:, basis_cols] = coef[sel]
        out["family"].append(np.full(len(sel), family, np.int8))
        out["feature"].append(np.full(len(sel), -1, np.int64))
        out["coef"].append(rows_c)
        out["threshold"].append(thr[sel])
        out["defining"].append(block[sub[sel]])
        out["packed_sides"].append(sides[sel])
    return out


def make_rules(X: np.ndarray, families: tuple[str, ...] | str = ("hyperplane",), degree: int = 2,
               ties: str = "all", max_rules: int | None = None,
               deadline: float | None = None) -> RuleSet:
    """All candidate rules of the given families over the points ``X`` (rows should be distinct).

    ``families``: any of ``"axis"``, ``"hyperplane"``, ``"polynomial"`` (degree ``degree``), or
    ``"mixed"`` (all three; the polynomial part only when ``degree >= 2``). Raises ``ValueError``
    naming the estimated rule count when it exceeds ``max_rules`` (None: no cap). With ``deadline`` (a
    ``time.perf_counter()`` value) generation stops once it is passed and the rule set comes
    back with ``complete=False``.
    """
    X = np.asarray(X, np.float64)
    if X.ndim != 2 or len(X) == 0:
        raise ValueError(f"X must be a non-empty 2-D array, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinity")
    if isinstance(families, str):
        families = ("axis", "hyperplane", "polynomial") if families == "mixed" else (families,)
    for fam in families:
        if fam not in FAMILY_NAMES:
            raise ValueError(f"unknown rule family {fam!r}; use one of {FAMILY_NAMES} or 'mixed'")
    if ties not in ("all", "left"):
        raise ValueError(f"ties must be 'all' or 'left', got {ties!r}")
    if "polynomial" in families and degree < 1:
        raise ValueError(f"degree must be >= 1, got {degree}")
    n, d = X.shape
    use_poly = "polynomial" in families and degree >= 2
    families = tuple(f for f in families if f != "polynomial" or use_poly or "hyperplane" not in families)
    estimate = sum(estimate_rule_count(n, d, f, degree, ties) for f in families)
    if max_rules is not None and estimate > max_rules:
        detail = ", ".join(f"{f}: {estimate_rule_count(n, d, f, degree, ties):,}" for f in families)
        raise ValueError(
            f"too many candidate rules: about {estimate:,} ({detail}) for {n} distinct points in "
            f"{d} dimensions exceeds max_rules={max_rules:,}. The hyperplane family grows like "
            f"N**D and the polynomial family like N**G with G = C(D+degree, D) - 1; use fewer "
            f"points or features, ties='left', another family, or raise max_rules."
        )
    powers = monomial_powers(d, degree if use_poly else 1)
    parts = []
    for fam in families:
        if fam == "axis":
            parts.append(_axis_rules(X, powers))
        elif fam == "hyperplane":
            cols = np.flatnonzero(powers.sum(axis=1) == 1)
            parts.append(_plane_rules(X, powers, cols, HYPERPLANE, ties, deadline=deadline))
        else:
            cols = np.arange(len(powers))
            parts.append(_plane_rules(X, powers, cols, POLYNOMIAL, ties, deadline=deadline))
    g_max = max([b.shape[1] for p in parts for b in p["defining"]] or [1])

    def cat(key: str, empty: np.ndarray) -> np.ndarray:
        blocks = [b for p in parts for b in p.get(key, ())]
        if key.endswith("defining"):  # pad to g_max columns with -1
            blocks = [np.pad(b, ((0, 0), (0, g_max - b.shape[1])), constant_values=-1)
                      for b in blocks]
        return np.concatenate([empty] + blocks) if blocks else empty

    sides = cat("packed_sides", np.zeros((0, max(1, (n + 63) // 64)), np.uint64))
    rs = RuleSet(
        family=cat("family", np.zeros(0, np.int8)),
        feature=cat("feature", np.zeros(0, np.int64)),
        coef=cat("coef", np.zeros((0, len(powers)))),
        threshold=cat("threshold", np.zeros(0)),
        powers=powers,
        defining=cat("defining", np.zeros((0, g_max), np.int64)),
        sides=np.ascontiguousarray(sides),
        n_points=n,
    )
    rs = _dedup(rs)
    dropped = cat("dropped_sides", np.zeros((0, n), bool))
    if len(dropped):
        rs.n_unrepresentable = _count_lost(
            rs, cat("dropped_defining", np.zeros((0, g_max), np.int64)), pack_bits(dropped))
    rs.complete = all(p.get("complete", True) for p in parts)
    for fam in families:
        if fam != "axis":
            g = d if fam == "hyperplane" else len(powers)
            if ties == "left" or 2 <= n < g:
                rs.exhaustive = False
    return rs


def _rule_keys(defining: np.ndarray, sides: np.ndarray) -> np.ndarray:
    """One int64 row per rule: its sorted defining points (padded with -1) and side words."""
    return np.concatenate([np.sort(defining, axis=1), sides.view(np.int64)], axis=1)


def _count_lost(rs: RuleSet, defining: np.ndarray, sides: np.ndarray) -> int:
    """Distinct dropped rules (defining points and sides) that no kept rule reproduces."""
    kept = _rule_keys(rs.defining, rs.sides)
    lost = _rule_keys(defining, sides)
    keep_first = _first_rows(np.concatenate([lost, kept]))  # one of each distinct lost key
    distinct = np.flatnonzero(keep_first[:len(lost)])
    hk = gen.row_hashes(kept)
    hl = gen.row_hashes(lost[distinct])
    seen = np.isin(hl, hk)
    count = int((~seen).sum())
    for i in np.flatnonzero(seen):  # a hash match: compare the keys themselves
        rows = np.flatnonzero(hk == hl[i])
        if not np.any(np.all(kept[rows] == lost[distinct[i]], axis=1)):
            count += 1
    return count


def _first_rows(keys: np.ndarray) -> np.ndarray:
    """Mask of the rows of ``keys`` that equal no earlier row."""
    keys = np.ascontiguousarray(keys, np.int64)
    hashes = gen.row_hashes(keys)
    order = np.argsort(hashes, kind="stable").astype(np.int64)
    return gen.first_equal_row(keys, order, hashes) == np.arange(len(keys))


def _dedup(rs: RuleSet) -> RuleSet:
    """Drop exact duplicates (same family, defining points and sides), keeping the first.

    Only axis rules can repeat (one point defines the same split on several features): a
    hyperplane/hypersurface rule is one (subset, side pattern) pair, and the pattern fixes the
    defining points' sides."""
    axis = np.flatnonzero(rs.family == AXIS)
    if len(axis) < 2:
        return rs
    key = np.concatenate([rs.defining[axis], rs.sides[axis].view(np.int64)], axis=1)
    keep = np.ones(len(rs), bool)
    keep[axis] = _first_rows(key)
    return rs if keep.all() else rs.subset(np.flatnonzero(keep))


def ancestry_matrix(rules: RuleSet, index: np.ndarray | None = None) -> np.ndarray:
    """Definition 2.2 for the rules at ``index`` (all by default): ``K[i, j]`` is 1 / -1 / 0 when
    all defining points of rule ``j`` lie on the positive / negative side of rule ``i`` / neither."""
    index = np.arange(len(rules)) if index is None else np.asarray(index, np.int64)
    side = rules.side_matrix()[index]  # (k, n)
    k = len(index)
    K = np.zeros((k, k), np.int8)
    for j in range(k):
        pts = rules.defining[index[j]]
        pts = pts[pts >= 0]
        s = side[:, pts]
        K[s.all(axis=1), j] = 1
        K[(~s).all(axis=1), j] = -1
    np.fill_diagonal(K, 0)
    return K


def splits(K: np.ndarray, rs: list[int] | None = None) -> list[tuple[list[int], int, list[int]]]:
    """The paper's ``splits``: every ``(rs+, r_i, rs-)`` with ``r_i`` a feasible root of ``rs``.

    ``K`` is an ancestry matrix and ``rs`` a list of row indices into it (all by default); ``r_i``
    can be the root when ``K[i, j] != 0`` for every other ``j`` in ``rs``.
    """
    rs = list(range(len(K))) if rs is None else list(rs)
    out = []
    for i in rs:
        others = [j for j in rs if j != i]
        if all(K[i, j] != 0 for j in others):
            out.append(([j for j in others if K[i, j] == 1], i, [j for j in others if K[i, j] == -1]))
    return out
