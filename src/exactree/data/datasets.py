"""Small demo datasets, so examples and the command line run with no input file."""

from __future__ import annotations

import gzip
from importlib import resources

import numpy as np

DEMOS = ("anneal", "iris", "wine", "breast_cancer")


def load_anneal() -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The binarised UCI *anneal* data (812 rows, 93 binary features, 2 classes).

    Bundled from the MurTree benchmark collection (MIT licence). Returns ``(X, y, names)``.
    """
    with resources.files(__package__).joinpath("bundled/anneal.csv.gz").open("rb") as raw:
        with gzip.open(raw, "rt") as f:
            header = f.readline().strip().split(",")
            data = np.loadtxt(f, delimiter=",", dtype=np.int64)
    return data[:, :-1], data[:, -1], header[:-1]


def load_demo(name: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``(X, y, feature_names)`` of a demo dataset: ``anneal`` (bundled, binary) or one of
    scikit-learn's numeric sets ``iris``, ``wine``, ``breast_cancer``."""
    if name == "anneal":
        return load_anneal()
    if name not in DEMOS:
        raise ValueError(f"unknown demo dataset {name!r}; choose one of {', '.join(DEMOS)}")
    from sklearn import datasets

    bunch = getattr(datasets, f"load_{name}")()
    return bunch.data, bunch.target, [str(f) for f in bunch.feature_names]
