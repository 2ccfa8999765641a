"""Trees and compiled trees take the estimator's own input: DataFrames and string columns are
encoded by the categories the tree records (numeric arrays stay the encoded matrix)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from exactree import OptimalTreeClassifier, SparseTreeClassifier


def frame():
    X = pd.DataFrame({"colour": pd.Categorical(["red", "green", "blue"] * 20),
                      "size": [1.0, 2.5, 4.0, 3.0, 0.5, 6.0] * 10})
    y = (X.colour == "red") | ((X.colour == "green") & (X["size"] > 2))
    return X, y


@pytest.mark.parametrize("make", [lambda: SparseTreeClassifier(penalty=0.01),
                                  lambda: OptimalTreeClassifier(max_depth=2)])
def test_compiled_tree_applies_the_estimators_dataframe(make):
    X, y = frame()
    model = make().fit(X, y)
    ct = model.tree_.compile()
    expected = model.apply(X)
    np.testing.assert_array_equal(ct.apply(X), expected)
    np.testing.assert_array_equal(model.tree_.apply(X), expected)
    np.testing.assert_array_equal(ct.apply(X[["size", "colour"]]), expected)  # by name
    strings = X.astype({"colour": object}).to_numpy()  # object array of raw values
    np.testing.assert_array_equal(ct.apply(strings), expected)
    np.testing.assert_array_equal(ct.predict(X),
                                  model.tree_.predict(X))
    # the encoded matrix (category codes) is still accepted as before
    np.testing.assert_array_equal(ct.apply(model.encoder_.transform(X)), expected)
    with pytest.raises(ValueError, match="category 'purple' not seen in fit"):
        ct.apply(X.assign(colour=["purple"] * 60))


def test_saved_compiled_tree_keeps_the_categories(tmp_path):
    X, y = frame()
    model = SparseTreeClassifier(penalty=0.01).fit(X, y)
    from exactree import CompiledTree

    model.tree_.compile().save(tmp_path / "t.npz")
    np.testing.assert_array_equal(CompiledTree.load(tmp_path / "t.npz").apply(X), model.apply(X))
