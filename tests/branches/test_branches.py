"""BRANCHES / SparseTreeClassifier: oracles, cross-checks, anytime behaviour, bad input."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

sys.path.insert(0, str(Path(__file__).resolve().parent))

from oracle import all_branches_cost, brute_force_cost  # noqa: E402

from exactree.estimators.sparse import SparseTreeClassifier  # noqa: E402
from exactree.solvers.branches import solve  # noqa: E402
from exactree.tree import CATEGORICAL, LEAF, THRESHOLD, export_text  # noqa: E402

def random_categorical(seed: int):
    """Small data with cardinalities 2-4, labels partly explained by two features."""
    rng = np.random.default_rng(seed)
    q = int(rng.integers(2, 5))
    n = int(rng.integers(12, 40))
    card = rng.integers(2, 5, size=q)
    Z = np.stack([rng.integers(0, c, n) for c in card], axis=1)
    K = int(rng.integers(2, 4))
    y = np.where(rng.random(n) < 0.7, (Z[:, 0] + Z[:, -1]) % K, rng.integers(0, K, n))
    w = np.ones(n) if seed % 2 else rng.integers(1, 4, n) * rng.choice([0.5, 1.0, 1.5])
    return Z, card, y, w, K


@pytest.mark.parametrize("seed", range(8))
def test_optimum_equals_brute_force(seed):
    Z, card, y, w, K = random_categorical(seed)
    for penalty in (0.0, 0.01, 0.04, 0.12):
        for max_depth in (None, 2):
            res = solve(Z, card, y, w, K, penalty, max_depth=max_depth)
            assert res.status == "optimal"
            expected = brute_force_cost(Z, card, y, w, K, penalty, max_depth)
            assert res.objective == pytest.approx(expected, abs=1e-12)
            assert res.lower_bound == res.objective
            # the tree realises the reported objective
            tree = res.tree
            pred = tree.predict(Z)
            err = w[pred != y].sum() / w.sum()
            assert err + penalty * tree.n_splits == pytest.approx(res.objective, abs=1e-12)
            if max_depth is not None:
                assert tree.max_depth <= max_depth


def test_estimator_matches_oracle_with_declared_categories():
    Z, card, y, w, K = random_categorical(11)
    clf = SparseTreeClassifier(penalty=0.02, categorical_features=list(range(Z.shape[1])))
    clf.fit(Z, y, sample_weight=w)
    # the encoder codes the distinct values seen, so compare on those codes
    codes = np.stack([np.unique(Z[:, j], return_inverse=True)[1] for j in range(Z.shape[1])], 1)
    expected = brute_force_cost(codes, codes.max(0) + 1, np.unique(y, return_inverse=True)[1], w,
                                len(np.unique(y)), 0.02)
    assert clf.objective_ == pytest.approx(expected, abs=1e-12)
    assert set(clf.tree_.kind[clf.tree_.kind != LEAF]) <= {CATEGORICAL}


@pytest.mark.parametrize("name,penalty", [("monk1", 0.01), ("monk3", 0.001), ("balance", 0.01)])
def test_paper_datasets_against_exhaustive_dp(name, penalty, categorical_data):
    X, y = categorical_data(name)  # shipped in tests/data/categorical
    clf = SparseTreeClassifier(penalty=penalty, categorical_features=list(range(X.shape[1])))
    clf.fit(X, y)
    assert clf.status_ == "optimal"
    assert clf.objective_ == pytest.approx(all_branches_cost(X, y, penalty), abs=1e-12)
    # branches reached by several split orders are shared (the look-ahead may solve them all
    # before any is stored, so check without it)
    card = X.max(0) + 1
    plain = solve(X, card, np.unique(y, return_inverse=True)[1], np.ones(len(y)),
                  len(np.unique(y)), penalty, lookahead=False, depth2=0)
    assert plain.stats["memo_hits"] > 0
    assert plain.objective == pytest.approx(clf.objective_, abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_partial_expansion_and_array_growth_keep_the_optimum(seed, monkeypatch):
    """Storing one action per expansion (re-expanding on demand) and starting from tiny arrays
    (many growths, materialisations that stop an iteration) change nothing."""
    from exactree.solvers.branches import search

    init = search._State.__init__
    monkeypatch.setattr(search._State, "__init__",
                        lambda self, k, *sizes: init(self, k, 2, 2, 2, 2))
    Z, card, y, w, K = random_categorical(100 + seed)
    for penalty in (0.0, 0.02):
        expected = brute_force_cost(Z, card, y, w, K, penalty)
        for keep in (1, 3):
            res = search.solve(Z, card, y, w, K, penalty, keep_actions=keep)
            assert res.objective == pytest.approx(expected, abs=1e-12)


def test_integer_weights_equal_repeated_rows():
    Z, card, y, _, K = random_categorical(4)
    w = np.random.default_rng(4).integers(1, 4, len(y))
    a = solve(Z, card, y, w.astype(float), K, 0.02)
    b = solve(np.repeat(Z, w, axis=0), card, np.repeat(y, w), np.ones(w.sum()), K, 0.02)
    assert a.objective == pytest.approx(b.objective, abs=1e-12)
    assert a.tree == b.tree or a.tree.n_splits == b.tree.n_splits


def test_pandas_categories_give_multiway_nodes_and_absent_categories_become_leaves():
    pd = pytest.importorskip("pandas")
    colour = pd.Categorical(["red", "green", "blue", "red", "green", "blue"] * 6,
                            categories=["red", "green", "blue", "purple"])
    size = np.tile([1.0, 2.5, 3.0, 4.0, 5.5, 0.5], 6)
    X = pd.DataFrame({"colour": colour, "size": size})
    y = np.where((X.colour == "red") | ((X.colour == "green") & (X["size"] > 3)), "yes", "no")
    clf = SparseTreeClassifier(penalty=0.01).fit(X, y)
    tree = clf.tree_
    assert clf.status_ == "optimal" and clf.score(X, y) == 1.0
    assert tree.kind[0] == CATEGORICAL and tree.feature[0] == 0
    kids = tree.children(0)
    assert len(kids) == 4  # one slot per category, purple included
    purple = kids[3]
    assert tree.kind[purple] == LEAF and tree.value[purple].sum() == 0
    assert tree.label[purple] == tree.label[0]  # the parent's majority
    green = kids[1]
    assert tree.kind[green] == THRESHOLD and tree.feature[green] == 1
    text = export_text(tree)
    for line in ("colour = red", "colour = green", "colour = blue", "colour = purple", "size <= "):
        assert line in text
    assert clf.objective_ == pytest.approx(0.02)
    np.testing.assert_array_equal(clf.predict(X), y)


def test_numeric_columns_use_threshold_nodes_and_match_binarised_oracle():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 4, size=(30, 2)).astype(float)
    y = ((X[:, 0] > 1) ^ (X[:, 1] > 2)).astype(int)
    y[rng.random(30) < 0.15] ^= 1
    clf = SparseTreeClassifier(penalty=0.03).fit(X, y)
    assert set(clf.tree_.kind[clf.tree_.kind != LEAF]) <= {THRESHOLD}
    # binary features x_j > t for every midpoint t, as the oracle's 2-category features
    feats = [(X[:, j] > t).astype(int) for j in range(2)
             for t in (np.unique(X[:, j])[:-1] + np.unique(X[:, j])[1:]) / 2]
    B = np.stack(feats, 1)
    expected = brute_force_cost(B, np.full(B.shape[1], 2), y, np.ones(30), 2, 0.03, max_depth=3)
    assert clf.tree_.max_depth > 3 or clf.objective_ == pytest.approx(expected, abs=1e-12)
    assert clf.objective_ <= expected + 1e-12


def test_cross_check_with_dp_solver_on_binary_data(binary_data):
    from exactree.estimators.optimal import OptimalTreeClassifier

    X, y = binary_data("tic-tac-toe")
    X, y = X[::3, :12].astype(int), y[::3]
    for alpha, depth in ((0.03, 3), (0.015, 3)):
        ours = SparseTreeClassifier(penalty=alpha, max_depth=depth).fit(X, y)
        dp = OptimalTreeClassifier(max_depth=depth, cost_complexity=alpha).fit(X, y)
        assert ours.status_ == "optimal" and dp.status_ == "optimal"
        assert ours.objective_ == pytest.approx(dp.objective_, abs=1e-9)
        free = SparseTreeClassifier(penalty=alpha).fit(X, y)  # no depth limit
        assert free.objective_ <= ours.objective_ + 1e-12
        if free.tree_.max_depth <= depth:  # the optimum is naturally that shallow
            assert free.objective_ == pytest.approx(dp.objective_, abs=1e-9)


def test_anytime_bounds_bracket_the_optimum(categorical_data):
    X, y = categorical_data("lymph")  # shipped in tests/data/categorical
    y = np.unique(y, return_inverse=True)[1]
    card = X.max(0) + 1
    full = solve(X, card, y, np.ones(len(y)), 4, 0.01)
    assert full.status == "optimal"
    for cap in (200, full.stats["branches"] // 2):
        part = solve(X, card, y, np.ones(len(y)), 4, 0.01, max_branches=cap)
        assert part.status == "node_limit"
        assert part.lower_bound <= full.objective + 1e-12 <= part.objective + 2e-12
        assert part.gap > 0
        tree = part.tree
        err = (tree.predict(X) != y).mean()
        assert err + 0.01 * tree.n_splits == pytest.approx(part.objective, abs=1e-12)
    quick = SparseTreeClassifier(penalty=0.01, time_limit=1e-4,
                                 categorical_features=list(range(X.shape[1]))).fit(X, y)
    assert quick.status_ in ("time_limit", "optimal")
    assert quick.lower_bound_ <= full.objective + 1e-12 <= quick.objective_ + 1e-12


def test_memory_limit_stops_with_a_valid_bound(binary_data):
    X, y = binary_data("anneal")
    clf = SparseTreeClassifier(penalty=0.01, memory_limit=4).fit(X.astype(int), y)
    assert clf.status_ == "memory_limit"
    assert 0 < clf.lower_bound_ < clf.objective_ and clf.gap_ > 0
    err = (clf.predict(X.astype(int)) != y).mean()
    assert err + 0.01 * clf.tree_.n_splits == pytest.approx(clf.objective_, abs=1e-12)


@pytest.mark.parametrize("params,match", [
    ({"penalty": -0.1}, "penalty"),
    ({"penalty": 1.5}, "penalty"),
    ({"max_depth": -1}, "max_depth"),
    ({"time_limit": 0}, "time_limit"),
    ({"memory_limit": 0}, "memory_limit"),
    ({"max_branches": 0}, "max_branches"),
])
def test_bad_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        SparseTreeClassifier(**params).fit(np.eye(4), [0, 1, 0, 1])


def test_non_integer_codes_in_declared_categorical_column():
    X = np.array([[0.0, 1.0], [1.5, 0.0], [2.0, 1.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match="non-integer value 1.5"):
        SparseTreeClassifier(categorical_features=[0]).fit(X, [0, 1, 0, 1])
    pd = pytest.importorskip("pandas")
    with pytest.raises(ValueError, match="non-integer"):
        SparseTreeClassifier(categorical_features=["a"]).fit(
            pd.DataFrame({"a": X[:, 0], "b": X[:, 1]}), [0, 1, 0, 1])
    # integer-valued floats are fine
    SparseTreeClassifier(categorical_features=[1]).fit(X, [0, 1, 0, 1])


def test_solver_rejects_bad_codes():
    with pytest.raises(ValueError, match="code outside"):
        solve(np.array([[0], [2]]), np.array([2]), np.array([0, 1]), np.ones(2), 2, 0.1)
    with pytest.raises(ValueError, match="code outside"):
        solve(np.array([[0, 0], [-1, 1]]), np.array([2, 2]), np.array([0, 1]), np.ones(2), 2, 0.1)
    solve(np.array([[0, 0], [2, 1]]), np.array([3, 2]), np.array([0, 1]), np.ones(2), 2, 0.1)
    with pytest.raises(ValueError, match="code outside"):  # within one column's, not another's
        solve(np.array([[0, 2], [2, 1]]), np.array([3, 2]), np.array([0, 1]), np.ones(2), 2, 0.1)
    with pytest.raises(ValueError, match="penalty"):
        solve(np.array([[0], [1]]), np.array([2]), np.array([0, 1]), np.ones(2), 2, -1.0)
    with pytest.raises(ValueError, match="class index"):
        solve(np.array([[0], [1]]), np.array([2]), np.array([0, 2]), np.ones(2), 2, 0.1)
    with pytest.raises(ValueError, match="not all zero"):
        solve(np.array([[0], [1]]), np.array([2]), np.array([0, 1]), np.zeros(2), 2, 0.1)


# penalty 0.05 and a branch cap keep the checks' continuous data (hundreds of thresholds) quick
@parametrize_with_checks([SparseTreeClassifier(penalty=0.05, max_branches=2_000)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


# mixed-radix key; beyond 62 bits, packed bits (binary) or lexsort
@pytest.mark.parametrize("q,C", [(6, 3), (80, 2), (70, 3)])
def test_row_groups_are_exact(q, C):
    from exactree.solvers.branches.search import _row_groups

    rng = np.random.default_rng(q)
    Z = rng.integers(0, C, size=(300, q)).astype(np.uint8 if C == 2 else np.int32)
    Z[150:] = Z[:150][rng.permutation(150)]  # plenty of duplicates
    got = _row_groups(Z, np.full(q, C))
    ref = np.unique(Z, axis=0, return_inverse=True)[1].ravel()
    pairs = set(zip(got.tolist(), ref.tolist()))
    assert len(pairs) == len(set(ref.tolist())) == len(set(got.tolist()))


@pytest.mark.parametrize("n", [1, 7, 64, 130])
@pytest.mark.parametrize("card,dtype", [([2, 3, 2, 1, 4, 2], np.int32), ([2, 2, 2], np.uint8)])
def test_literal_bitsets_hold_their_rows(n, card, dtype):
    """Every literal's bitset holds exactly the rows with its code (binary features packed
    down the columns, the others row by row; all-binary bytes read as booleans in place), with
    nothing in the padding."""
    from exactree.solvers.branches.search import _literals

    rng = np.random.default_rng(n)
    card = np.array(card)
    Z = (rng.integers(0, 12, size=(n, len(card))) % card).astype(dtype)
    lit_off, lit_feat, bits = _literals(Z, card)
    for f in range(len(card)):
        for code in range(card[f]):
            word = bits[lit_off[f] + code]
            held = [(int(word[r // 64]) >> (r % 64)) & 1 for r in range(64 * len(word))]
            assert held == (Z[:, f] == code).tolist() + [0] * (64 * len(word) - n)
            assert lit_feat[lit_off[f] + code] == f


def test_features_with_many_categories():
    """Codes are held in bytes up to 256 categories, in int32 beyond: a column of 300
    categories gives the optimum of the DP over every branch, through the estimator."""
    from exactree.solvers.branches.search import code_dtype

    assert code_dtype(np.array([256, 2])) is np.uint8
    assert code_dtype(np.array([257, 2])) is np.int32
    rng = np.random.default_rng(11)
    n = 700
    Z = np.column_stack([rng.permutation(np.arange(n) % 300), rng.integers(0, 2, n)])
    y = np.where(rng.random(n) < 0.8, (Z[:, 0] % 3 == 0) ^ (Z[:, 1] == 1), rng.integers(0, 2, n))
    for penalty in (0.002, 0.02):
        clf = SparseTreeClassifier(penalty=penalty, categorical_features=[0]).fit(Z, y)
        assert clf.status_ == "optimal"
        assert clf.objective_ == pytest.approx(all_branches_cost(Z, y, penalty), abs=1e-12)


def random_binary(seed: int):
    """Binary features (some duplicated rows), 2-4 classes, weighted on even seeds."""
    rng = np.random.default_rng(seed)
    q = int(rng.integers(4, 7))
    n = int(rng.integers(20, 60))
    Z = rng.integers(0, 2, size=(n, q))
    Z[: n // 5] = Z[n // 5 : 2 * (n // 5)]  # identical feature vectors: equivalent points
    K = int(rng.integers(2, 5))
    y = np.where(rng.random(n) < 0.6, (Z[:, 0] * 2 + Z[:, 1] + Z[:, 2]) % K, rng.integers(0, K, n))
    w = rng.integers(1, 5, n) * 0.25 if seed % 2 == 0 else np.ones(n)
    return Z, np.full(q, 2), y, w, K


def assert_oracle_optimum(res, Z, card, y, w, K, penalty, max_depth):
    """``res`` is proven optimal, equals the brute force, its tree realises its objective and
    respects the depth limit."""
    expected = brute_force_cost(Z, card, y, w, K, penalty, max_depth)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(expected, abs=1e-12)
    err = w[res.tree.predict(Z) != y].sum() / w.sum()
    assert err + penalty * res.tree.n_splits == pytest.approx(res.objective, abs=1e-12)
    if max_depth is not None:
        assert res.tree.max_depth <= max_depth


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("lookahead,similar", [(0, False), (1, False), (1, True), (2, False),
                                               (3, False), (3, True), (99, False), (99, True)])
def test_lookahead_keeps_the_optimum(seed, lookahead, similar):
    """Look-ahead bounds off (0), when children are stored (1), and also at expansions up to
    some depth (2, 3, 99), with and without the similar-support bound: the optimum equals brute
    force on weighted, multi-class, categorical and binary data, with and without a depth
    limit, and the tree realises it."""
    Z, card, y, w, K = random_categorical(200 + seed) if seed < 6 else random_binary(seed)
    for penalty in (0.0, 0.01, 0.03, 0.1):
        for max_depth in (None, 2, 3):
            res = solve(Z, card, y, w, K, penalty, max_depth=max_depth, lookahead=lookahead,
                        similar_support=similar, depth2=0)
            assert_oracle_optimum(res, Z, card, y, w, K, penalty, max_depth)
            if lookahead == 0:
                assert res.stats["lookaheads"] == 0


def test_lookahead_solves_branches_without_storing_them(categorical_data):
    X, y = categorical_data("lymph")
    y = np.unique(y, return_inverse=True)[1]
    card = X.max(0) + 1
    off = solve(X, card, y, np.ones(len(y)), 4, 0.01, lookahead=0, depth2=0)
    on = solve(X, card, y, np.ones(len(y)), 4, 0.01, lookahead=99, depth2=0)
    assert on.objective == pytest.approx(off.objective, abs=1e-12)
    assert on.stats["solved_by_lookahead"] > 0
    assert on.stats["branches"] < off.stats["branches"] / 2
    assert on.stats["iterations"] < off.stats["iterations"] / 2


def test_anytime_tree_realises_its_objective_with_unexpanded_branches(binary_data):
    """Stopped early, the tree rebuilds the best depth-1 subtree of branches that were stored
    but never expanded; its cost is the reported objective and the bound stays below it."""
    X, y = binary_data("hepatitis")
    X = X.astype(int)
    y = np.unique(y, return_inverse=True)[1]
    for cap, similar in ((300, False), (3000, True)):
        res = solve(X, np.full(X.shape[1], 2), y, np.ones(len(y)), 2, 0.01, max_branches=cap,
                    similar_support=similar, depth2=0)
        assert res.status == "node_limit"
        err = (res.tree.predict(X) != y).mean()
        assert err + 0.01 * res.tree.n_splits == pytest.approx(res.objective, abs=1e-12)
        assert res.lower_bound < res.objective
        assert (res.stats["raised_by_similar_support"] > 0) == similar


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("depth2", [0, 1, 2, 8, 1000])
def test_depth2_bounds_keep_the_optimum(seed, depth2):
    """Depth-2 bounds from pair counts off (0) and with row budgets 1, 2, 8 and unlimited: the
    optimum equals brute force on weighted, multi-class, categorical and binary data (the
    binary fast path runs on unit weights), with and without a depth limit, and the tree (best
    depth-2 subtrees rebuilt for unexpanded branches) realises it."""
    Z, card, y, w, K = random_categorical(300 + seed) if seed < 6 else random_binary(300 + seed)
    if seed % 3 == 0:
        w = np.ones(len(y))  # unit weights: popcount paths
    for penalty in (0.0, 0.01, 0.03, 0.1):
        for max_depth in (None, 1, 2, 3):
            res = solve(Z, card, y, w, K, penalty, max_depth=max_depth, depth2=depth2)
            assert_oracle_optimum(res, Z, card, y, w, K, penalty, max_depth)
            assert (res.stats["depth2_bounds"] == 0) or depth2 > 0


def test_depth2_anytime_tree_realises_its_objective(binary_data):
    """Stopped early with depth-2 bounds, branches stored but never expanded get their best
    depth-2 subtree; the tree's cost is the reported objective, the bound stays below it."""
    X, y = binary_data("hepatitis")
    X = X.astype(int)
    y = np.unique(y, return_inverse=True)[1]
    for cap in (300, 3000):
        res = solve(X, np.full(X.shape[1], 2), y, np.ones(len(y)), 2, 0.01, max_branches=cap,
                    depth2=8)
        assert res.status == "node_limit"
        assert res.stats["depth2_bounds"] > 0
        err = (res.tree.predict(X) != y).mean()
        assert err + 0.01 * res.tree.n_splits == pytest.approx(res.objective, abs=1e-12)
        assert res.lower_bound < res.objective


def random_duplicated(seed: int):
    """Few base features and many that split some branches alike: exact and complemented
    copies, copies with relabelled categories, copies equal only where a third feature is 0,
    columns constant where another is 0, a constant column; weighted on even seeds."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 45))
    binary = seed % 3 != 2
    base_card = [2, 2, 2] if binary else [2, 3, 3]
    B = np.stack([rng.integers(0, c, n) for c in base_card], axis=1)
    cols, card = [B[:, 0], B[:, 1], B[:, 2]], list(base_card)
    for _ in range(3):
        f = int(rng.integers(0, 3))
        kind = int(rng.integers(0, 4))
        if kind == 3:  # constant where f is 0: the same rows at two depths
            cols.append(np.where(B[:, f] == 0, 0, rng.integers(0, 2, n)))
            card.append(2)
            continue
        if kind == 0:  # an exact copy, or a complemented / relabelled one
            perm = rng.permutation(base_card[f])
            cols.append(perm[B[:, f]])
        elif kind == 1:  # equal to f where feature g is 0 (copies on that branch only)
            g = (f + 1) % 3
            cols.append(np.where(B[:, g] == 0, B[:, f], rng.integers(0, base_card[f], n)))
        else:
            cols.append(np.zeros(n, np.int64) if rng.random() < 0.5 else 1 - B[:, f] % 2)
            card.append(2)
            continue
        card.append(base_card[f])
    Z = np.stack(cols, axis=1)
    order = rng.permutation(Z.shape[1])
    Z, card = Z[:, order], np.array(card)[order]
    K = int(rng.integers(2, 4))
    y = np.where(rng.random(n) < 0.7, (B[:, 0] + B[:, 1] * B[:, 2]) % K, rng.integers(0, K, n))
    w = rng.integers(1, 4, n) * 0.5 if seed % 2 == 0 else np.ones(n)
    return Z, card, y, w, K


@pytest.mark.parametrize("seed", range(8))
def test_dedup_keeps_the_optimum(seed):
    """Keeping one feature per class of features splitting a branch alike (and dropping constant
    ones) gives the brute-force optimum with depth-2 bounds, look-ahead bounds and neither,
    equal to the same search with the technique off; on these data it leaves features out."""
    Z, card, y, w, K = random_duplicated(seed)
    removed = 0
    for penalty in (0.0, 0.01, 0.04):
        for max_depth in (None, 2, 3):
            expected = brute_force_cost(Z, card, y, w, K, penalty, max_depth)
            for mode in ({"depth2": 8}, {"depth2": 1000}, {"depth2": 0, "lookahead": 99},
                         {"depth2": 0, "lookahead": 0}):
                on = solve(Z, card, y, w, K, penalty, max_depth=max_depth, dedup=True, **mode)
                assert on.status == "optimal"
                assert on.objective == pytest.approx(expected, abs=1e-12)
                err = w[on.tree.predict(Z) != y].sum() / w.sum()
                assert err + penalty * on.tree.n_splits == pytest.approx(on.objective, abs=1e-12)
                assert max_depth is None or on.tree.max_depth <= max_depth
                off = solve(Z, card, y, w, K, penalty, max_depth=max_depth, dedup=False, **mode)
                assert off.objective == pytest.approx(on.objective, abs=1e-12)
                assert off.stats["dedup_removed"] == 0
                removed += on.stats["dedup_removed"]
    assert removed > 0


@pytest.mark.parametrize("seed", range(6))
def test_distinct_features_match_partitions(seed):
    """``distinct`` keeps exactly the first feature of every class of features that partition
    the given rows into the same non-empty blocks, and drops features constant there."""
    from exactree.solvers.branches._classes import distinct
    from exactree.solvers.branches.search import _bits

    Z, card, y, w, K = random_duplicated(seed)
    n, q = Z.shape
    rng = np.random.default_rng(seed)
    lit_off = np.r_[0, np.cumsum(card)].astype(np.int64)
    lit_feat = np.repeat(np.arange(q), card)
    n_words = (n + 63) // 64
    lit_bits = _bits(Z.T[lit_feat] == (np.arange(lit_off[-1]) - lit_off[lit_feat])[:, None],
                     n_words)
    size = 16
    while size < 2 * q + 2:
        size *= 2
    for _ in range(20):
        rows = rng.random(n) < rng.uniform(0.2, 1.0)
        S_all = _bits(rows[None, :], n_words)[0]
        nzw = np.flatnonzero(S_all).astype(np.int64)
        S = S_all[nzw].copy()
        UF = rng.permutation(q).astype(np.int64)
        out = np.zeros(q + 1, np.int64)
        m = distinct(S, nzw, len(nzw), UF, q, out, lit_bits, lit_off, np.zeros(q + 1, np.uint64),
                     np.zeros(size, np.int64))
        expected, seen = [], set()
        for f in UF:
            blocks = frozenset(tuple(np.flatnonzero(rows & (Z[:, f] == j)))
                               for j in range(card[f]) if np.any(rows & (Z[:, f] == j)))
            if len(blocks) >= 2 and blocks not in seen:
                seen.add(blocks)
                expected.append(int(f))
        assert out[:m].tolist() == expected


def test_distinct_two_blocks_across_cardinalities():
    """A partition into two blocks is one class whatever the features' category counts: a
    three-category feature taking two values on the rows, a binary feature equal to it there
    and one complementary to it; the rows span several words and the first row's block
    differs between them."""
    from exactree.solvers.branches._classes import distinct
    from exactree.solvers.branches.search import _bits

    rng = np.random.default_rng(7)
    n = 150
    c3 = rng.integers(0, 3, n)
    rows = c3 != 1  # on these rows c3 takes codes 0 and 2 only
    b = (c3 == 2).astype(np.int64)
    Z = np.stack([b, c3, 1 - b, rng.integers(0, 2, n), (c3 == 0).astype(np.int64)], axis=1)
    Z[~rows, 2] = rng.integers(0, 2, int((~rows).sum()))  # equal to 1 - b on the rows only
    card = np.array([2, 3, 2, 2, 2])
    q = len(card)
    lit_off = np.r_[0, np.cumsum(card)].astype(np.int64)
    lit_feat = np.repeat(np.arange(q), card)
    n_words = (n + 63) // 64
    lit_bits = _bits(Z.T[lit_feat] == (np.arange(lit_off[-1]) - lit_off[lit_feat])[:, None],
                     n_words)
    S_all = _bits(rows[None, :], n_words)[0]
    nzw = np.flatnonzero(S_all).astype(np.int64)
    S = S_all[nzw].copy()
    for order in ([0, 1, 2, 3, 4], [1, 3, 4, 2, 0], [3, 2, 4, 1, 0]):
        UF = np.array(order, np.int64)
        out = np.zeros(q + 1, np.int64)
        m = distinct(S, nzw, len(nzw), UF, q, out, lit_bits, lit_off, np.zeros(q + 1, np.uint64),
                     np.zeros(16, np.int64))
        first = [f for f in order if f != 3][0]
        assert sorted(out[:m].tolist()) == sorted([first, 3])


@pytest.mark.parametrize("mode", [{}, {"dedup": False}, {"depth2": 0, "lookahead": 3}])
def test_upper_bounds_never_rise(binary_data, monkeypatch, mode):
    """Run one iteration per kernel call: no branch's upper bound (the cost of its incumbent
    subtree) ever rises, although a re-expansion may know less about the incumbent's children
    than the bound records; the tree still realises the reported objective."""
    from exactree.solvers.branches import search

    names = search.K.run.py_func.__code__.co_varnames
    i_iter, i_nd_f, i_ctr = names.index("max_iter"), names.index("nd_f"), names.index("ctr")
    run = search.K.run
    seen = {"prev": None, "rises": 0, "calls": 0}

    def one_iteration(*args):
        args = list(args)
        args[i_iter] = 1
        code = run(*args)
        n = int(args[i_ctr][search.K.C_NODES])
        ub = args[i_nd_f][:n, search.K.UB].copy()
        if seen["prev"] is not None:
            m = min(len(seen["prev"]), n)
            seen["rises"] += int(np.sum(ub[:m] > seen["prev"][:m] + 1e-9))
        seen["prev"] = ub
        seen["calls"] += 1
        return code

    monkeypatch.setattr(search.K, "run", one_iteration)
    X, y = binary_data("hepatitis")
    X = X.astype(int)
    y = np.unique(y, return_inverse=True)[1]
    res = search.solve(X, np.full(X.shape[1], 2), y, np.ones(len(y)), 2, 0.01,
                       max_branches=20_000, **mode)
    assert seen["calls"] > 1000 and seen["rises"] == 0
    err = (res.tree.predict(X) != y).mean()
    assert err + 0.01 * res.tree.n_splits == pytest.approx(res.objective, abs=1e-12)


@pytest.mark.parametrize("seed", range(9))
def test_memo_by_rows_keeps_the_optimum(seed):
    """A memo keyed by rows (and depth under a depth limit) instead of literals: branches that
    select the same rows by other literals share a node; the optimum equals brute force with
    depth-2 bounds, look-ahead bounds and neither, and the search with literal keys; anytime
    trees (stopped after a few branches) realise their objective."""
    data = (random_categorical, random_binary, random_duplicated)[seed % 3]
    Z, card, y, w, K = data(400 + seed)
    for penalty in (0.0, 0.01, 0.04):
        for max_depth in (None, 1, 2, 3):
            expected = brute_force_cost(Z, card, y, w, K, penalty, max_depth)
            for mode in ({"depth2": 8}, {"depth2": 0, "lookahead": 3},
                         {"depth2": 0, "lookahead": 0, "dedup": False}):
                by_rows = solve(Z, card, y, w, K, penalty, max_depth=max_depth, **mode)
                assert by_rows.status == "optimal"
                assert by_rows.objective == pytest.approx(expected, abs=1e-12)
                err = w[by_rows.tree.predict(Z) != y].sum() / w.sum()
                assert err + penalty * by_rows.tree.n_splits == pytest.approx(by_rows.objective,
                                                                             abs=1e-12)
                assert max_depth is None or by_rows.tree.max_depth <= max_depth
                by_lits = solve(Z, card, y, w, K, penalty, max_depth=max_depth, memo_rows=False,
                                **mode)
                assert by_lits.objective == pytest.approx(expected, abs=1e-12)
            part = solve(Z, card, y, w, K, penalty, max_depth=max_depth, max_branches=60)
            err = w[part.tree.predict(Z) != y].sum() / w.sum()
            assert err + penalty * part.tree.n_splits == pytest.approx(part.objective, abs=1e-12)
            assert part.lower_bound <= expected + 1e-12 <= part.objective + 2e-12


@pytest.mark.parametrize("seed", range(9))
def test_split_budget_keeps_the_optimum(seed):
    """Branches whose leaf is less than two or three penalties above their EQ weight are
    settled by their best stump or best depth-2 subtree: the optimum equals brute force (large
    penalties make most branches such) and the search with the technique off."""
    data = (random_categorical, random_binary, random_duplicated)[seed % 3]
    Z, card, y, w, K = data(500 + seed)
    if seed % 2:
        w = np.ones(len(y))  # unit weights: the binary fast path
    for penalty in (0.01, 0.03, 0.06, 0.1):
        for max_depth in (None, 2, 3):
            expected = brute_force_cost(Z, card, y, w, K, penalty, max_depth)
            for depth2 in (1, 8):
                on = solve(Z, card, y, w, K, penalty, max_depth=max_depth, depth2=depth2)
                assert on.status == "optimal"
                assert on.objective == pytest.approx(expected, abs=1e-12)
                err = w[on.tree.predict(Z) != y].sum() / w.sum()
                assert err + penalty * on.tree.n_splits == pytest.approx(on.objective, abs=1e-12)
                off = solve(Z, card, y, w, K, penalty, max_depth=max_depth, depth2=depth2,
                            split_budget=False)
                assert off.objective == pytest.approx(expected, abs=1e-12)


def random_numeric(seed: int):
    """Small numeric data for the ordered thresholds: columns with ties, duplicated rows, a
    constant column, 2-3 classes, weights on even seeds; every midpoint a binary feature with
    its feature map (column, threshold), as the estimator builds them."""
    from exactree.solvers.branches import FeatureMap

    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 34))
    C = int(rng.integers(2, 4))
    X = rng.integers(0, int(rng.integers(2, 4)), size=(n, C)).astype(float)
    X[:, 0] += rng.integers(0, 2, n) * 0.5  # a column with more distinct values
    if seed % 3 == 0:
        X[:, -1] = 1.0  # constant
    X[n // 2:n // 2 + 3] = X[:3]  # duplicated rows
    K = int(rng.integers(2, 4))
    y = np.where(rng.random(n) < 0.7, (X[:, 0] > np.median(X[:, 0])).astype(int) +
                 (X[:, 1] > 1) % K, rng.integers(0, K, n)) % K
    y[n // 2:n // 2 + 3] = y[:3] if seed % 2 else y[n // 2:n // 2 + 3]
    w = rng.integers(1, 4, n) * 0.5 if seed % 2 == 0 else np.ones(n)
    feats, col, thr = [], [], []
    for j in range(C):
        v = np.unique(X[:, j])
        for t in ((v[1:] + v[:-1]) / 2)[::-1 if seed % 2 else 1]:  # either order in Z
            feats.append((X[:, j] > t).astype(int))
            col.append(j)
            thr.append(t)
    B = np.stack(feats, 1) if feats else np.zeros((n, 0), int)
    return B, np.full(B.shape[1], 2), y, w, K, FeatureMap(np.array(col), np.array(thr), C), X


def test_ordered_thresholds_keep_the_optimum():
    """The chains of a numeric column's thresholds lift bounds between nested children: the
    optimum equals brute force over every threshold and the search with the technique off."""
    lifted = 0
    for seed in range(700, 730):
        Z, card, y, w, K, fmap, X = random_numeric(seed)
        for penalty in (0.0, 0.005, 0.02):
            for max_depth in ((None, 3) if Z.shape[1] <= 6 else (3,)):
                expected = brute_force_cost(Z, card, y, w, K, penalty, max_depth)
                for depth2 in (1, 8):
                    on = solve(Z, card, y, w, K, penalty, max_depth=max_depth, depth2=depth2,
                               feature_map=fmap, chain_similar=bool(seed % 2))
                    assert on.status == "optimal"
                    assert on.objective == pytest.approx(expected, abs=1e-12), seed
                    err = w[on.tree.predict(X) != y].sum() / w.sum()
                    assert err + penalty * on.tree.n_splits == pytest.approx(on.objective,
                                                                             abs=1e-12)
                    lifted += on.stats["lifted_by_chains"]
                    off = solve(Z, card, y, w, K, penalty, max_depth=max_depth, depth2=depth2,
                                feature_map=fmap, ordered=False, nested=False)
                    assert off.stats["lifted_by_chains"] == 0
                    assert off.objective == pytest.approx(expected, abs=1e-12)
    assert lifted > 100  # the bounds were lifted (not only in the depth-2 bounds)


def test_ordered_thresholds_chains_follow_the_data():
    """Neighbouring thresholds are linked only where their left sides nest on the data."""
    from exactree.solvers.branches import FeatureMap
    from exactree.solvers.branches.search import _chains, _literals

    x = np.array([0.0, 1.0, 2.0, 3.0])
    Z = np.stack([(x > 2.5), (x > 0.5), (x > 1.5), (x > 9.0) | (x == 0)], 1).astype(int)
    fmap = FeatureMap(np.array([0, 0, 0, 0]), np.array([2.5, 0.5, 1.5, 9.0]), 1)
    lit_off, _, lit_bits = _literals(Z, np.full(4, 2))
    nxt, prv = _chains(lit_bits, lit_off, np.full(4, 2), fmap)
    # by threshold: f1 (0.5) -> f2 (1.5) -> f0 (2.5); f3 does not nest (row 0 is right)
    assert nxt.tolist() == [-1, 2, 0, -1] and prv.tolist() == [2, -1, 1, -1]
    fmap.threshold[1] = np.nan  # categorical: no chain through it
    nxt, prv = _chains(lit_bits, lit_off, np.full(4, 2), fmap)
    assert nxt.tolist() == [-1, -1, 0, -1]


def test_ordered_thresholds_estimator_on_numeric_data():
    """The estimator on raw numeric columns: the same optimum with the chains on and off."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    X, y = X[::3], y[::3]
    on = SparseTreeClassifier(penalty=0.01).fit(X, y)
    assert on.status_ == "optimal" and on.stats_["lifted_by_chains"] > 0
    from exactree.solvers.branches import search

    orig = dict(search.solve.__kwdefaults__)
    search.solve.__kwdefaults__.update(ordered=False, nested=False)
    try:
        off = SparseTreeClassifier(penalty=0.01).fit(X, y)
    finally:
        search.solve.__kwdefaults__.update(orig)
    assert off.stats_["lifted_by_chains"] == 0
    assert on.objective_ == pytest.approx(off.objective_, abs=1e-12)


def random_thermometer(seed: int):
    """Numeric columns given as 0/1 columns (every midpoint, in thermometer code, columns
    shuffled, some complemented), no feature map: nested binary features the solver must find
    on the data. 2-3 classes, weights on even seeds."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(18, 32))
    X = rng.integers(0, int(rng.integers(3, 5)), size=(n, 2)).astype(float)
    K = int(rng.integers(2, 4))
    y = np.where(rng.random(n) < 0.7, (X[:, 0] >= 2).astype(int) + (X[:, 1] >= 1),
                 rng.integers(0, K, n)) % K
    w = rng.integers(1, 4, n) * 0.5 if seed % 2 == 0 else np.ones(n)
    cols = []
    for j in range(2):
        v = np.unique(X[:, j])
        for t in (v[1:] + v[:-1]) / 2:
            c = (X[:, j] > t).astype(int)
            cols.append(1 - c if rng.random() < 0.2 else c)
    Z = np.stack(cols, 1)[:, rng.permutation(len(cols))]
    return Z, np.full(Z.shape[1], 2), y, w, K


def test_nested_binary_features_are_chained():
    """Thermometer-coded 0/1 columns are linked in threshold order; a complemented column, an
    equal column and a non-nested column are not linked to them."""
    from exactree.solvers.branches.search import _nested

    x = np.array([0, 1, 2, 3, 3, 1])
    Z = np.stack([x > 1, x > 0, x > 2, x <= 1, x > 1, (x == 0) | (x == 3)], 1).astype(np.int32)
    nxt = np.full(6, -1, np.int64)
    prv = np.full(6, -1, np.int64)
    assert _nested(Z, np.full(6, 2), nxt, prv) == 2
    # zero rows: f1 {x=0} inside f0 {x<=1} inside f2 {x<=2}; f4 equals f0 (not strictly
    # larger), f3 is f0 complemented, f5 nests with none of them
    assert nxt[1] == 0 and nxt[0] == 2 and prv[0] == 1 and prv[2] == 0
    assert nxt[3] == -1 and prv[3] == -1 and nxt[5] == -1 and prv[5] == -1 and prv[4] == -1
    for f in range(6):  # every link is a true nesting of the zero rows
        if nxt[f] >= 0:
            assert not np.any((Z[:, f] == 0) & (Z[:, nxt[f]] != 0))


@pytest.mark.parametrize("seed", range(10))
def test_nested_and_chain_similar_keep_the_optimum(seed):
    """Nested 0/1 columns chained from the data (``nested``) and bounds lifted back along the
    chains less the weight in between (``chain_similar``): every combination on and off gives
    the brute-force optimum; the chains lift bounds only when ``nested`` is on (no feature map
    here), and the backward lifts change the search."""
    Z, card, y, w, K = random_thermometer(seed)
    for penalty in (0.0, 0.01, 0.03):
        for max_depth in ((None, 3) if Z.shape[1] <= 6 else (3,)):
            iters = {}
            for nested in (True, False):
                for back in (True, False):
                    for depth2 in (1, 8):
                        res = solve(Z, card, y, w, K, penalty, max_depth=max_depth, depth2=depth2,
                                    nested=nested, chain_similar=back)
                        assert_oracle_optimum(res, Z, card, y, w, K, penalty, max_depth)
                        if not nested:
                            assert res.stats["lifted_by_chains"] == 0
                        iters[nested, back, depth2] = (res.stats["expansions"],
                                                       res.stats["lifted_by_chains"])
            assert iters[False, True, 8] == iters[False, False, 8]


def test_chain_similar_lifts_back_along_a_chain():
    """:func:`._chains.lift` with ``back``: forward maxima as without it, plus the bound of a
    larger nested set less the weight it has in excess."""
    from exactree.solvers.branches._chains import lift

    mem = np.array([0, 1, 2], np.int64)
    lit_off = np.array([0, 2, 4, 6], np.int64)
    # left literal k = lit_off[k] holds 2, 3, 6 rows; right literals 7, 6, 3 (one class each)
    cnt = np.zeros((6, 2))
    cnt[[0, 2, 4], 0] = [2.0, 3.0, 6.0]
    cnt[[1, 3, 5], 0] = [7.0, 6.0, 3.0]
    lo = np.array([1.0, 0.5, 0.0, 0.0, 5.5, 2.5])
    hi = np.zeros(6)
    pre = np.zeros(6)
    lift(mem, 3, lit_off, lo, hi, pre, cnt, 1, 1.0, False)
    assert hi.tolist() == [1.0, 2.5, 1.0, 2.5, 5.5, 2.5]
    lift(mem, 3, lit_off, lo, hi, pre, cnt, 1, 1.0, True)
    # left 1 (3 rows) inside left 2 (6 rows): 5.5 - 3 = 2.5; left 0: 5.5 - 4 = 1.5
    # right 1 (6 rows) inside right 0 (7 rows): 0.5 - 1 < 2.5 (forward from right 2)
    assert hi.tolist() == [1.5, 2.5, 2.5, 2.5, 5.5, 2.5]
    lo2 = lo.copy()  # the same array as lo and hi
    lift(mem, 3, lit_off, lo2, lo2, pre, cnt, 1, 1.0, True)
    assert lo2.tolist() == hi.tolist()


def test_chain_similar_changes_the_search():
    """The backward lifts are not a no-op on nested 0/1 columns: they change what is stored
    (without ``refine_kept``: with it, these small problems need too few branches to tell)."""
    changed = 0
    for seed in range(10):
        Z, card, y, w, K = random_thermometer(seed)
        on, off = (solve(Z, card, y, w, K, 0.01, chain_similar=b, refine_kept=False)
                   for b in (True, False))
        assert on.objective == pytest.approx(off.objective, abs=1e-12)
        changed += on.stats["branches"] != off.stats["branches"]
    assert changed > 0


@pytest.mark.parametrize("seed", range(8))
def test_refresh_keeps_the_optimum(seed):
    """Refreshing the chosen action's bound from its children at every branch the selection
    descends through (``refresh``), and never lowering an action's bound: on and off give the
    brute-force optimum, with and without depth-2 bounds, chains and a depth limit; a search
    stopped early keeps a valid lower bound and a tree that realises its objective."""
    data = (random_categorical, random_binary, random_duplicated, random_thermometer)[seed % 4]
    Z, card, y, w, K = data(700 + seed)
    for penalty in (0.0, 0.01, 0.03):
        for max_depth in (None, 3):
            expected = brute_force_cost(Z, card, y, w, K, penalty, max_depth)
            for mode in ({}, {"depth2": 0, "lookahead": 3}, {"chain_similar": True}):
                for refresh in (True, False):
                    res = solve(Z, card, y, w, K, penalty, max_depth=max_depth, refresh=refresh,
                                **mode)
                    assert_oracle_optimum(res, Z, card, y, w, K, penalty, max_depth)
                    if not refresh:
                        assert res.stats["refreshed"] == 0
            part = solve(Z, card, y, w, K, penalty, max_depth=max_depth, max_branches=40)
            err = w[part.tree.predict(Z) != y].sum() / w.sum()
            assert err + penalty * part.tree.n_splits == pytest.approx(part.objective, abs=1e-12)
            assert part.lower_bound <= expected + 1e-12 <= part.objective + 2e-12


def test_refresh_changes_the_search():
    """The refresh is not a no-op where branches are shared: it raises stale action bounds and
    saves expansions, the optimum unchanged."""
    for seed in range(3):
        rng = np.random.default_rng(seed)
        n, q = 150, 10
        Z = rng.integers(0, 2, size=(n, q))
        y = np.where(rng.random(n) < 0.7, (Z[:, 0] ^ Z[:, 1]) | (Z[:, 2] & Z[:, 3]),
                     rng.integers(0, 2, n))
        on, off = (solve(Z, np.full(q, 2), y, np.ones(n), 2, 0.005, refresh=b)
                   for b in (True, False))
        assert on.status == off.status == "optimal"
        assert on.objective == pytest.approx(off.objective, abs=1e-12)
        assert on.stats["refreshed"] > 0 and off.stats["refreshed"] == 0
        assert on.stats["expansions"] < off.stats["expansions"]


@pytest.mark.parametrize("seed", range(8))
def test_refine_kept_keeps_the_optimum(seed):
    """Refining the bounds of every split an expansion keeps, and of the best one it leaves out
    (``refine_kept``), rather than of the best only: on and off give the brute-force optimum,
    with and without chains, a depth limit, few kept splits and the backward lifts."""
    data = (random_categorical, random_binary, random_duplicated, random_thermometer)[seed % 4]
    Z, card, y, w, K = data(900 + seed)
    for penalty in (0.0, 0.01, 0.03):
        for max_depth in (None, 3):
            for mode in ({}, {"keep_actions": 2}, {"chain_similar": True}, {"ordered": False}):
                for refine in (True, False):
                    res = solve(Z, card, y, w, K, penalty, max_depth=max_depth,
                                refine_kept=refine, **mode)
                    assert_oracle_optimum(res, Z, card, y, w, K, penalty, max_depth)


def test_refine_kept_changes_the_search():
    """Refining the kept splits is not a no-op: it computes more depth-2 rows at expansions and
    changes what is stored, the optimum unchanged."""
    changed = 0
    for seed in range(6):
        Z, card, y, w, K = random_thermometer(seed)
        on, off = (solve(Z, card, y, w, K, 0.005, refine_kept=b) for b in (True, False))
        assert on.status == off.status == "optimal"
        assert on.objective == pytest.approx(off.objective, abs=1e-12)
        changed += on.stats["branches"] != off.stats["branches"]
    assert changed > 0


@pytest.mark.parametrize("name, caps", [("hepatitis", (300, 3000)), ("lymph", (500, 5000))])
def test_tree_extraction_in_time_and_past_it(binary_data, monkeypatch, name, caps):
    """Cut short, the tree extraction rebuilds each branch not followed through an action as its
    best subtree of depth <= 2 while time is left; past the deadline, as the first one found that
    costs at most what the search counted for it (found in a few pair rows). Either tree costs
    what it reports and no more than the search's incumbent (checked by ``solve``); the best is
    no worse than the quick one and, somewhere, better."""
    from exactree.solvers.branches import search

    X, y = binary_data(name)
    X = X.astype(int)
    y = np.unique(y, return_inverse=True)[1]
    real = search._extract
    costs = {}

    def both(*args):
        quick = real(*args[:-1], -np.inf)
        best = real(*args[:-1], np.inf)
        costs["quick"], costs["best"] = quick[1], best[1]
        return quick

    monkeypatch.setattr(search, "_extract", both)
    gains = []
    for cap in caps:
        res = solve(X, np.full(X.shape[1], 2), y, np.ones(len(y)), int(y.max()) + 1, 0.01,
                    max_branches=cap)
        assert res.status == "node_limit"
        err = (res.tree.predict(X) != y).mean()
        assert err + 0.01 * res.tree.n_splits == pytest.approx(res.objective, abs=1e-12)
        assert res.objective * len(y) == pytest.approx(costs["quick"], abs=1e-9)
        assert costs["best"] <= costs["quick"] + 1e-9
        gains.append(costs["quick"] - costs["best"])
    assert max(gains) > 0.1


def test_given_incumbent_keeps_the_optimum():
    """A tree given from outside (asked for after the root's expansion) never changes the
    proven optimum: the optimal tree given is kept (the answer, when taken: the search finds
    none strictly better), a worse one (the best stump) is ignored; either way the tree
    returned realises the objective. Some of the optimal trees given are taken and then
    proven by the search."""
    taken = 0
    for seed in range(8):
        Z, card, y, w, K = random_categorical(700 + seed) if seed < 4 else \
            random_binary(700 + seed)
        for penalty in (0.0, 0.01, 0.03):
            best = solve(Z, card, y, w, K, penalty)
            stump = solve(Z, card, y, w, K, penalty, max_depth=1)
            for given in (best, stump):
                asked = []

                def incumbent(seconds, given=given):
                    asked.append(seconds)
                    return given.tree, given.objective

                res = solve(Z, card, y, w, K, penalty, incumbent=incumbent)
                assert_oracle_optimum(res, Z, card, y, w, K, penalty, None)
                assert len(asked) <= 1 and all(s == 2.0 for s in asked)  # no limit: 2 s
                if given is stump and stump.objective > best.objective + 1e-9:
                    assert not res.stats["incumbent_given"]
                if given is best and res.stats["incumbent_given"]:
                    assert res.status == "optimal" and res.tree is best.tree
                    taken += 1
    assert taken > 0


def test_given_incumbent_is_checked():
    """A tree deeper than ``max_depth`` or an objective that is no cost is refused."""
    Z, card, y, w, K = random_binary(709)
    deep = solve(Z, card, y, w, K, 0.0)
    assert deep.tree.max_depth > 3
    with pytest.raises(ValueError, match="deeper than max_depth=3"):
        solve(Z, card, y, w, K, 0.0, max_depth=3,
              incumbent=lambda seconds: (deep.tree, deep.objective))
    with pytest.raises(ValueError, match="finite and >= 0"):
        solve(Z, card, y, w, K, 0.0, incumbent=lambda seconds: (deep.tree, np.nan))


def test_given_incumbent_is_the_answer_when_the_search_stops_first(binary_data):
    """Cut short, the search answers with the tree given when the search found none better, at
    its objective, under the bound proven."""
    X, y = binary_data("hepatitis")
    X = X.astype(int)
    y = np.unique(y, return_inverse=True)[1]
    card = np.full(X.shape[1], 2)
    w = np.ones(len(y))
    best = solve(X, card, y, w, 2, 0.01)
    res = solve(X, card, y, w, 2, 0.01, max_branches=300,
                incumbent=lambda seconds: (best.tree, best.objective))
    assert res.status == "node_limit" and res.stats["incumbent_given"]
    assert res.tree is best.tree and res.objective == pytest.approx(best.objective, abs=1e-12)
    assert res.lower_bound < res.objective
    alone = solve(X, card, y, w, 2, 0.01, max_branches=300)
    assert alone.objective > best.objective + 0.005  # the search alone had not found it


def test_estimator_asks_for_a_depth_limited_tree_on_numeric_data():
    """On numeric columns a search running long gets the optimal depth-3 tree as incumbent: cut
    short, it is at least that good; with a categorical column (multiway splits) it is not
    asked, a depth-3 tree with binary splits being no tree of that family."""
    import pandas as pd
    from sklearn.datasets import make_classification

    from exactree import OptimalTreeClassifier

    X, y = make_classification(300, 5, n_informative=4, n_redundant=0, flip_y=0.2,
                               random_state=3)
    X = X.round(1)  # some 300 thresholds: 600 literals, so 2000 branches allow a few expansions
    dp = OptimalTreeClassifier(max_depth=3, cost_complexity=0.01).fit(X, y)
    clf = SparseTreeClassifier(penalty=0.01, max_branches=2000).fit(X, y)
    assert clf.status_ == "node_limit" and clf.stats_["incumbent_given"]
    assert clf.objective_ <= dp.objective_ + 1e-12
    err = (clf.predict(X) != y).mean()
    assert err + 0.01 * clf.tree_.n_splits == pytest.approx(clf.objective_, abs=1e-12)
    capped = SparseTreeClassifier(penalty=0.01, max_depth=2, max_branches=2000).fit(X, y)
    assert capped.tree_.max_depth <= 2
    df = pd.DataFrame(X, columns=list("abcde"))
    df["c"] = pd.Categorical(np.arange(len(y)) % 3)
    mixed = SparseTreeClassifier(penalty=0.01, max_branches=2000).fit(df, y)
    assert not mixed.stats_["incumbent_given"]


def test_estimator_asks_only_where_the_depth_limited_tree_helps(monkeypatch):
    """The depth-3 incumbent is built for numeric columns with several thresholds and nothing
    missing: not for 0/1 columns (found early by the search itself), nor with missing values
    (the DP's tree would not send them where the search does), nor with max_depth=0."""
    from exactree.estimators import sparse

    built = []
    make = sparse._depth_limited

    def record(*args, **kwargs):
        built.append(args[-1])
        return make(*args, **kwargs)

    monkeypatch.setattr(sparse, "_depth_limited", record)
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 3)).round(1)
    y = (X[:, 0] + X[:, 1] > 0).astype(np.int64)
    SparseTreeClassifier(penalty=0.01, max_branches=50).fit(X, y)
    assert built == [None]
    SparseTreeClassifier(penalty=0.01, max_depth=2, max_branches=50).fit(X, y)
    assert built == [None, 2]
    SparseTreeClassifier(penalty=0.01, max_branches=50).fit((X > 0).astype(float), y)
    Xm = X.copy()
    Xm[::7, 2] = np.nan
    SparseTreeClassifier(penalty=0.01, max_branches=50).fit(Xm, y)
    SparseTreeClassifier(penalty=0.01, max_depth=0).fit(X, y)
    assert built == [None, 2]


def test_depth_limited_incumbent_deepens_while_it_pays(monkeypatch):
    """The incumbent's DP goes one level deeper while a level improves on the one above: on
    four-way parity depth 4 is perfect, depth 5 adds nothing and ends it; ``max_depth`` caps
    it."""
    from exactree.estimators.sparse import _depth_limited

    fits = record_dp_fits(monkeypatch)
    rng = np.random.default_rng(1)
    X = rng.integers(-3, 4, size=(160, 4)).astype(float)
    y = ((X > 0).sum(axis=1) % 2).astype(np.int64)
    w = np.ones(len(y))
    tree, objective = _depth_limited(X, y, w, 2, 0.001, None)(60.0)
    assert [dp.max_depth for dp in fits] == [3, 4, 5]
    assert tree.max_depth == 4 and objective == pytest.approx(0.001 * tree.n_splits)
    fits.clear()
    tree, objective = _depth_limited(X, y, w, 2, 0.001, 3)(60.0)
    assert [dp.max_depth for dp in fits] == [3] and tree.max_depth == 3 and objective > 0.1


def record_dp_fits(monkeypatch) -> list:
    """Every OptimalTreeClassifier fitted from now on (the estimators, with their
    parameters)."""
    from exactree.estimators import optimal

    fits = []
    fit = optimal.OptimalTreeClassifier.fit

    def record(self, *args, **kwargs):
        fits.append(self)
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(optimal.OptimalTreeClassifier, "fit", record)
    return fits


def test_depth_limited_incumbent_uses_the_ordered_search(monkeypatch):
    """The incumbent's DP is the ordered search: the binary one, which 'auto' picks on columns
    with few thresholds, needs a rows x thresholds matrix and refuses large data outright,
    which would fail a fit that the sparse search itself can run."""
    from exactree.estimators.sparse import _depth_limited

    fits = record_dp_fits(monkeypatch)
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(200, 3)).astype(float)  # few thresholds: 'auto' goes binary
    y = (X[:, 0] + rng.integers(0, 2, 200) > 2).astype(np.int64)
    w = np.ones(200)
    tree, objective = _depth_limited(X, y, w, 2, 0.01, 3)(5.0)
    assert [dp.search for dp in fits] == ["ordered"]
    err = (tree.predict(X) != y).mean()
    assert objective == pytest.approx(err + 0.01 * tree.n_splits)
