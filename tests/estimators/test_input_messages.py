"""Bad input names its column and says what to do; predict never builds matrices quadratic in the
tree size implicitly; a cold kernel cache says it is compiling."""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

import exactree.tree.compiled as compiled
from exactree import DyadicTreeClassifier, OptimalTreeClassifier
from exactree.tree import TreeBuilder
from exactree.tree.tree import MAX_COMPILED_CELLS, compiled_shape, prefer_compiled


def balanced_tree(depth: int, n_features: int = 4, seed: int = 0):
    """A full binary tree of ``depth`` with random thresholds (2**depth leaves)."""
    rng = np.random.default_rng(seed)
    b = TreeBuilder(n_features=n_features, n_classes=2)

    def build(d: int) -> int:
        if d == 0:
            c = int(rng.integers(2))
            return b.leaf([1.0 - c, float(c)], c)
        left, right = build(d - 1), build(d - 1)
        return b.threshold(int(rng.integers(n_features)), float(rng.random()), [left, right],
                           [1.0, 1.0], 0)

    return b.build(build(depth))


# ------------------------------------------------------------------------------ messages
@pytest.mark.parametrize("X, message", [
    ([[0.0, 1.0], [1.0, -np.inf]], "X contains infinity in column 1 (x1) (row 1)"),
    (pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, np.inf]}), "X contains infinity in column 'b' "
                                                          "(row 1)"),
    (pd.DataFrame({"a": [1.0, 2.0], "c": ["x", None]}), "column 'c' is categorical and contains "
                                                        "missing values (row 1); missing values "
                                                        "are handled in numeric columns only"),
    (pd.DataFrame({"a": [1.0, 2.0], "d": pd.to_datetime(["2020-01-01", "2021-06-30"])}),
     "column 'd' holds dates or times"),
    (pd.DataFrame({"a": [1.0, 2.0], "d": [pd.Timestamp("2020-01-01"), "x"]}),
     "column 'd' holds dates or times"),
    (np.array([[1], [2]], dtype="datetime64[D]"), "holds dates or times"),
])
def test_bad_values_name_the_column_and_the_remedy(X, message):
    with pytest.raises(ValueError) as e:
        OptimalTreeClassifier(max_depth=1).fit(X, [0, 1])
    assert message in str(e.value)


@pytest.mark.parametrize("X, message", [
    ([[0.0, np.nan], [1.0, 1.0]], "X contains NaN in column 1 (x1) (row 0); DyadicTreeClassifier "
                                  "does not handle missing values: impute them first"),
    (pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, np.nan]}), "X contains NaN in column 'b' (row 1)"),
])
def test_nan_names_the_column_where_missing_values_are_refused(X, message):
    with pytest.raises(ValueError) as e:
        DyadicTreeClassifier().fit(X, [0, 1])
    assert message in str(e.value)
    assert "OptimalTreeClassifier and SparseTreeClassifier" in str(e.value)


def test_nan_at_predict_names_the_column():
    model = DyadicTreeClassifier().fit([[0.0, 1.0], [1.0, 0.0]], [0, 1])
    with pytest.raises(ValueError, match=r"NaN in column 0 \(x0\) \(row 1\); .* impute"):
        model.predict([[0.0, 1.0], [np.nan, 1.0]])


@pytest.mark.parametrize("y, shown", [(np.array([3, 3]), "(3)"), (np.array([1.0, 1.0]), "(1.0)"),
                                      (["a", "a"], "('a')")])
def test_one_class_shows_a_plain_value(y, shown):
    with pytest.raises(ValueError, match="only one class") as e:
        OptimalTreeClassifier().fit([[0.0], [1.0]], y)
    assert shown in str(e.value) and "np." not in str(e.value)


# ------------------------------------------------------------------------ predict blow-up
def test_large_tree_predicts_without_compiling(monkeypatch):
    """A 8,192-leaf tree: the compiled form would be a 67M-cell matrix. Predicting 2,000 rows
    must take traversal (it took 30 s and 2.4 GB for a 17,336-leaf tree before)."""
    X = np.random.default_rng(1).random((2000, 4))
    model = OptimalTreeClassifier(max_depth=1).fit(X, (X[:, 0] > 0.5).astype(int))
    model.tree_ = balanced_tree(13)

    def refuse(tree):
        raise AssertionError("compile_tree called for a huge tree")

    monkeypatch.setattr(compiled, "compile_tree", refuse)
    start = time.perf_counter()
    leaves = model.apply(X)
    assert time.perf_counter() - start < 2.0
    assert np.array_equal(leaves, model.tree_.apply(X))
    assert np.array_equal(model.predict(X), model.classes_[model.tree_.label[leaves]])


def test_compiled_path_only_where_it_pays(monkeypatch):
    small, huge = balanced_tree(3), balanced_tree(13)
    assert compiled_shape(small) == (8, 7)
    with monkeypatch.context() as m:  # as in a process that has not loaded the kernels yet
        m.setitem(sys.modules, "exactree.tree._compiled_kernels", None)
        assert not prefer_compiled(small, 2000)  # loading the kernel costs more than it saves
        assert prefer_compiled(small, 20_000_000)  # a large batch pays for the load
    assert compiled_shape(huge)[0] * compiled_shape(huge)[1] > MAX_COMPILED_CELLS
    assert not prefer_compiled(huge, 10**9)  # never a matrix above the cap
    ct = compiled.compile_tree(small)  # kernels loaded in this process: cheap from then on
    ct.apply(np.zeros((2, 4)))
    assert prefer_compiled(small, 2000)


def test_categorical_chain_size():
    b = TreeBuilder(n_features=1, n_classes=2)
    leaves = [b.leaf([1, 0], 0), b.leaf([0, 1], 1)]
    root = b.categorical(0, [leaves[0], leaves[0], leaves[1]], [1, 1], 0)
    assert compiled_shape(b.build(root)) == (2, 1)  # two runs: one binary test
    b = TreeBuilder(n_features=1, n_classes=2)
    leaves = [b.leaf([1, 0], 0), b.leaf([0, 1], 1)]
    root = b.categorical(0, [leaves[0], leaves[1], leaves[0]], [1, 1], 0)
    assert compiled_shape(b.build(root)) is None  # a child in separate runs: duplicated


# --------------------------------------------------------------------------- compile note
def test_compile_note_once_and_only_for_exactree_kernels(monkeypatch, capsys):
    import numba

    import exactree._compile_note as note

    monkeypatch.setattr(note, "_said", False)
    note.note_compiling()

    def other(x):
        return x + 1

    numba.njit(other)(1)  # not an exactree kernel: no note
    assert note.MESSAGE not in capsys.readouterr().err

    def ours(x):
        return x + 2

    ours.__module__ = "exactree._note_test"
    numba.njit(ours)(1)
    assert capsys.readouterr().err.count("compiling the search kernels (first run only") == 1

    def again(x):
        return x + 3

    again.__module__ = "exactree._note_test"
    numba.njit(again)(1)
    assert capsys.readouterr().err == ""  # once per process


def test_no_compile_note_when_the_cache_is_warm():
    X = np.random.default_rng(0).random((40, 3))
    y = (X[:, 0] > 0.5).astype(int)
    OptimalTreeClassifier(max_depth=2).fit(X, y)  # fills the cache if it was cold
    code = ("import numpy as np; from exactree import OptimalTreeClassifier as M; "
            "X = np.random.default_rng(0).random((40, 3)); "
            "M(max_depth=2).fit(X, (X[:, 0] > 0.5).astype(int)); print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.stdout.strip() == "ok"
    assert "compiling" not in out.stderr
