"""Class weights of every node of a solved tree over binary features, in one pass of the rows."""

from __future__ import annotations

from numba import njit


@njit(cache=True)
def route_weights(X, labels, weights, feature, true_child, false_child, out):
    """Add each row's weight to its class in ``out[node]`` for every node on its path.

    ``X`` (rows x features, 0/1) holds the features the tree splits on; node ``i`` splits on
    ``feature[i]`` (-1: a leaf) and sends a row with the feature set to ``true_child[i]``, else
    to ``false_child[i]``; node 0 is the root. Rows are added in order, so each sum is the one
    ``np.bincount`` would give."""
    for r in range(X.shape[0]):
        k = labels[r]
        w = weights[r]
        node = 0
        while True:
            out[node, k] += w
            f = feature[node]
            if f < 0:
                break
            node = true_child[node] if X[r, f] else false_child[node]
