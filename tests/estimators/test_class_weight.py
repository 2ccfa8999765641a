"""class_weight on every classifier: identical to fitting with the matching sample_weight."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils.class_weight import compute_sample_weight

from exactree import (DyadicTreeClassifier, ObliqueTreeClassifier, OptimalTreeClassifier,
                      SparseTreeClassifier)
from exactree.estimators.base import InvalidParameterError


def imbalanced(n=60, seed=3):
    """Two numeric features; the minority class 'rare' (about a sixth) overlaps the rest, so
    an unweighted tree ignores part of it and the balanced one does not."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, 2))
    rare = (X[:, 0] > 0.6) & (X[:, 1] > 0.45)
    rare[rng.random(n) < 0.1] ^= True
    return X, np.where(rare, "rare", "common")


ESTIMATORS = [
    lambda **kw: OptimalTreeClassifier(max_depth=2, **kw),
    lambda **kw: SparseTreeClassifier(penalty=0.02, **kw),
    lambda **kw: DyadicTreeClassifier(max_splits_per_dim=3, **kw),
    lambda **kw: ObliqueTreeClassifier(rules="axis", n_splits=2, **kw),
]
IDS = ["optimal", "sparse", "dyadic", "oblique"]


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
@pytest.mark.parametrize("class_weight", ["balanced", {"rare": 4.0}, {"rare": 2.5, "common": 0.5}])
def test_class_weight_equals_the_matching_sample_weight(make, class_weight):
    X, y = imbalanced()
    a = make(class_weight=class_weight).fit(X, y)
    b = make().fit(X, y, sample_weight=compute_sample_weight(class_weight, y))
    assert a.tree_ == b.tree_
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-12, abs=1e-12)
    assert a.status_ == b.status_
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_allclose(a.tree_.value[0].sum(), compute_sample_weight(class_weight, y).sum())


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_class_weight_multiplies_sample_weight(make):
    X, y = imbalanced()
    w = np.random.default_rng(0).integers(1, 4, len(y)).astype(float)
    a = make(class_weight="balanced").fit(X, y, sample_weight=w)
    b = make().fit(X, y, sample_weight=w * compute_sample_weight("balanced", y))
    assert a.tree_ == b.tree_


def test_balanced_weights_change_the_optimal_tree():
    X, y = imbalanced()
    plain = OptimalTreeClassifier(max_depth=1).fit(X, y)
    balanced = OptimalTreeClassifier(max_depth=1, class_weight="balanced").fit(X, y)
    recall = lambda m: np.mean(m.predict(X)[y == "rare"] == "rare")  # noqa: E731
    assert recall(balanced) > recall(plain)


def test_integer_labels_and_class_weight_errors():
    X, y = imbalanced()
    yi = (y == "rare").astype(int)
    a = OptimalTreeClassifier(max_depth=2, class_weight={1: 5}).fit(X, yi)
    b = OptimalTreeClassifier(max_depth=2).fit(X, yi, sample_weight=np.where(yi == 1, 5.0, 1.0))
    assert a.tree_ == b.tree_
    with pytest.raises(InvalidParameterError, match="class_weight"):
        OptimalTreeClassifier(class_weight="auto").fit(X, yi)
    with pytest.raises(ValueError, match="not in y"):
        OptimalTreeClassifier(class_weight={1: 2, 7: 3}).fit(X, yi)
    with pytest.raises(ValueError, match="negative"):
        OptimalTreeClassifier(class_weight={1: -1}).fit(X, yi)
