"""Every ```python block of README.md runs exactly as printed, and prints what it says.

The compiled-tree block is written for "any fitted exactree classifier": it runs once for every
estimator the other blocks fit (``model``/``clf``), with the ``X`` that block fitted it on.
Blocks that draw need matplotlib (the ``plot`` extra) and are skipped without it.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path


README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
PLACEHOLDER = "model: any fitted exactree classifier"


def _has_matplotlib() -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
    except ImportError:
        return False
    return True


def test_readme_python_blocks_run_as_printed(tmp_path, monkeypatch):
    from exactree.estimators.base import TreeClassifierBase

    monkeypatch.chdir(tmp_path)  # blocks write tree.png, tree.npz
    assert len(BLOCKS) >= 6 and sum(PLACEHOLDER in b for b in BLOCKS) == 1
    fitted, out, ran = [], io.StringIO(), 0
    for block in BLOCKS:
        if PLACEHOLDER in block:
            continue
        if "plot_" in block and not _has_matplotlib():
            continue
        ns: dict = {"__name__": "__readme__"}
        with contextlib.redirect_stdout(out):
            exec(compile(block, str(README), "exec"), ns)
        ran += 1
        fitted += [(value, ns["X"]) for value in ns.values()
                   if isinstance(value, TreeClassifierBase) and hasattr(value, "tree_")]
    compiled = next(b for b in BLOCKS if PLACEHOLDER in b)
    kinds = {type(m).__name__ for m, _ in fitted}
    assert {"OptimalTreeClassifier", "SparseTreeClassifier", "DyadicTreeClassifier",
            "ObliqueTreeClassifier"} <= kinds
    for model, X in fitted:  # the SparseTreeClassifier DataFrame has a category column
        exec(compile(compiled, str(README), "exec"), {"model": model, "X": X})
        assert (tmp_path / "tree.npz").is_file()
    printed = out.getvalue()
    assert "22.0 22.0 optimal" in printed  # the comments in the README say what is printed
    assert "optimal 0.02 2" in printed
    assert "0.0 |--- x0 > 4.5 or missing" in printed  # missing values routed right
    assert "1633193 optimal" in printed  # a regression leaf cost of one's own
    if _has_matplotlib():
        assert "[0.03 0.09 0.88]" in printed
        assert (tmp_path / "tree.png").read_bytes()[:4] == b"\x89PNG"
    assert ran >= 5


def test_readme_picture_is_committed_and_small():
    text = README.read_text()
    for picture in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text):
        path = README.parent / picture
        assert path.is_file(), picture
        assert path.stat().st_size < 100 * 1024, picture
    assert "docs/tree.png" in text and (README.parent / "docs" / "make_figures.py").is_file()


def test_readme_compiled_claim_on_to_tree():
    """The README says to_tree() gives the tree back for threshold and oblique splits."""
    import numpy as np
    from sklearn.datasets import make_moons

    from exactree import ObliqueTreeClassifier, OptimalTreeClassifier

    X, y = make_moons(60, noise=0.3, random_state=0)
    for model in (OptimalTreeClassifier(max_depth=3).fit(X, y),
                  ObliqueTreeClassifier(n_splits=2, rules="hyperplane").fit(X[:30], y[:30])):
        ct = model.tree_.compile()
        assert ct.to_tree() == model.tree_
        assert np.array_equal(ct.predict(X), model.tree_.predict(X))
