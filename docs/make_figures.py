"""Regenerate the README's figures: ``python docs/make_figures.py`` (needs matplotlib).

docs/tree.png: the balanced depth-2 breast-cancer tree of the README's plots section.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from sklearn.datasets import load_breast_cancer  # noqa: E402

from exactree import OptimalTreeClassifier, plot_tree  # noqa: E402

HERE = Path(__file__).resolve().parent


def main() -> None:
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    model = OptimalTreeClassifier(max_depth=2, class_weight="balanced").fit(X, y)
    ax = plot_tree(model)
    out = HERE / "tree.png"
    ax.figure.savefig(out, dpi=80, bbox_inches="tight")
    print(f"{out}: {out.stat().st_size / 1024:.0f} KB")


if __name__ == "__main__":
    main()
