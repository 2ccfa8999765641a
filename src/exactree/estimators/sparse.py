"""``SparseTreeClassifier``: optimal sparse trees with native multiway categorical splits
(BRANCHES)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from numbers import Integral, Real
from typing import Any

import numpy as np

from ..data import Binarizer
from ..data.binarize import LE, MISSING_TRUE
from ..data.encoding import Column, _is_dataframe
from ..data.validation import check_deadline
from ..limits import MemoryLimitError, check_memory
from ..solvers.branches import FeatureMap, solve
from ..solvers.branches.search import Codes, memory_need
from ..solvers.result import SolveResult
from ..tree.tree import LEAF, THRESHOLD, Tree
from ._params import Interval, StrOptions
from .base import TreeClassifierBase, available_memory


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
        Seconds, counted from the start of ``fit`` (the set-up included: a fit whose set-up
        takes it all is a single leaf with ``status_ == "time_limit"``). The search is
        anytime: at the limit it keeps the best tree found, with ``status_ == "time_limit"``
        and a proven ``lower_bound_``. On numeric columns with
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
        MiB the fit may take beyond its input (at most the memory available): the codes, the
        literal bitsets (a bit per row and threshold, two per threshold), the search's
        buffers and its state. The set-up is estimated from the data's shape before anything
        is allocated: a fit whose set-up and least search state do not fit is refused with
        :class:`~exactree.limits.MemoryLimitError`, which names the ways out (numeric
        columns of many distinct values on many rows need the most). The search state takes
        the rest; ``status_ == "memory_limit"`` when it is full (small penalties on data
        with many distinct values can need a lot).
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
    _whole_fit_time_limit = True  # the clock starts when fit is entered (set-up included)
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
        deadline = self._deadline  # time_limit counts from fit's start (_whole_fit_time_limit)
        cat = np.array([j for j, c in enumerate(columns)
                        if c.is_categorical and len(c.categories) >= 2], np.int64)
        card = [np.array([len(columns[j].categories) for j in cat], np.int64)]
        source = [cat]
        thresholds = [np.full(len(cat), np.nan)]
        seen = np.zeros(len(columns), bool)
        wide = False  # a column with several thresholds
        values = [X[:, cat]]
        column = [np.arange(len(cat), dtype=np.int64)]
        index = [np.full(len(cat), -1, np.int64)]
        if any(not c.is_categorical for c in columns):
            binarizer = Binarizer(thresholds="exact").fit(X, y, columns, sample_weight,
                                                          deadline=deadline)
            seen = binarizer.missing_columns_
            le = np.flatnonzero(binarizer.op_ == LE)
            col = binarizer.column_[le]
            wide = len(le) > 0 and np.bincount(col).max() > 1
            card.append(np.full(len(le), 2, np.int64))
            # "x <= t or missing" goes to a second copy of column j (index j + n_columns)
            # so the tree the solver builds tells it from "x <= t"; see _fold_missing.
            source.append(col + len(columns) * (binarizer.missing_[le] == MISSING_TRUE))
            thresholds.append(binarizer.value_[le])
            # at most two runs of thresholds a column (see _threshold_ranks)
            n_cols = len(cat) + len(np.unique(col)) * (2 if seen.any() else 1)
            self._check_memory(len(y), len(le), n_cols, np.concatenate(card))
            ranks, at, where = _threshold_ranks(X, binarizer, le, deadline)
            values.append(ranks)
            column.append(at + len(cat))
            index.append(where)
        card = np.concatenate(card)
        top = max([int(v.max()) for v in values if v.size] + [0])
        codes = Codes(np.concatenate([v.astype(np.uint8 if top <= 255 else np.int32, copy=False)
                                      for v in values], axis=1),
                      np.concatenate(column), np.concatenate(index))
        del values
        n_sources = len(columns) * (2 if seen.any() else 1)
        fmap = FeatureMap(np.concatenate(source).astype(np.int64),
                          np.concatenate(thresholds).astype(np.float64), n_sources)
        # Every column numeric, none missing: an optimal tree of depth <= 3 (or deeper) is a
        # tree of the search's family, found fast by the ordered search, and a good incumbent
        # where the search finds good trees late: on many thresholds (on 0/1 columns it finds
        # them early, and the incumbent would only cost time).
        plain = (wide and self.max_depth != 0 and not seen.any()
                 and not any(c.is_categorical for c in columns))
        incumbent = None
        if plain:
            fixed, state, _ = memory_need(len(y), len(card), int(card.sum()),
                                          codes.values.shape[1], len(self.classes_),
                                          codes.values.itemsize, int(card.max()))
            spare = self._memory_limit() - fixed - state  # what the search leaves the DP
            incumbent = _depth_limited(X, y, sample_weight, len(self.classes_),
                                       float(self.penalty), self.max_depth,
                                       memory_limit=max(spare, 1 << 20) / 2**20)
        time_limit = self._search_time()  # TimeLimitReached when none is left: a leaf
        result = solve(codes, card, y, sample_weight, len(self.classes_), float(self.penalty),
                       max_depth=self.max_depth, time_limit=time_limit,
                       max_branches=self.max_branches,
                       memory_limit=int(self._memory_limit()) >> 20, feature_map=fmap,
                       progress=self._progress, incumbent=incumbent,
                       memory_ways_out=self._ways_out(None))
        if seen.any():
            result.tree = _fold_missing(result.tree, len(columns), seen)
        return result

    def _memory_limit(self) -> int:
        """Bytes this fit may take beyond its input: ``memory_limit``, or what the machine has
        available where that is less."""
        return int(min(float(self.memory_limit) * 2**20, available_memory()))

    def _ways_out(self, need_mib: float | None) -> list[str]:
        more = ("a larger memory_limit" if need_mib is None or need_mib * 2**20 >
                available_memory() else f"memory_limit={int(math.ceil(need_mib))} or more")
        return [more, "fewer rows (a subsample)",
                "fewer distinct values in the numeric columns (each distinct value adds a "
                "threshold: round them, or bin them with "
                "sklearn.preprocessing.KBinsDiscretizer)"]

    def _check_memory(self, n: int, n_thresholds: int, n_cols: int, card: np.ndarray) -> None:
        """Refuse, before the codes and bitsets are built, a fit whose set-up and least search
        state would pass the memory this fit may use (see :func:`memory_need`): ``n`` rows,
        ``n_cols`` value columns, solver features of ``card`` categories."""
        q = len(card)
        fixed, _, least = memory_need(n, q, int(card.sum()), n_cols, len(self.classes_), 4,
                                      int(card.max()) if q else 1)
        need = fixed + least
        check_memory(need, self._memory_limit(),
                     f"a BRANCHES search on {n} rows and {n_thresholds} thresholds "
                     f"({q} solver features)", self._ways_out(need / 2**20),
                     type(self).__name__)


def _threshold_ranks(X: np.ndarray, binarizer: Binarizer, features: np.ndarray,
                     deadline: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The threshold tests ``features`` of ``binarizer`` on ``X`` as ranks (see
    :class:`~exactree.solvers.branches.search.Codes`): ``(ranks, column, index)``, one column of
    ``ranks`` (rows x runs, int32) for each run of tests of one column and one missing side,
    each row's count of the run's thresholds below its value (a missing value below all of
    them where the test holds for it, above all elsewhere); feature ``features[i]`` is
    ``x <= t`` (its test true, code 0) exactly where ``ranks[:, column[i]] <= index[i]``. No
    rows x thresholds matrix: one searchsorted a run. ``deadline``: see
    :func:`~exactree.data.validation.check_deadline`, read between runs."""
    column = binarizer.column_[features]
    side = binarizer.missing_[features]
    key = column * 3 + side
    runs = np.unique(key)
    ranks = np.empty((len(X), len(runs)), np.int32)
    at = np.empty(len(features), np.int64)
    where = np.empty(len(features), np.int64)
    for k, r in enumerate(runs.tolist()):
        check_deadline(deadline)
        mine = np.flatnonzero(key == r)
        j = int(column[mine[0]])
        value = binarizer.value_[features[mine]]
        order = np.argsort(value, kind="stable")
        x = X[:, j]
        rank = np.searchsorted(value[order], x, side="left")  # thresholds below x
        if binarizer.missing_columns_[j]:
            missing = np.isnan(x)
            rank[missing] = 0 if side[mine[0]] == MISSING_TRUE else len(mine)
        ranks[:, k] = rank
        at[mine] = k
        where[mine[order]] = np.arange(len(mine))
    return ranks, at, where


def _depth_limited(X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int, penalty: float,
                   max_depth: int | None, memory_limit: float | None = None
                   ) -> Callable[[float], tuple[Tree, float] | None]:
    """An ``incumbent`` for :func:`~exactree.solvers.branches.solve`: the best of the optimal
    trees of depth <= 3, 4, ... (at most ``max_depth``) under the same objective
    (:class:`~exactree.OptimalTreeClassifier`'s ordered search, within the seconds given; its
    best tree found if cut short) and its objective, counted here on the data. It deepens while
    a level improves on the one above and the seconds last: a few levels where deeper trees
    pay, one more than needed where they do not. ``X``: numeric columns, no missing values.
    ``memory_limit``: MiB the ordered search may take (what the BRANCHES search leaves it); a
    level it refuses for memory ends the deepening."""

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
            try:
                dp = OptimalTreeClassifier(max_depth=depth, cost_complexity=penalty,
                                           time_limit=left, search="ordered", n_jobs=1,
                                           memory_limit=memory_limit).fit(X, y, w)
            except MemoryLimitError:
                break
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
