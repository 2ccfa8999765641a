"""ObliqueTreeClassifier / ObliqueTreeRegressor under time and memory limits (issue 46): the
clock counts from fit's start and holds through merging the rows into points and generating
rules; the points are counted by hashing, and rules that would not fit are refused before
every row is merged."""

from __future__ import annotations

import numpy as np
import pytest

from exactree.data.validation import TimeLimitReached
from exactree.estimators.oblique import ObliqueTreeClassifier, ObliqueTreeRegressor
from exactree.limits import MemoryLimitError
from exactree.solvers.proper import search
from exactree.solvers.proper.search import point_data, solve_proper


def _forbidden(*a, **k):
    raise AssertionError("ran past the deadline")


@pytest.mark.parametrize("seed", range(3))
def test_hashed_points_equal_np_unique(seed):
    from exactree.solvers.proper.search import row_groups

    rng = np.random.default_rng(seed)
    X = rng.integers(-2, 3, (400, 3)).astype(float)
    X[rng.random(400) < 0.1, 0] = -0.0
    w = rng.integers(0, 3, 400).astype(float)
    y = rng.integers(0, 2, 400)
    data = point_data(X, y, w, 2)
    Xu, inv = np.unique(X[w > 0] + 0.0, axis=0, return_inverse=True)
    assert np.array_equal(data.X, Xu)
    assert np.array_equal(data.inverse[w > 0], inv.ravel())
    assert np.all(data.inverse[w == 0] == -1)
    assert len(row_groups(X[w > 0])) == len(Xu)


def test_estimator_clock_starts_at_fit(monkeypatch):
    """time_limit covers the whole fit: spent before the solve, no rule is generated."""
    monkeypatch.setattr(search, "make_rules", _forbidden)
    rng = np.random.default_rng(0)
    X, y = rng.random((60, 2)), rng.integers(0, 2, 60)
    clf = ObliqueTreeClassifier(time_limit=1e-9).fit(X, y)
    assert clf.status_ == "time_limit" and clf.tree_.n_leaves == 1 and clf.lower_bound_ == 0
    reg = ObliqueTreeRegressor(time_limit=1e-9).fit(X, X[:, 0])
    assert reg.status_ == "time_limit" and reg.tree_.n_leaves == 1 and reg.lower_bound_ == 0
    assert reg.predict(X[:3]) == pytest.approx(np.full(3, X[:, 0].mean()))


def test_deadline_while_merging_gives_the_leaf(monkeypatch):
    def late(X, deadline=None):
        assert deadline is not None
        raise TimeLimitReached

    monkeypatch.setattr(search, "row_groups", late)
    monkeypatch.setattr(search, "make_rules", _forbidden)
    rng = np.random.default_rng(1)
    X, y = rng.random((50, 2)), rng.integers(0, 2, 50)
    res = solve_proper(X, y, np.ones(50), 2, n_splits=2, time_limit=100.0)
    assert res.status == "time_limit" and res.lower_bound == 0.0
    assert res.stats["points_merged"] is False and res.tree.n_leaves == 1
    assert res.objective == min(np.bincount(y))


def test_rules_refused_before_every_row_is_merged(monkeypatch):
    """The distinct rows of a prefix bound the points: hyperplane rules for them that would
    not fit are refused before the rows are hashed or sorted."""
    monkeypatch.setattr(search, "row_groups", _forbidden)
    rng = np.random.default_rng(2)
    X, y = rng.random((search._PREFIX_ROWS + 100, 6)), rng.integers(0, 2, search._PREFIX_ROWS + 100)
    with pytest.raises(MemoryLimitError, match="at least"):
        ObliqueTreeClassifier(time_limit=5.0, memory_limit=64).fit(X, y)


def test_many_duplicate_rows_merge_and_search():
    """Rows far beyond the prefix that are few distinct points: merged by hashing, searched."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, (20_000, 2)).astype(float)
    y = (X[:, 0] + X[:, 1] > 2).astype(int)
    clf = ObliqueTreeClassifier(n_splits=1, rules="axis", time_limit=60.0).fit(X, y)
    assert clf.status_ == "optimal"
    assert clf.objective_ == min(
        float(np.sum(y != ((X[:, f] > t) if flip else (X[:, f] <= t))))
        for f in range(2) for t in (0.5, 1.5) for flip in (False, True))
