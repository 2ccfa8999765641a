"""feature_importances_: normalised decrease of the weighted training misclassification."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from exactree import (DyadicTreeClassifier, ObliqueTreeClassifier, OptimalTreeClassifier,
                      SparseTreeClassifier)
from exactree.tree import LEAF, LINEAR, TreeBuilder


def test_hand_built_tree_gives_the_error_decrease_per_feature():
    b = TreeBuilder(n_features=3, n_classes=2)
    left = b.leaf([5, 0], 0)
    rl, rr = b.leaf([1, 0], 0), b.leaf([0, 4], 1)
    right = b.threshold(2, 0.5, [rl, rr], [1, 4], 1)
    tree = b.build(b.threshold(0, 1.0, [left, right], [6, 4], 0))
    # root: error 4 -> 0 + 1 (decrease 3, feature 0); right: 1 -> 0 (decrease 1, feature 2)
    imp = tree.feature_importances()
    np.testing.assert_allclose(imp, [0.75, 0.0, 0.25])
    assert imp[1] == 0.0


def test_linear_split_shares_its_decrease_among_its_features():
    b = TreeBuilder(n_features=3, n_classes=2)
    kids = [b.leaf([3, 0], 0), b.leaf([0, 3], 1)]
    powers = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    tree = b.build(b.linear([1.5, -2.0, 0.0], powers, 0.1, kids, [3, 3], 0))
    np.testing.assert_allclose(tree.feature_importances(), [0.5, 0.5, 0.0])


def test_single_leaf_is_all_zero():
    b = TreeBuilder(n_features=2, n_classes=2)
    np.testing.assert_array_equal(b.build(b.leaf([3, 1], 0)).feature_importances(), [0.0, 0.0])
    X = np.random.default_rng(0).random((20, 2))
    y = np.array([0] * 19 + [1])
    model = SparseTreeClassifier(penalty=0.5).fit(X, y)
    assert model.tree_.n_splits == 0
    np.testing.assert_array_equal(model.feature_importances_, [0.0, 0.0])


def data(n=80, seed=1):
    """y depends on columns 0 and 2 only; columns 1 and 3 are noise with few values."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.random(n), rng.integers(0, 2, n), rng.random(n),
                         rng.integers(0, 2, n)])
    y = ((X[:, 0] > 0.5) ^ (X[:, 2] > 0.3)).astype(int)
    return X, y


@pytest.mark.parametrize("model", [
    OptimalTreeClassifier(max_depth=2), SparseTreeClassifier(penalty=0.02),
    DyadicTreeClassifier(max_splits_per_dim=[2, 1, 2, 1]),
    ObliqueTreeClassifier(rules="axis", n_splits=2)], ids=lambda m: type(m).__name__)
def test_every_estimator_sums_to_one_and_unused_features_are_exactly_zero(model):
    X, y = data()
    with pytest.raises(NotFittedError):
        model.feature_importances_  # noqa: B018
    model.fit(X, y)
    imp = model.feature_importances_
    tree = model.tree_
    assert imp.shape == (4,) and np.all(imp >= 0) and imp.sum() == pytest.approx(1.0)
    used = set(tree.feature[tree.kind != LEAF].tolist())
    assert used and all(imp[f] == 0.0 for f in range(4) if f not in used)
    assert imp[0] > 0 and imp[2] > 0
    # the root's error minus the leaves' error is what the importances share out
    err = tree.value.sum(1) - tree.value.max(1)
    assert err[0] - err[tree.kind == LEAF].sum() > 0


def test_oblique_hyperplane_importances():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(30, 2))
    y = (X[:, 0] - 0.7 * X[:, 1] > 0.05).astype(int)
    model = ObliqueTreeClassifier(rules="hyperplane", n_splits=1).fit(X, y)
    assert model.tree_.kind[0] == LINEAR and model.objective_ == 0
    np.testing.assert_allclose(model.feature_importances_, [0.5, 0.5])
