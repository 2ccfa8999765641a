"""``SparseTreeClassifier``: optimal sparse trees with native multiway categorical splits
(BRANCHES)."""

from __future__ import annotations

import time
from collections.abc import Callable
from numbers import Integral, Real
from typing import Any

import numpy as np

from ..data import Binarizer
from ..data.binarize import LE, MISSING_TRUE
from ..data.encoding import Column, _is_dataframe
from ..solvers.branches import FeatureMap, solve
from ..solvers.branches.search import code_dtype
from ..solvers.result import SolveResult
from ..tree.tree import LEAF, THRESHOLD, Tree
from ._params import Interval, StrOptions
from .base import TreeClassifierBase


class SparseTreeClassifier(TreeClassifierBase):
    """Decision tree minimising ``misclassification rate + penalty * (number of splits)``.

    Solved to proven optimality by BRANCHES (Chaouki et al.): best-first search over branches
    with purification bounds, Bellman updates and memoisation. Categorical columns (pandas
    ``category``/string columns, or integer-coded columns listed in ``categorical_features``)
    split natively into one child per category; other numeric columns are split by thresholds
    ``x <= t`` between consecutive distinct values, which keeps the optimum over the raw values.
    Missing values (NaN, ``None``, ``pandas.NA``) in numeric columns are routed natively, each
    split on such a column sending them to the side the optimisation chose, as in
    :class:`~exactree.OptimalTreeClassifier`.

    What is proven: the tree is optimal among the trees whose splits are thresholds on numeric
    columns and multiway splits (one child per category) on categorical columns. A split that
    groups categories in one child, an equality test ``column == value`` or a subset split such
    as ``{a, b} | {c, d}``, is not among them; one counts as a single split where a multiway
    split must repeat the grouped child's subtree under every category in it, so such a tree
    can score better. :class:`~exactree.OptimalTreeClassifier` proves the opposite family on
    categorical columns: ``column == value`` tests, no multiway or subset splits.

    Parameters
    ----------
    penalty : float in [0, 1], default=0.01
        Cost of one split, the paper's lambda. The objective is the weighted misclassification
        rate plus ``penalty`` per split; ``1 - objective`` is the paper's regularised accuracy.
    max_depth : int or None, default=None
        Optional limit on the number of splits along any root-to-leaf path.
    time_limit : float or None, default=None
        Seconds. The search is anytime: at the limit it keeps the best tree found, with
        ``status_ == "time_limit"`` and a proven ``lower_bound_``. On numeric columns with
        several thresholds, where best-first search finds good trees late, a search not done
        with its first iteration (the root's expansion) also takes the best of the optimal
        trees of depth <= 3, 4, ... (:class:`~exactree.OptimalTreeClassifier`'s ordered search,
        one level deeper while a level improves, in a tenth of the time left, at most 10 s,
        2 s without a limit; its best tree if cut short) as its incumbent when that is
        better; ``stats_["incumbent_given"]`` says whether it was. The first such fit in a
        process also loads (or, on a cold cache, compiles) that search's kernels.
    max_branches : int or None, default=None
        Optional cap on stored branches; ``status_ == "node_limit"`` when reached.
    memory_limit : int, default=2048
        MiB the search state may take; ``status_ == "memory_limit"`` when reached (small
        penalties on data with many distinct values can need a lot).
    categorical_features : sequence of int or str, or None, default=None
        Numeric columns holding integer category codes to split natively (one child per
        distinct value). Non-integer values in such a column are an error.
    class_weight : dict, "balanced" or None, default=None
        Weight of each class, ``{label: weight}`` (labels left out weigh 1); ``"balanced"``
        weighs class ``c`` by ``n_samples / (n_classes * count(c))``. Fitting with it is
        identical to fitting with the matching ``sample_weight`` (scikit-learn's
        ``compute_sample_weight``), multiplied into ``sample_weight`` when both are given.
    verbose : int, default=0
        0: silent. 1: a fit running over a second prints a line on stderr about once a second
        (elapsed time, nodes explored, best objective, proven lower bound, gap) and a summary at
        the end. 2: lines from the start, and the search's counters in the summary. At any
        verbosity Ctrl-C stops the search and keeps the best tree found, with status
        ``"interrupted"`` and the bound proven so far.

    Attributes
    ----------
    tree_, objective_, lower_bound_, upper_bound_, gap_, status_, fit_time_, stats_
        See :class:`~exactree.estimators.base.TreeClassifierBase`. ``stats_`` holds
        ``iterations``, ``expansions``, ``branches`` (memo size), ``n_splits`` and
        ``accuracy_minus_penalty`` (``1 - objective_``).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0, 1], [1, 1], [2, 0], [0, 0], [1, 0], [2, 1]])
    >>> y = np.array([1, 0, 1, 1, 0, 1])
    >>> clf = SparseTreeClassifier(penalty=0.05, categorical_features=[0]).fit(X, y)
    >>> clf.status_, clf.tree_.n_splits, round(float(clf.objective_), 6)
    ('optimal', 1, 0.05)
    """

    _allow_nan = True  # numeric columns' missing values go where the optimisation says
    _parameter_constraints: dict = {
        "penalty": [Interval(Real, 0, 1, closed="both")],
        "max_depth": [Interval(Integral, 0, None, closed="left"), None],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "max_branches": [Interval(Integral, 1, None, closed="left"), None],
        "memory_limit": [Interval(Integral, 1, None, closed="left")],
        "categorical_features": ["array-like", None],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
    }

    def __init__(self, *, penalty: float = 0.01, max_depth: int | None = None,
                 time_limit: float | None = None, max_branches: int | None = None,
                 memory_limit: int = 2048, categorical_features: Any = None,
                 class_weight: dict | str | None = None, verbose: int = 0) -> None:
        self.penalty = penalty
        self.max_depth = max_depth
        self.time_limit = time_limit
        self.max_branches = max_branches
        self.memory_limit = memory_limit
        self.categorical_features = categorical_features
        self.class_weight = class_weight
        self.verbose = verbose

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> SparseTreeClassifier:
        """Fit the optimal sparse tree to ``X`` (array or DataFrame) and labels ``y``."""
        self._validate_params()
        _check_integer_codes(X, self.categorical_features)
        return super().fit(X, y, sample_weight)

    def _solve(self, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray,
               columns: list[Column]) -> SolveResult:
        cat = [j for j, c in enumerate(columns) if c.is_categorical and len(c.categories) >= 2]
        card = [len(columns[j].categories) for j in cat]
        source = list(cat)
        thresholds = [np.nan] * len(cat)
        seen = np.zeros(len(columns), bool)
        wide = False  # a column with several thresholds
        le = np.zeros(0, np.int64)
        if any(not c.is_categorical for c in columns):
            binarizer = Binarizer(thresholds="exact").fit(X, y, columns, sample_weight)
            seen = binarizer.missing_columns_
            le = np.flatnonzero(binarizer.op_ == LE)
            column = binarizer.column_[le]
            wide = len(le) > 0 and np.bincount(column).max() > 1
            card += [2] * len(le)
            # "x <= t or missing" goes to a second copy of column j (index j + n_columns)
            # so the tree the solver builds tells it from "x <= t"; see _fold_missing.
            source += (column + len(columns) * (binarizer.missing_[le] == MISSING_TRUE)).tolist()
            thresholds += binarizer.value_[le].tolist()
        Z = np.empty((len(y), len(cat) + len(le)), code_dtype(card))
        Z[:, : len(cat)] = X[:, cat]
        if len(le):
            _threshold_codes(X, binarizer, le, out=Z[:, len(cat):])
        n_sources = len(columns) * (2 if seen.any() else 1)
        fmap = FeatureMap(np.array(source, np.int64), np.array(thresholds, np.float64), n_sources)
        # Every column numeric, none missing: an optimal tree of depth <= 3 (or deeper) is a
        # tree of the search's family, found fast by the ordered search, and a good incumbent
        # where the search finds good trees late: on many thresholds (on 0/1 columns it finds
        # them early, and the incumbent would only cost time).
        plain = (wide and self.max_depth != 0 and not seen.any()
                 and not any(c.is_categorical for c in columns))
        result = solve(Z, np.array(card, np.int64), y, sample_weight, len(self.classes_),
                       float(self.penalty), max_depth=self.max_depth, time_limit=self.time_limit,
                       max_branches=self.max_branches, memory_limit=self.memory_limit,
                       feature_map=fmap, progress=self._progress,
                       incumbent=_depth_limited(X, y, sample_weight, len(self.classes_),
                                                float(self.penalty), self.max_depth)
                       if plain else None)
        if seen.any():
            result.tree = _fold_missing(result.tree, len(columns), seen)
        return result


def _threshold_codes(X: np.ndarray, binarizer: Binarizer, features: np.ndarray,
                     out: np.ndarray) -> None:
    """Write the codes of the threshold tests ``features`` of ``binarizer`` on ``X`` into
    ``out`` (rows x features): 0 where the test (``x <= t``, a missing value as the test says)
    holds, the left child, 1 elsewhere. A column without missing values is coded from each
    row's count of thresholds below its value, one integer comparison a cell: on many
    thresholds far faster than comparing gathered copies of the column."""
    column = binarizer.column_[features]
    for j in np.unique(column).tolist():
        at = np.flatnonzero(column == j)
        if binarizer.missing_columns_[j]:
            out[:, at] = ~binarizer.transform(X, features=features[at])
            continue
        value = binarizer.value_[features[at]]
        order = np.argsort(value, kind="stable")
        below = np.searchsorted(value[order], X[:, j], side="left")  # thresholds below x
        rank = np.arange(len(at))[None, :]
        dest = at[order]
        if np.all(np.diff(dest) == 1):  # the usual case: written in place
            np.less(rank, below[:, None], out=out[:, dest[0] : dest[-1] + 1])
        else:
            out[:, dest] = rank < below[:, None]


def _depth_limited(X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int, penalty: float,
                   max_depth: int | None) -> Callable[[float], tuple[Tree, float] | None]:
    """An ``incumbent`` for :func:`~exactree.solvers.branches.solve`: the best of the optimal
    trees of depth <= 3, 4, ... (at most ``max_depth``) under the same objective
    (:class:`~exactree.OptimalTreeClassifier`'s ordered search, within the seconds given; its
    best tree found if cut short) and its objective, counted here on the data. It deepens while
    a level improves on the one above and the seconds last: a few levels where deeper trees
    pay, one more than needed where they do not. ``X``: numeric columns, no missing values."""

    def incumbent(seconds: float) -> tuple[Tree, float] | None:
        from .optimal import OptimalTreeClassifier

        end = time.perf_counter() + seconds
        best = None
        depth = 3 if max_depth is None else min(3, max_depth)
        while max_depth is None or depth <= max_depth:
            left = end - time.perf_counter()
            if left <= 0:
                break
            # the ordered search: no rows x thresholds matrix, whatever the data's size
            dp = OptimalTreeClassifier(max_depth=depth, cost_complexity=penalty, time_limit=left,
                                       search="ordered", n_jobs=1).fit(X, y, w)
            if not np.array_equal(dp.classes_, np.arange(n_classes)):
                return None  # a class without weight: labels would not match
            wrong = dp.tree_.predict(X) != y
            objective = float(w[wrong].sum() / w.sum() + penalty * dp.tree_.n_splits)
            improved = best is None or objective < best[1] - 1e-12
            if improved:
                best = (dp.tree_, objective)
            if dp.status_ != "optimal" or not improved:
                break
            depth += 1
        return best

    return incumbent


def _fold_missing(tree: Tree, n_columns: int, seen: np.ndarray) -> Tree:
    """The solver's tree over the column copies of :meth:`SparseTreeClassifier._solve` as a tree
    over the ``n_columns`` columns: a split on copy ``j + n_columns`` is ``x_j <= t or missing``
    (missing values left), one on ``j`` itself sends them right where column ``j`` had missing
    values at fit time (``seen``) and to the heavier child elsewhere."""
    split = tree.kind != LEAF
    feature = tree.feature.copy()
    copy = split & (feature >= n_columns)
    feature[copy] -= n_columns
    missing_left = tree.missing_left.copy()  # the heavier child
    routed = (tree.kind == THRESHOLD) & np.r_[seen, seen][np.maximum(tree.feature, 0)]
    missing_left[routed] = copy[routed]
    return Tree(kind=tree.kind, feature=feature, threshold=tree.threshold,
                child_ptr=tree.child_ptr, child=tree.child, value=tree.value, label=tree.label,
                n_features=n_columns, missing_left=missing_left, missing_seen=seen, check=False)


def _check_integer_codes(X: Any, declared: Any) -> None:
    """A numeric column declared categorical must hold integer codes (1.5 is no category)."""
    if declared is None:
        return
    if _is_dataframe(X):
        names = [str(c) for c in X.columns]
        for c in declared:
            if isinstance(c, str) and c in names:
                values = X[X.columns[names.index(c)]].to_numpy()
            elif not isinstance(c, str) and isinstance(c, Integral) and 0 <= c < len(names):
                values = X.iloc[:, int(c)].to_numpy()
            else:
                continue  # the encoder reports unknown columns
            _check_values(values, c)
        return
    A = np.asarray(X)
    if A.ndim != 2 or A.dtype.kind not in "biuf":
        return
    for c in declared:
        if isinstance(c, Integral) and not isinstance(c, bool) and 0 <= c < A.shape[1]:
            _check_values(A[:, int(c)], c)


def _check_values(values: np.ndarray, column: Any) -> None:
    if values.dtype.kind != "f":
        return
    finite = values[np.isfinite(values)]
    bad = finite[finite != np.floor(finite)]
    if len(bad):
        raise ValueError(f"categorical column {column!r} holds the non-integer value "
                         f"{float(bad[0])!r}; declared categorical columns need integer category "
                         "codes")
