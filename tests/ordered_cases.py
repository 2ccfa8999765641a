"""Small numeric problems for the ordered search's tests: random data, every raw split as a 0/1
column (for the brute-force oracles of tests/oracles.py), and a tree's cost walked row by row
(independent of the solvers)."""

from __future__ import annotations

import numpy as np

from exactree.data import Binarizer
from exactree.data.encoding import FeatureEncoder
from exactree.data.ordered import ordered_features


def raw_splits(X: np.ndarray) -> np.ndarray:
    """Every split ``x_j <= v`` (``v`` a distinct value of column ``j`` but its largest) as 0/1
    columns."""
    cols = [X[:, j] <= v for j in range(X.shape[1]) for v in np.unique(X[:, j])[:-1]]
    return np.array(cols, bool).T.reshape(len(X), len(cols))


def small_numeric(rng, n_lo=6, n_hi=12, K=None):
    """Tiny data: 2-3 numeric columns of few distinct values, 2-3 classes."""
    n = int(rng.integers(n_lo, n_hi + 1))
    m = int(rng.integers(2, 4))
    K = int(rng.integers(2, 4)) if K is None else K
    X = rng.integers(0, int(rng.integers(2, 5)), (n, m)).astype(float)
    y = rng.integers(0, K, n)
    y[:K] = np.arange(K)
    return X, y, K


def weights_for(rng, n):
    r = rng.random()
    if r < 0.5:
        return None
    if r < 0.75:
        return rng.integers(1, 4, n).astype(float)
    return np.round(rng.uniform(0.1, 3.0, n), 3)


def features_of(X, y=None):
    enc = FeatureEncoder()
    Xe = enc.fit_transform(X)
    labels = np.zeros(len(X), np.int64) if y is None else y
    binz = Binarizer().fit(Xe, labels, enc.columns_)
    return ordered_features(binz, Xe), binz.transform(Xe)


def tree_cost(tree, B, y, K, w, target=None):
    """The weighted misclassification (or squared error) of a BinaryNode tree over the binary
    matrix ``B``, walked row by row."""
    n = B.shape[0]
    w = np.ones(n) if w is None else w
    total, stack = 0.0, [(tree, np.ones(n, bool))]
    while stack:
        node, rows = stack.pop()
        if node.feature < 0:
            if target is None:
                c = np.bincount(y[rows], weights=w[rows], minlength=K)
                total += c.sum() - c.max()
            elif rows.any():
                mean = np.average(target[rows], weights=w[rows])
                total += float((w[rows] * (target[rows] - mean) ** 2).sum())
        else:
            col = B[:, node.feature]
            stack += [(node.true, rows & col), (node.false, rows & ~col)]
    return total



