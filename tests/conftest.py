"""Shared test fixtures: benchmark data (shipped in tests/data, else ``../shared/data``) and the
brute-force oracles."""

from __future__ import annotations

import csv
import gzip
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

# The suite draws the same examples on every run (a gate must not pass or fail by chance);
# HYPOTHESIS_PROFILE=explore draws new ones, to look for bugs on purpose.
settings.register_profile("default", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))  # makes `import oracles` work under --import-mode=importlib

DATA = TESTS / "data"  # shipped with the project (see tests/data/README.md)
SHARED = TESTS.parent.parent / "shared"  # the larger benchmark collection, when checked out


def data_file(relative: str) -> Path:
    """``tests/data/RELATIVE`` (or its ``.gz``), else ``../shared/data/RELATIVE``; skips the
    test, saying where it looked, when neither exists."""
    for path in (DATA / relative, DATA / (relative + ".gz"), SHARED / "data" / relative):
        if path.is_file():
            return path
    pytest.skip(f"{relative} is neither shipped in {DATA} nor in {SHARED / 'data'} (only the "
                "small benchmark sets ship with the project; larger ones need ../shared)")


def load_table(relative: str) -> np.ndarray:
    """A whitespace-separated integer table (plain or gzipped) as an int64 array."""
    path = data_file(relative)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return np.loadtxt(f, dtype=np.int64)


@pytest.fixture(scope="session")
def binary_data():
    """Loader for the binary benchmark ``NAME`` (``label f1 ... fn``) -> (X bool, y int)."""

    def load(name: str):
        a = load_table(f"binary/{name}.txt")
        return a[:, 1:].astype(bool), a[:, 0]

    return load


@pytest.fixture(scope="session")
def categorical_data():
    """Loader for the ordinal-coded benchmark ``NAME`` (last column the label) -> (X, y)."""

    def load(name: str):
        a = load_table(f"categorical/{name}-o.txt")
        return a[:, :-1], a[:, -1]

    return load


@pytest.fixture(scope="session")
def optima():
    """Known optimal misclassifications: {(dataset, depth): value} (shipped rows, plus those of
    ../shared when present)."""
    table = {}
    for path in (SHARED / "data" / "binary" / "optima.csv", DATA / "binary" / "optima.csv"):
        if path.is_file():
            with open(path) as f:
                table.update({(r["dataset"], int(r["max_depth"])):
                              float(r["optimal_misclassifications"]) for r in csv.DictReader(f)})
    return table
