"""``categorical_splits="subset"``: every two-group split of a categorical column is searched,
checked against a brute-force oracle over every subset of its categories (classifier with both
searches, regressor), and the tests, names and trees it gives."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from oracles import optimal_cost, optimal_sse, split_tests

from exactree import OptimalTreeClassifier, OptimalTreeRegressor
from exactree.data.binarize import IN, MAX_SUBSET_CATEGORIES, Binarizer
from exactree.data.encoding import FeatureEncoder
from exactree.tree import LEAF


def _case(rng: np.random.Generator):
    """Rows of one categorical column (4-6 categories, codes as categories of a DataFrame)
    and one numeric column of few values; labels from a random set of categories, flipped at
    random."""
    n = int(rng.integers(8, 16))
    C = int(rng.integers(4, 7))
    codes = rng.integers(0, C, n)
    codes[:C] = np.arange(C)  # every category present
    x = rng.integers(0, 4, n).astype(float)
    chosen = rng.random(C) < 0.5
    y = (chosen[codes] ^ (rng.random(n) < 0.2)).astype(np.int64)
    df = pd.DataFrame({"c": pd.Categorical([f"k{v}" for v in codes]), "x": x})
    tests = np.column_stack([codes.astype(float), x])
    return df, tests, y


@pytest.mark.parametrize("search", ["ordered", "binary"])
@pytest.mark.parametrize("seed", range(12))
def test_classifier_matches_brute_force_over_subsets(seed, search):
    rng = np.random.default_rng(seed)
    df, raw, y = _case(rng)
    depth = int(rng.integers(1, 3))
    model = OptimalTreeClassifier(max_depth=depth, categorical_splits="subset",
                                  search=search).fit(df, y)
    want = optimal_cost(split_tests(raw, categorical=(0,), subsets=True), y, 2, depth)
    assert model.objective_ == want
    assert model.status_ == "optimal"
    assert (model.predict(df) != y).sum() == want  # the tree itself, through predict
    # equality tests alone can only do as well or worse
    equality = OptimalTreeClassifier(max_depth=depth, search=search).fit(df, y)
    assert equality.objective_ == optimal_cost(split_tests(raw, categorical=(0,)), y, 2, depth)
    assert equality.objective_ >= want


@pytest.mark.parametrize("seed", range(8))
def test_regressor_matches_brute_force_over_subsets(seed):
    rng = np.random.default_rng(50 + seed)
    df, raw, labels = _case(rng)
    y = labels * 3.0 + rng.normal(size=len(labels)).round(1)
    depth = int(rng.integers(1, 3))
    model = OptimalTreeRegressor(max_depth=depth, categorical_splits="subset").fit(df, y)
    want = optimal_sse(split_tests(raw, categorical=(0,), subsets=True), y, depth)
    assert abs(model.objective_ - want) <= 1e-9 * max(1.0, want)
    assert np.allclose(model.predict(df), model.tree_.predict(df))


def test_a_two_group_split_wins_at_depth_one():
    # {a, c} against {b, d}: no equality test separates them, one subset test does
    df = pd.DataFrame({"colour": pd.Categorical(list("abcd") * 5)})
    y = df.colour.isin(["a", "c"]).to_numpy()
    plain = OptimalTreeClassifier(max_depth=1).fit(df, y)
    subset = OptimalTreeClassifier(max_depth=1, categorical_splits="subset").fit(df, y)
    assert plain.objective_ == 5 and subset.objective_ == 0
    assert (subset.predict(df) == y).all()
    text = subset.export_text()
    assert "colour in {a, c}" in text or "colour in {b, d}" in text
    root = subset.tree_
    assert root.kind[0] != LEAF and len(set(root.children(0))) == 2


def _binarizer(C: int, splits: str) -> Binarizer:
    encoder = FeatureEncoder(categorical=[0])
    X = encoder.fit_transform(np.arange(C, dtype=float)[:, None])
    return Binarizer(categorical_splits=splits).fit(X, np.zeros(C, np.int64), encoder.columns_)


@pytest.mark.parametrize("C", [2, 3, 4, 5, 7])
def test_every_two_group_split_once(C):
    b = _binarizer(C, "subset")
    X = np.arange(C, dtype=float)[:, None]  # the codes of the C categories
    sides = b.transform(X).T  # tests x categories
    parts = {frozenset(np.flatnonzero(s)) for s in sides}
    parts = {min(p, frozenset(range(C)) - p, key=lambda q: (len(q), sorted(q))) for p in parts}
    assert len(parts) == len(sides) == (1 << (C - 1)) - 1  # each partition once
    equality = _binarizer(C, "equality")
    assert b.n_features_out == equality.n_features_out or C > 3  # up to 3: the same tests
    assert all(name.startswith("x0 ") for name in b.names_)
    assert any(" in {" in name for name in b.names_) == (C > 3)
    assert sum(op == IN for op in b.op_) == max(0, (1 << (C - 1)) - 1 - C)


def test_too_many_categories_is_a_clear_error():
    df = pd.DataFrame({"c": pd.Categorical([f"v{i}" for i in range(MAX_SUBSET_CATEGORIES + 1)]),
                       "x": np.arange(MAX_SUBSET_CATEGORIES + 1.0)})
    y = np.arange(len(df)) % 2
    with pytest.raises(ValueError, match="categorical_splits='equality'"):
        OptimalTreeClassifier(max_depth=1, categorical_splits="subset").fit(df, y)
    OptimalTreeClassifier(max_depth=1).fit(df, y)  # equality tests: no limit
    with pytest.raises(ValueError, match="categorical_splits"):
        OptimalTreeClassifier(categorical_splits="pairs").fit(df, y)
