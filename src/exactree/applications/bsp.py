"""Minimal binary space partition (auto-partition) of 2-D line segments (He & Little, 4.1).

The splitting rules are the *auto-rules*: the supporting lines of the segments. Every segment
lying in a region can be the root of that region (``splits_BSP``, eq. 21); a root line cuts the
segments it crosses into two fragments (new rules), keeps the segments lying on it at the node,
and sends the rest to its positive (left, ``a*x + b*y <= c``) or negative side. The objective is
eq. 22: one per leaf plus one per branch node, a leaf holding at most one fragment. The search is
``sodt`` with these splits, memoised on the set of fragments of a region (fragment sets recur
under different root orders), so the result is the smallest auto-partition tree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from ..tree import Tree, TreeBuilder

#: Relative tolerance of the on-line test: a fragment end within ``_EPS`` times the size of
#: the whole scene (plus the rounding of its coordinates) of a line lies on it. Relative, so
#: translating or scaling the segments never changes the partition.
_EPS = 1e-9

Fragment = tuple[int, float, float]  # (segment id, t0, t1) along segment p + t (q - p)


@dataclass
class BSPNode:
    """A branch (``line`` set) or a leaf (``line`` None). ``fragments`` are the pieces stored here:
    those lying on the node's line, or the (at most one) piece in a leaf."""

    fragments: list[Fragment]
    line: tuple[float, float, float] | None = None  # (a, b, c): positive side a*x + b*y <= c
    segment: int = -1  # the segment whose line splits here
    left: BSPNode | None = None
    right: BSPNode | None = None


@dataclass
class BSPTree:
    """An optimal auto-partition of ``segments`` (``n x 2 x 2``: endpoints)."""

    segments: np.ndarray
    root: BSPNode
    size: int  # eq. 22: branch nodes + leaves
    stats: dict[str, Any] = field(default_factory=dict)

    # ---------------------------------------------------------------- structure
    def nodes(self) -> list[BSPNode]:
        """All nodes in preorder."""
        out, stack = [], [self.root]
        while stack:
            node = stack.pop()
            out.append(node)
            if node.line is not None:
                stack.extend([node.right, node.left])
        return out

    @property
    def n_fragments(self) -> int:
        """Number of pieces the segments were cut into."""
        return sum(len(n.fragments) for n in self.nodes())

    def fragment_points(self, frag: Fragment) -> np.ndarray:
        """Endpoints (2 x 2) of a fragment."""
        i, t0, t1 = frag
        p, q = self.segments[i]
        return np.array([p + t0 * (q - p), p + t1 * (q - p)])

    def to_tree(self) -> Tree:
        """The partition as an exactree :class:`Tree` (LINEAR nodes, one 'class' counting the
        fragments stored in each subtree), usable for :meth:`Tree.apply` and export."""
        b = TreeBuilder(n_features=2, n_classes=1)
        ids: dict[int, int] = {}
        counts: dict[int, int] = {}
        for node in reversed(self.nodes()):  # children before parents
            key = id(node)
            if node.line is None:
                counts[key] = len(node.fragments)
                ids[key] = b.leaf([counts[key]], 0)
            else:
                a, bb, c = node.line
                counts[key] = len(node.fragments) + counts[id(node.left)] + counts[id(node.right)]
                coef = [v for v in (a, bb) if v != 0.0]
                powers = [p for v, p in zip((a, bb), ([1, 0], [0, 1])) if v != 0.0]
                ids[key] = b.linear(coef, powers, c, [ids[id(node.left)], ids[id(node.right)]],
                                    [counts[key]], 0)
        return b.build(ids[id(self.root)], feature_names=("x", "y"), class_names=("fragments",))

    def locate(self, points: Any) -> np.ndarray:
        """Leaf (index into :meth:`to_tree`'s nodes) containing each query point."""
        return self.to_tree().apply(np.asarray(points, np.float64).reshape(-1, 2))

    def painter_order(self, viewpoint: Any) -> list[Fragment]:
        """Fragments back to front as seen from ``viewpoint`` (the painter's algorithm)."""
        v = np.asarray(viewpoint, np.float64)
        order: list[Fragment] = []
        stack: list[Any] = [self.root]
        while stack:
            item = stack.pop()
            if isinstance(item, tuple):  # fragments stored at a node, already ordered
                order.extend(item[1])
                continue
            node = item
            if node.line is None:
                order.extend(node.fragments)
                continue
            a, b, c = node.line
            near, far = (node.left, node.right) if a * v[0] + b * v[1] <= c else (node.right, node.left)
            stack.extend([near, ("frags", node.fragments), far])  # far is drawn first
        return order

    def plot(self, ax: Any = None, *, show_lines: bool = True):
        """Draw segments and splitting lines with matplotlib (optional dependency)."""
        import matplotlib.pyplot as plt  # optional extra: exactree[plot]

        ax = ax or plt.gca()
        lo, hi = self.segments.reshape(-1, 2).min(axis=0), self.segments.reshape(-1, 2).max(axis=0)
        pad = 0.1 * (hi - lo + 1.0)
        lo, hi = lo - pad, hi + pad
        if show_lines:
            for node in self.nodes():
                if node.line is not None:
                    a, b, c = node.line
                    if abs(b) > abs(a):
                        xs = np.array([lo[0], hi[0]])
                        ax.plot(xs, (c - a * xs) / b, color="0.8", lw=0.8, zorder=0)
                    else:
                        ys = np.array([lo[1], hi[1]])
                        ax.plot((c - b * ys) / a, ys, color="0.8", lw=0.8, zorder=0)
        for node in self.nodes():
            for frag in node.fragments:
                pts = self.fragment_points(frag)
                ax.plot(pts[:, 0], pts[:, 1], lw=2)
        ax.set_xlim(lo[0], hi[0])
        ax.set_ylim(lo[1], hi[1])
        ax.set_aspect("equal")
        return ax


def _line_of(seg: np.ndarray) -> tuple[float, float, float]:
    """(a, b, c) with unit normal (a, b): the line through the segment, a*x + b*y = c."""
    (x0, y0), (x1, y1) = seg
    a, b = y1 - y0, x0 - x1
    norm = np.hypot(a, b)
    a, b = a / norm, b / norm
    return float(a), float(b), float(a * x0 + b * y0)


def _check_segments(segments: Any) -> np.ndarray:
    seg = np.asarray(segments, np.float64)
    if seg.ndim != 3 or seg.shape[1:] != (2, 2):
        raise ValueError(f"segments must have shape (n, 2, 2) (two 2-D endpoints each), got {seg.shape}")
    if not np.all(np.isfinite(seg)):
        raise ValueError("segments contain NaN or infinity")
    if len(seg) == 0:
        raise ValueError("segments is empty")
    length = np.linalg.norm(seg[:, 1] - seg[:, 0], axis=1)
    if np.any(length <= 0):
        raise ValueError(f"segment {int(np.argmin(length))} has zero length")
    return seg


def _scene_size(seg: np.ndarray) -> float:
    """Diagonal of the bounding box of all segments (the unit of the on-line tolerance)."""
    pts = seg.reshape(-1, 2)
    return float(np.hypot(*(pts.max(axis=0) - pts.min(axis=0))))


def _cut(segments: np.ndarray, lines: list, frags: tuple[Fragment, ...], r: int,
         size: float):
    """Split ``frags`` by the line of segment ``r``: (on the line, positive side, negative side).

    ``size`` is :func:`_scene_size`; the on-line tolerance is relative to it and to the
    magnitude of the coordinates, never absolute.
    """
    a, b, c = lines[r]
    on, pos, neg = [], [], []
    eps = np.finfo(np.float64).eps
    for frag in frags:
        i, t0, t1 = frag
        p, q = segments[i]
        d = q - p
        x0, y0 = p[0] + t0 * d[0], p[1] + t0 * d[1]
        x1, y1 = p[0] + t1 * d[0], p[1] + t1 * d[1]
        s0 = a * x0 + b * y0 - c
        s1 = a * x1 + b * y1 - c
        tol0 = _EPS * size + 64 * eps * (abs(a * x0) + abs(b * y0) + abs(c))
        tol1 = _EPS * size + 64 * eps * (abs(a * x1) + abs(b * y1) + abs(c))
        z0, z1 = abs(s0) <= tol0, abs(s1) <= tol1
        if (z0 and z1) or i == r:
            on.append(frag)
        elif (s0 <= 0 or z0) and (s1 <= 0 or z1):
            pos.append(frag)
        elif (s0 >= 0 or z0) and (s1 >= 0 or z1):
            neg.append(frag)
        else:  # the line crosses the fragment: cut it in two
            tm = float(t0 + (t1 - t0) * s0 / (s0 - s1))
            first, second = (i, t0, tm), (i, tm, t1)
            (pos if s0 < 0 else neg).append(first)
            (pos if s1 < 0 else neg).append(second)
    return on, tuple(sorted(pos)), tuple(sorted(neg))


def optimal_bsp(segments: Any, *, max_segments: int = 12) -> BSPTree:
    """The smallest auto-partition BSP tree of 2-D ``segments`` (eq. 22 objective).

    Exponential in the number of segments (it examines every auto-rule order, sharing equal
    fragment sets); refuses more than ``max_segments`` segments.
    """
    seg = _check_segments(segments)
    if len(seg) > max_segments:
        raise ValueError(f"{len(seg)} segments exceeds max_segments={max_segments}: the exact "
                         "search is exponential in the number of segments")
    lines = [_line_of(s) for s in seg]
    scene = _scene_size(seg)
    calls = [0]

    @lru_cache(maxsize=None)
    def best(frags: tuple[Fragment, ...]) -> tuple[int, int]:
        """(size, root segment or -1 for a leaf) of the optimal subtree over ``frags``."""
        calls[0] += 1
        if len(frags) <= 1:
            return 1, -1
        result = (np.iinfo(np.int64).max, -1)
        for r in sorted({f[0] for f in frags}):  # fragments of one segment share their line
            _, pos, neg = _cut(seg, lines, frags, r, scene)
            size = 1 + best(pos)[0] + best(neg)[0]
            if size < result[0]:
                result = (size, r)
        return result

    start = tuple(sorted((i, 0.0, 1.0) for i in range(len(seg))))
    size = best(start)[0]

    def build(frags: tuple[Fragment, ...]) -> BSPNode:
        # explicit stack would need parent links; the depth is at most the segment count
        _, r = best(frags)
        if r < 0:
            return BSPNode(list(frags))
        on, pos, neg = _cut(seg, lines, frags, r, scene)
        return BSPNode(on, lines[r], r, build(pos), build(neg))

    root = build(start)
    return BSPTree(seg, root, size, dict(subproblems=calls[0]))


def permutation_bsp_size(segments: Any, order: Any) -> int:
    """Size (eq. 22) of the auto-partition that, in every region, splits on the segment coming
    first in ``order`` (the classical randomised construction for one permutation)."""
    seg = _check_segments(segments)
    lines = [_line_of(s) for s in seg]
    scene = _scene_size(seg)
    rank = {int(s): k for k, s in enumerate(order)}
    size = 0
    stack = [tuple(sorted((i, 0.0, 1.0) for i in range(len(seg))))]
    while stack:
        frags = stack.pop()
        size += 1
        if len(frags) <= 1:
            continue
        r = min({f[0] for f in frags}, key=rank.__getitem__)
        _, pos, neg = _cut(seg, lines, frags, r, scene)
        stack.extend([pos, neg])
    return size
