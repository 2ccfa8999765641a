"""Plots (matplotlib, the optional ``plot`` extra): images are written and their texts, colours
and data checked through the Axes' artists."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import exactree  # noqa: E402
from exactree import (DyadicTreeClassifier, ObliqueTreeClassifier,  # noqa: E402
                      OptimalTreeClassifier, SparseTreeClassifier)
from exactree.tree.export import rule_formula  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def texts(ax):
    return [t.get_text() for t in ax.texts if t.get_text()]


def sparse_model():
    X = pd.DataFrame({"colour": pd.Categorical(["red", "green", "blue"] * 20),
                      "size": [1.0, 2.5, 4.0, 3.0, 0.5, 6.0] * 10})
    y = (X.colour == "red") | ((X.colour == "green") & (X["size"] > 2))
    return SparseTreeClassifier(penalty=0.01).fit(X, y)


def test_plot_tree_png_with_names_categories_leaves_and_class_colours(tmp_path):
    model = sparse_model()
    ax = exactree.plot_tree(model)
    path = tmp_path / "tree.png"
    ax.figure.savefig(path, dpi=50)
    assert path.read_bytes()[:8] == PNG
    shown = texts(ax)
    t = model.tree_
    size_node = int(np.flatnonzero(t.kind == 1)[0])
    assert f"size <= {t.threshold[size_node]:.4g}\nweight 20" in shown
    assert "colour = ?\nweight 60" in shown  # the multiway split, its branches on the edges
    assert {"blue", "green", "red", "yes", "no"} <= set(shown)
    leaves = [s for s in shown if s.startswith("class: ")]
    assert sorted(leaves) == sorted(["class: False\n20, 0", "class: False\n10, 0",
                                     "class: True\n0, 10", "class: True\n0, 20"])
    colour = {t.get_text(): t.get_bbox_patch().get_facecolor() for t in ax.texts if t.get_text()}
    assert colour["class: True\n0, 10"] == colour["class: True\n0, 20"]
    assert colour["class: True\n0, 10"] != colour["class: False\n10, 0"]
    assert ax.axison is False


def test_plot_tree_oblique_formulas_given_axes_and_max_depth():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(24, 2))
    y = np.where(X[:, 0] - 0.7 * X[:, 1] > 0.05, "pos", "neg")
    model = ObliqueTreeClassifier(rules="hyperplane", n_splits=1).fit(X, y)
    fig, ax = plt.subplots()
    assert exactree.plot_tree(model.tree_, ax=ax, precision=3) is ax
    formula = rule_formula(model.tree_, 0, ["x0", "x1"])
    assert f"{formula} <= {model.tree_.threshold[0]:.3g}\nweight 24" in texts(ax)
    ax = exactree.plot_tree(model, max_depth=0, feature_names=["a", "b"])
    assert texts(ax) == ["..."]
    with pytest.raises(TypeError, match="fitted exactree estimator"):
        exactree.plot_tree("tree")


def test_plot_path_of_the_node_budget_path_marks_the_chosen_tree():
    X, y, _ = exactree.load_anneal()
    model = OptimalTreeClassifier(max_depth=2)
    path = model.fit_path(X, y)
    ax = exactree.plot_path(model)  # chosen: the fitted (largest budget) tree
    points = ax.lines[1]
    np.testing.assert_array_equal(points.get_xdata(), [p.n_splits for p in path])
    np.testing.assert_array_equal(points.get_ydata(), [p.objective for p in path])
    star = ax.lines[2]
    assert star.get_xdata()[0] == path[-1].n_splits and star.get_ydata()[0] == path[-1].objective
    assert "chosen" in texts(ax) and ax.get_xlabel() == "number of splits"
    ax = exactree.plot_path(path, chosen=1)
    assert ax.lines[2].get_ydata()[0] == path[1].objective
    assert len(exactree.plot_path(path).lines) == 2  # a bare list: nothing chosen
    with pytest.raises(ValueError, match="outside the path"):
        exactree.plot_path(path, chosen=9)


def test_plot_path_of_the_dyadic_penalty_path():
    rng = np.random.default_rng(1)
    X = rng.random((60, 2))
    y = (X[:, 0] + 0.3 * rng.random(60) > 0.6).astype(int)
    model = DyadicTreeClassifier(max_splits_per_dim=2)
    path = model.fit_path(X, y)
    ax = exactree.plot_path(model, intervals=True)
    np.testing.assert_allclose(ax.lines[1].get_ydata(), [p.error for p in path])
    idx = model.stats_["path_index"]
    assert ax.lines[2].get_xdata()[0] == path[idx].n_leaves - 1
    assert any(s.endswith("inf]") for s in texts(ax))  # the single leaf's interval


def test_plot_partition_colours_regions_by_prediction(tmp_path):
    rng = np.random.default_rng(2)
    X = rng.random((80, 2))
    y = np.where((X[:, 0] > 0.5) & (X[:, 1] > 0.25), "b", "a")
    model = DyadicTreeClassifier(max_splits_per_dim=2).fit(X, y)
    ax = exactree.plot_partition(model, X, y, resolution=40)
    ax.figure.savefig(tmp_path / "p.png", dpi=40)
    mesh = ax.collections[0]
    labels = np.asarray(mesh.get_array()).reshape(40, 40)
    g0 = np.linspace(*ax.get_xlim(), 40)
    g1 = np.linspace(*ax.get_ylim(), 40)
    G0, G1 = np.meshgrid(g0, g1)
    expected = model.tree_.predict(np.column_stack([G0.ravel(), G1.ravel()])).reshape(40, 40)
    np.testing.assert_array_equal(labels, expected)
    assert set(labels.ravel()) == {0, 1}
    with pytest.raises(ValueError, match="2 features"):
        exactree.plot_partition(OptimalTreeClassifier(max_depth=1).fit(
            np.c_[X, X[:, :1]], y), np.c_[X, X[:, :1]])


def test_missing_matplotlib_is_a_clear_error(monkeypatch):
    model = sparse_model()
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"pip install \"exactree\[plot\]\""):
        exactree.plot_tree(model)


def test_import_exactree_and_plotting_do_not_import_matplotlib():
    code = ("import sys, exactree; exactree.plot_tree; exactree.plot_path; "
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
