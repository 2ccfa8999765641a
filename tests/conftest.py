"""Shared test fixtures: the benchmark data beside the checkout and the brute-force oracles."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))  # makes `import oracles` work under --import-mode=importlib

SHARED = TESTS.parent.parent / "shared"


@pytest.fixture(scope="session")
def binary_data():
    """Loader for ``../shared/data/binary/NAME.txt`` -> (X bool, y int)."""
    root = SHARED / "data" / "binary"
    if not root.is_dir():
        pytest.skip(f"benchmark data not found at {root} (CI checks out ../shared beside the repo)")

    def load(name: str):
        a = np.loadtxt(root / f"{name}.txt", dtype=np.int64)
        return a[:, 1:].astype(bool), a[:, 0]

    return load


@pytest.fixture(scope="session")
def optima():
    """Known optimal misclassifications: {(dataset, depth): value}."""
    import csv

    path = SHARED / "data" / "binary" / "optima.csv"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    with open(path) as f:
        return {(r["dataset"], int(r["max_depth"])): float(r["optimal_misclassifications"])
                for r in csv.DictReader(f)}
