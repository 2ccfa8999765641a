"""The binariser's fast row sort (integer keys from the values' bits, positions in the low bits)
gives exactly what NumPy's argsort path gives: midpoints, their number per row and ranks, or the
missing-value flag, on the rows where the keys cannot order the values too."""

import numpy as np
import pytest

from exactree.data.binarize import _argsorted_midpoints, _sorted_rows_midpoints


def _rows(kind: int, rng: np.random.Generator, p: int, n: int) -> np.ndarray:
    if kind == 0:
        return rng.normal(size=(p, n))
    if kind == 1:  # ties
        return rng.integers(-5, 5, (p, n)).astype(float)
    if kind == 2:  # large integers: values that differ only in the bits the positions take
        return rng.integers(0, 2**60, (p, n)).astype(float)
    if kind == 3:  # signed zeros, subnormals, infinities
        return rng.choice([-0.0, 0.0, 5e-324, -5e-324, 1.0, -1.0, np.inf, -np.inf], (p, n))
    if kind == 4:  # missing values
        V = rng.normal(size=(p, n))
        V[rng.random((p, n)) < 0.05] = np.nan
        return V
    if kind == 5:  # equal but in the last bits
        return 1.0 + rng.integers(0, 50, (p, n)) * 2.0**-52
    if kind == 6:  # a row of negative NaN
        V = rng.normal(size=(p, n))
        V[0] = -np.nan
        return V
    return np.round(rng.normal(size=(p, n)) * 1e6) * 1e-300  # tiny values


@pytest.mark.parametrize("kind", range(8))
def test_key_sort_matches_argsort(kind):
    rng = np.random.default_rng(kind)
    for _ in range(40):
        p = int(rng.integers(1, 5))
        n = int(rng.choice([1, 2, 3, 5, 17, 150, 1000]))
        V = np.ascontiguousarray(_rows(kind, rng, p, n))
        expected = _argsorted_midpoints(V, np.argsort(V, axis=1))
        got = _sorted_rows_midpoints(V)
        assert got[0] == expected[0]  # missing values
        if expected[0]:
            continue
        for a, b in zip(got[1:], expected[1:]):
            assert a.dtype == b.dtype and np.array_equal(a, b)


def test_keys_sort_ordinary_rows(monkeypatch):
    """Ordinary numeric rows take the key sort, not NumPy's argsort."""
    import exactree.data.binarize as binarize

    def refuse(*args, **kwargs):
        raise AssertionError("argsort fallback taken")

    monkeypatch.setattr(binarize.np, "argsort", refuse)
    rng = np.random.default_rng(0)
    V = np.ascontiguousarray(np.round(rng.normal(size=(3, 500)), 3))
    missing, flat, counts, rank = _sorted_rows_midpoints(V)
    assert not missing and counts.sum() == len(flat) and rank.shape == V.shape
