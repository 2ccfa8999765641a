"""The flat-array Tree: structure checks, prediction for every node kind, export, round trips."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from exactree.tree import LEAF, Tree, TreeBuilder, export_graphviz, export_text, from_json, to_json


def mixed_tree() -> Tree:
    """age <= 40 ? (colour: red -> A, green/blue -> B) : (x0 + 2 * x1^2 <= 5 ? A : B)."""
    b = TreeBuilder(n_features=2, n_classes=2)
    a1, b1 = b.leaf([3, 0], 0), b.leaf([0, 2], 1)
    cat = b.categorical(1, [a1, b1, b1], [3, 2], 0)
    a2, b2 = b.leaf([4, 1], 0), b.leaf([0, 0], 1)
    lin = b.linear([1.0, 2.0], [[1, 0], [0, 2]], 5.0, [a2, b2], [4, 1], 0)
    root = b.threshold(0, 40.0, [cat, lin], [7, 3], 0)
    return b.build(root, feature_names=["age", "colour"], class_names=["A", "B"],
                   categories=[None, ("red", "green", "blue")])


def test_structure_and_counts():
    t = mixed_tree()
    assert (t.n_nodes, t.n_leaves, t.n_splits, t.max_depth) == (7, 4, 3, 2)
    assert t.kind[0] != LEAF and list(t.depth) == [0, 1, 2, 2, 1, 2, 2]


def test_predict_every_kind_including_boundaries():
    t = mixed_tree()
    # age 40 is on the threshold (left); colour codes 0/2 pick the categorical slots; for
    # age > 40 the rule age + 2 colour^2 exceeds 5, so the right leaf (empty, label B) is used.
    X = np.array([[40, 0], [40, 2], [40.5, 1], [-3, 2]])
    assert list(t.apply(X)) == [2, 3, 6, 3]
    assert list(t.predict(X)) == [0, 1, 1, 1]
    proba = t.predict_proba(np.array([[40, 0], [50, 1]]))
    assert np.allclose(proba, [[1, 0], [0, 1]])  # an empty leaf predicts its label surely


def test_linear_rule_on_threshold_goes_left():
    b = TreeBuilder(n_features=2, n_classes=2)
    lin = b.linear([1.0, 1.0], [[1, 0], [0, 1]], 1.0, [b.leaf([1, 0], 0), b.leaf([0, 1], 1)], [1, 1], 0)
    t = b.build(lin)
    assert list(t.predict(np.array([[0.5, 0.5], [0.5, 0.6]]))) == [0, 1]


def test_bad_input_to_apply():
    t = mixed_tree()
    with pytest.raises(ValueError, match="2 columns"):
        t.apply(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="infinity"):
        t.apply(np.array([[np.inf, 0]]))
    with pytest.raises(ValueError, match="category code"):
        t.apply(np.array([[10, 7]]))


def test_invalid_structures_are_rejected():
    good = mixed_tree().to_dict()
    broken = dict(good, child=[2, 1] + good["child"][2:])  # root's children out of order/shared
    with pytest.raises(ValueError):
        Tree.from_dict(broken)
    with pytest.raises(ValueError, match="format"):
        Tree.from_dict({k: v for k, v in good.items() if k != "format"})
    b = TreeBuilder(1, 2)
    with pytest.raises(ValueError, match="2 entries"):
        b.leaf([1, 2, 3], 0)


def test_json_and_pickle_round_trips_predict_identically():
    t = mixed_tree()
    X = np.random.default_rng(0).uniform(-5, 60, size=(200, 2))
    X[:, 1] = np.random.default_rng(1).integers(0, 3, 200)
    for clone in (from_json(to_json(t)), pickle.loads(pickle.dumps(t)),
                  Tree.from_dict(json.loads(json.dumps(t.to_dict())))):
        assert clone == t
        assert np.array_equal(clone.predict_proba(X), t.predict_proba(X))


def test_exports_contain_names():
    t = mixed_tree()
    text = export_text(t)
    for piece in ("age <= 40", "age > 40", "colour = red", "colour in {green, blue}",
                  "age + 2*colour^2 <= 5", "class: A", "class: B"):
        assert piece in text, piece
    dot = export_graphviz(t)
    assert dot.startswith("digraph Tree {") and "colour = red" in dot and "0 -> 1" in dot
    renamed = export_text(t, feature_names=["f", "g"], class_names=["no", "yes"])
    assert "f <= 40" in renamed and "class: yes" in renamed
    with pytest.raises(ValueError, match="feature_names"):
        export_text(t, feature_names=["only-one"])


def test_exports_take_a_fitted_estimator():
    """As scikit-learn's export_text does: the estimator itself, or an error if unfitted."""
    from sklearn.exceptions import NotFittedError

    from exactree import OptimalTreeClassifier

    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [3.0, 0.0]])
    y = np.array([0, 0, 1, 1])
    model = OptimalTreeClassifier(max_depth=1).fit(X, y)
    assert export_text(model) == export_text(model.tree_)
    assert export_graphviz(model) == export_graphviz(model.tree_)
    assert to_json(model) == to_json(model.tree_)
    with pytest.raises(NotFittedError):
        export_text(OptimalTreeClassifier())
    with pytest.raises(TypeError, match="fitted exactree estimator"):
        export_text("not a tree")
