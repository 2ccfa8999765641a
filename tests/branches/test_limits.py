"""BRANCHES / SparseTreeClassifier under memory and time limits (issue 46, items 1 and 2):
numeric columns coded once by rank (no rows x thresholds matrix), the fit's memory estimated
and refused before it is allocated, the deadline read in the set-up and inside the kernels."""

from __future__ import annotations

import io

import numpy as np
import pytest
from sklearn.datasets import make_classification

from exactree.estimators import sparse
from exactree.estimators.sparse import SparseTreeClassifier
from exactree.limits import MemoryLimitError
from exactree.progress import Progress, new_board
from exactree.solvers.branches import search
from exactree.solvers.branches.search import Codes, _literals, _pair, _row_groups, solve


def _expanded(V: np.ndarray, column: np.ndarray, index: np.ndarray) -> np.ndarray:
    """The rows x features matrix of codes that ``Codes(V, column, index)`` stand for."""
    out = V[:, column].astype(np.int64)
    thr = index >= 0
    out[:, thr] = (out[:, thr] > index[thr]).astype(np.int64)
    return out


def _random_codes(seed: int, n: int):
    """Two rank columns (thresholds in shuffled order, some values above every threshold),
    a categorical column of 3 categories."""
    rng = np.random.default_rng(seed)
    V = np.column_stack([rng.integers(0, 6, n), rng.integers(0, 4, n), rng.integers(0, 3, n)])
    column = np.array([0, 0, 0, 0, 0, 1, 1, 2])
    index = np.array([0, 1, 2, 3, 4, 0, 2, -1])
    perm = rng.permutation(len(column))
    column, index = column[perm], index[perm]
    card = np.where(index >= 0, 2, 3)
    return V, column, index, card


@pytest.mark.parametrize("n", [1, 63, 64, 200])
def test_literal_bitsets_from_ranks_equal_the_expanded_codes(n):
    V, column, index, card = _random_codes(n, n)
    Z = _expanded(V, column, index)
    _, _, want = _literals(Z.astype(np.int32), card)
    _, _, got = _literals(_pair(Codes(V, column, index)), card)
    assert np.array_equal(got, want)


def test_row_groups_from_ranks_equal_the_expanded_codes():
    V, column, index, card = _random_codes(5, 300)
    Z = _expanded(V, column, index)
    got = _row_groups(_pair(Codes(V, column, index)), card)
    ref = np.unique(Z, axis=0, return_inverse=True)[1].ravel()
    pairs = set(zip(got.tolist(), ref.tolist()))
    assert len(pairs) == len(set(ref.tolist())) == len(set(got.tolist()))


@pytest.mark.parametrize("penalty", [0.0, 0.02])
def test_solve_on_ranks_equals_solve_on_the_expanded_codes(penalty):
    V, column, index, card = _random_codes(9, 120)
    rng = np.random.default_rng(1)
    Z = _expanded(V, column, index)
    y = np.where(rng.random(120) < 0.8, (Z[:, 0] ^ Z[:, -1] % 2), rng.integers(0, 2, 120))
    w = rng.integers(1, 3, 120).astype(float)
    for weights in (np.ones(120), w):
        a = solve(Z, card, y, weights, 2, penalty)
        b = solve(Codes(V, column, index), card, y, weights, 2, penalty)
        assert a.status == b.status == "optimal"
        assert b.objective == pytest.approx(a.objective, abs=1e-12)
        assert np.array_equal(b.tree.predict(Z), a.tree.predict(Z))


def test_estimator_codes_numeric_columns_by_rank(monkeypatch):
    """The solver gets one column of ranks per numeric column, not one per threshold."""
    X, y = make_classification(150, 4, random_state=0)
    seen = {}
    real = sparse.solve

    def spy(Z, card, *args, **kwargs):
        seen["Z"], seen["card"] = Z, card
        return real(Z, card, *args, **kwargs)

    monkeypatch.setattr(sparse, "solve", spy)
    clf = SparseTreeClassifier(penalty=0.02).fit(X, y)
    Z = seen["Z"]
    assert isinstance(Z, Codes)
    assert Z.values.shape == (150, 4) and len(seen["card"]) > 500  # 4 columns, ~600 tests
    assert clf.status_ == "optimal"


def test_threshold_ranks_are_the_binarizer_tests():
    """Ranks of raw numeric columns (ties, unsorted thresholds, missing values on either
    side, a constant column, a categorical column) give the Binarizer's tests negated."""
    from exactree.data import Binarizer
    from exactree.data.binarize import LE
    from exactree.data.encoding import FeatureEncoder

    rng = np.random.default_rng(4)
    X = rng.integers(0, 6, size=(90, 4)).astype(float)
    X[:, 1] = rng.normal(size=90).round(1)
    X[::5, 2] = np.nan
    X[:, 3] = 2.0
    X = np.column_stack([X, rng.integers(0, 3, 90)])
    y = rng.integers(0, 3, 90)
    enc = FeatureEncoder(categorical=[4], allow_nan=True)
    Xe = enc.fit_transform(X)
    binz = Binarizer(thresholds="exact").fit(Xe, y, enc.columns_)
    le = np.flatnonzero(binz.op_ == LE)
    le = le[rng.permutation(len(le))]
    ranks, column, index = sparse._threshold_ranks(Xe, binz, le)
    assert ranks.shape[1] == 4  # columns 0, 1; column 2 twice (missing true, false)
    codes = _expanded(ranks, column, index)
    assert np.array_equal(codes == 1, ~binz.transform(Xe, features=le))


def test_wide_numeric_data_is_refused_before_allocation(monkeypatch):
    """100,000 rows of 20 distinct-valued columns: two million thresholds, their bitsets
    about 50 GB. A clean MemoryLimitError naming the ways out, before any bitset is built."""
    X, y = make_classification(100_000, 20, random_state=0)

    def forbidden(*args, **kwargs):
        raise AssertionError("allocated before the memory check")

    monkeypatch.setattr(search, "_literals", forbidden)
    monkeypatch.setattr(sparse, "_threshold_ranks", forbidden)
    with pytest.raises(MemoryLimitError) as info:
        SparseTreeClassifier(penalty=0.01, time_limit=30).fit(X, y)
    message = str(info.value)
    assert "SparseTreeClassifier" in message and "fewer rows" in message
    assert "KBinsDiscretizer" in message
    assert info.value.need > 40 * 2**30


def test_memory_limit_counts_the_set_up():
    """memory_limit bounds the bitsets and buffers too, not only the search state: 3,000
    rows of 20 numeric columns need more than 100 MiB for them (refused, naming a
    memory_limit that fits), and fit in 1 GiB."""
    X, y = make_classification(3000, 20, random_state=0)
    with pytest.raises(MemoryLimitError, match=r"memory_limit=\d+ or more") as info:
        SparseTreeClassifier(penalty=0.01, memory_limit=100).fit(X, y)
    need = info.value.need
    fixed, state, least = search.memory_need(3000, 59980, 2 * 59980, 20, 2, 2, 2)
    assert 100 * 2**20 < need and fixed > 2 * 8 * 2 * 59980 * 47  # bitsets and workspace


def test_memory_need_covers_the_bitsets_and_workspace():
    n, q = 1000, 300
    G = 2 * q
    fixed, state, least = search.memory_need(n, q, G, 3, 2, 1, 2)
    words = (n + 63) // 64
    assert fixed >= 2 * G * words * 8 + words * q * 8  # literal bitsets, cb, BW
    assert least < state


def test_set_up_past_the_deadline_returns_the_leaf():
    """A time limit spent before the search starts: the root leaf, bound 0, no iteration."""
    V, column, index, card = _random_codes(3, 100)
    y = np.random.default_rng(0).integers(0, 2, 100)
    res = solve(Codes(V, column, index), card, y, np.ones(100), 2, 0.01, time_limit=1e-12)
    assert res.status == "time_limit" and res.stats["iterations"] == 0
    assert res.tree.n_splits == 0 and res.lower_bound == 0.0


def test_kernel_returns_at_once_past_the_deadline(monkeypatch):
    """The deadline reaches the kernel: with the set-up's checks off, a deadline in the past
    stops the search before its first iteration."""
    monkeypatch.setattr(search, "_in_time", lambda deadline: None)
    V, column, index, card = _random_codes(3, 100)
    y = (V[:, 0] > 2).astype(int)
    res = solve(Codes(V, column, index), card, y, np.ones(100), 2, 0.001, time_limit=1e-9,
                incumbent=lambda seconds: None)
    assert res.status == "time_limit" and res.stats["iterations"] == 0
    assert res.lower_bound <= res.objective


def test_estimator_set_up_reads_the_deadline(monkeypatch):
    """time_limit counts from fit's start: spent before the search, a single leaf (the
    search is never called)."""
    X, y = make_classification(500, 5, random_state=0)

    def forbidden(*args, **kwargs):
        raise AssertionError("the search ran past the deadline")

    monkeypatch.setattr(sparse, "solve", forbidden)
    clf = SparseTreeClassifier(penalty=0.01, time_limit=1e-9).fit(X, y)
    assert clf.status_ == "time_limit" and clf.tree_.n_splits == 0


def test_depth2_rows_stop_at_the_deadline():
    """Past the board's deadline the depth-2 bounds stop adding pair rows (at most 16) and
    return a weaker bound, never a wrong one."""
    from exactree.solvers.branches._pairs import branch_bounds, workspace

    rng = np.random.default_rng(2)
    n, m = 256, 40
    V = rng.integers(0, 30, size=(n, 2))
    column = np.repeat([0, 1], 29)
    index = np.tile(np.arange(29), 2)
    card = np.full(len(column), 2)
    y = ((V[:, 0] > 14) ^ (V[:, 1] > 9)).astype(np.int64)
    y[rng.random(n) < 0.1] ^= 1
    Z = _pair(Codes(V, column, index))
    q = len(card)
    lit_off, _, lit_bits = _literals(Z, card)
    n_words = lit_bits.shape[1]
    cls_bits = search._bits(y[None, :] == np.arange(2)[:, None], n_words)
    mis_bits = np.zeros(n_words, np.uint64)
    S = search._bits(np.ones((1, n), bool), n_words)[0]
    nzw = np.arange(n_words, dtype=np.int64)
    UF = np.arange(q + 1, dtype=np.int64)
    got = {}
    for deadline in (np.inf, -np.inf):
        ws = workspace(n, n_words, q, int(lit_off[-1]), 2, 2, new_board(deadline))
        rows = branch_bounds(S, nzw, n_words, 0, UF, q, Z, y, np.ones(n), False, 1.0, lit_bits,
                             cls_bits, mis_bits, lit_off, card, 2, 0.001 * n, 1e-9, -1, False,
                             q, False, False, ws)
        got[deadline] = (rows, ws[12][0])
    assert got[-np.inf][0] <= 16 < got[np.inf][0]
    assert got[-np.inf][1] <= got[np.inf][1] + 1e-9


def test_kernel_writes_the_board_for_progress_lines():
    """Progress lines come from the board while the kernel runs: the search goes through
    Progress.run, and the kernel writes its iterations, best cost and bound there."""
    boards = []

    class Spy(Progress):
        def run(self, kernel, board, *args, **kwargs):
            boards.append(board)
            return super().run(kernel, board, *args, **kwargs)

    V, column, index, card = _random_codes(7, 150)
    y = (V[:, 0] > 2).astype(int) ^ (V[:, 2] == 1)
    progress = Spy(0, "test", io.StringIO())
    res = solve(Codes(V, column, index), card, y, np.ones(150), 2, 0.001, progress=progress)
    assert res.status == "optimal" and boards
    board = boards[-1]
    assert board[1] >= 1  # NODES: this call's iterations
    assert board[2] == pytest.approx(res.objective * 150) and board[3] == board[2]
