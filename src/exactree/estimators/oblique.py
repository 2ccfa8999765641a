"""Optimal proper decision trees with oblique, polynomial, axis-parallel or mixed splits
(He & Little): the scikit-learn estimators, a classifier (fewest misclassifications) and a
regressor (least squared error, mean leaves), one proper-tree search behind both."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..data.encoding import Column
from ..solvers.proper.search import solve_proper
from ..solvers.result import SolveResult
from ._params import Interval, StrOptions
from .base import TreeClassifierBase, TreeRegressorBase, memory_limit_bytes

#: Parameters of the proper-tree search, shared by both estimators.
_SEARCH_CONSTRAINTS: dict = {
    "n_splits": [Interval(Integral, 0, None, closed="left")],
    "rules": [StrOptions({"axis", "hyperplane", "polynomial", "mixed"})],
    "degree": [Interval(Integral, 1, None, closed="left")],
    "max_depth": [Interval(Integral, 0, None, closed="left"), None],
    "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
    "time_limit": [Interval(Real, 0, None, closed="neither"), None],
    "memory_limit": [Interval(Real, 0, None, closed="neither"), None],
    "max_rules": [Interval(Integral, 1, None, closed="left"), None],
    "ties": [StrOptions({"all", "left"})],
    "n_jobs": [Integral, None],
    "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
}


class _ProperSearch:
    """The call into the proper-tree search that both estimators make."""

    _whole_fit_time_limit = True  # the clock starts when fit is entered (see TreeEstimatorBase)

    def _solve_proper(self, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray,
                      columns: list[Column], n_classes: int, objective: str) -> SolveResult:
        self._require_numeric(columns, "split rules are functions of numeric coordinates")
        return solve_proper(
            X, y, sample_weight, n_classes, n_splits=self.n_splits, rules=self.rules,
            degree=self.degree, ties=self.ties, max_depth=self.max_depth,
            min_samples_leaf=self.min_samples_leaf, time_limit=self.time_limit,
            max_rules=self.max_rules, n_jobs=self.n_jobs, objective=objective,
            memory_limit=max(memory_limit_bytes(self.memory_limit) - X.nbytes, 0.0),
            estimator=type(self).__name__, deadline=self._deadline)


class ObliqueTreeClassifier(_ProperSearch, TreeClassifierBase):
    """Provably optimal classification tree with at most ``n_splits`` data-defined split rules.

    Every candidate rule is defined by training points (one for an axis-parallel threshold, ``D``
    for a hyperplane, ``C(D + degree, D) - 1`` for a polynomial hypersurface); the search examines
    every combination of ``k <= n_splits`` rules and, for each, every proper tree they form, and
    returns the tree with the fewest (weighted) misclassifications. The worst-case cost grows
    like ``N**(D * n_splits)`` for hyperplanes (branch and bound usually examines far less):
    meant for small, low-dimensional data. A fit whose estimated work is out of reach (rules
    that do not fit in memory, or weeks of search without ``time_limit``) is refused up front.

    Parameters
    ----------
    n_splits : int, default=2
        Maximum number of split (branch) nodes ``K``.
    rules : {"axis", "hyperplane", "polynomial", "mixed"}, default="hyperplane"
        Rule family; ``"mixed"`` combines axis, hyperplane and (when ``degree >= 2``)
        polynomial rules in one tree.
    degree : int, default=2
        Degree of the polynomial hypersurfaces (``rules="polynomial"`` or ``"mixed"``).
    max_depth : int or None, default=None
        Maximum depth of the tree.
    min_samples_leaf : int, default=1
        Minimum number of training samples in every leaf (so no leaf is empty).
    time_limit : float or None, default=None
        Seconds for the whole fit, counted from the call of ``fit`` (input checks, merging
        the rows into points and rule generation included), after which the search stops
        with the best tree found (status ``"time_limit"``; a fit cut short while generating
        rules searches the rules generated so far; one cut short before its points are merged
        is a single leaf).
    memory_limit : float or None, default=None
        MiB the fit may hold beyond the input. Before anything is built, the merged points
        (about ``40 * n * d + 48 * n`` bytes) and the candidate rules (``M * 8 * (words + 2p
        + 4)`` bytes stored, ``M`` the estimated rule count, ``words = ceil(N / 64)``, ``p``
        the rule's coefficients; generated at up to three times that) are estimated, and a
        fit that would not fit is refused with :class:`~exactree.MemoryLimitError` naming
        the ways out (fewer rows, a smaller ``n_splits``, a smaller rule family). None: half
        of the memory available when ``fit`` starts.
    max_rules : int or None, default=None
        Refuse (with the estimated count) when the family would generate more rules than this;
        None: no cap (the work estimate alone decides).
    ties : {"all", "left"}, default="all"
        Which sides the defining points of a hyperplane/hypersurface take: every assignment
        (covers every linear split of the points) or all on the left (<=) side, the paper's
        construction, which has ``2**D`` times fewer rules but misses splits: its fits report
        ``status_ == "optimal_on_rules"`` (optimal over the generated rules only, lower
        bound 0), never ``"optimal"``. The same status marks fits whose rule set lacks splits
        for other reasons: rules floating point cannot store faithfully in raw coordinates, or
        fewer distinct points than a hyperplane/hypersurface needs.
    class_weight : dict, "balanced" or None, default=None
        Weight of each class, ``{label: weight}`` (labels left out weigh 1); ``"balanced"``
        weighs class ``c`` by ``n_samples / (n_classes * count(c))``. Fitting with it is
        identical to fitting with the matching ``sample_weight`` (scikit-learn's
        ``compute_sample_weight``), multiplied into ``sample_weight`` when both are given.
    verbose : int, default=0
        1 or 2: a summary line on stderr after the fit (status, objective, bound, time). The
        proper-tree search shows no live lines, and Ctrl-C raises ``KeyboardInterrupt`` as usual
        (``time_limit`` bounds a fit instead).

    Attributes
    ----------
    tree_ : exactree.Tree
        The fitted tree: LINEAR nodes for hyperplane/polynomial rules, THRESHOLD nodes for axis
        rules; a row goes left when the rule value is ``<=`` the threshold.
    objective_, lower_bound_, upper_bound_, gap_, status_, stats_, fit_time_
        What the search proved (see :class:`~exactree.estimators.base.TreeClassifierBase`).
    """

    _parameter_constraints: dict = {**_SEARCH_CONSTRAINTS,
                                    "class_weight": [StrOptions({"balanced"}), dict, None]}

    def __init__(self, *, n_splits: int = 2, rules: str = "hyperplane", degree: int = 2,
                 max_depth: int | None = None, min_samples_leaf: int = 1,
                 time_limit: float | None = None, memory_limit: float | None = None,
                 max_rules: int | None = None,
                 ties: str = "all", class_weight: dict | str | None = None,
                 n_jobs: int | None = None, verbose: int = 0) -> None:
        self.n_splits = n_splits
        self.rules = rules
        self.degree = degree
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.time_limit = time_limit
        self.memory_limit = memory_limit
        self.max_rules = max_rules
        self.ties = ties
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _solve(self, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray,
               columns: list[Column]) -> SolveResult:
        return self._solve_proper(X, y, sample_weight, columns, len(self.classes_),
                                  "misclassification")


class ObliqueTreeRegressor(_ProperSearch, TreeRegressorBase):
    """Provably optimal regression tree with at most ``n_splits`` data-defined split rules:
    the least (weighted) training sum of squared errors, each leaf predicting the (weighted)
    mean of its rows.

    The search of :class:`ObliqueTreeClassifier` (He & Little's proper trees over the same
    rule families, by the same branch and bound) with the squared-error objective of the
    paper's eq. 14 (a leaf costs ``sum w (y - mean)**2``, costs add over leaves). Its bounds
    hold for squared error: leaf costs are non-negative and add up, and a set of rows costs at
    least the sum of its parts' squared errors, so rows with identical coordinates, which
    always share a leaf, bound every region that holds them (the equivalent-points bound).
    Costs inside the search are rounded to multiples of ``2**-44`` of the single leaf's
    squared error (so sums are exact and equal trees tie); ``objective_`` is recomputed from
    the fitted leaves. Meant for small, low-dimensional data (see the classifier for how the
    work grows and what is refused up front).

    Parameters
    ----------
    n_splits, rules, degree, max_depth, min_samples_leaf, time_limit, memory_limit, max_rules,
    ties, n_jobs
        As for :class:`ObliqueTreeClassifier`.
    verbose : int, default=0
        1 or 2: a summary line on stderr after the fit (status, objective, bound, time).

    Attributes
    ----------
    tree_ : exactree.Tree
        A regression tree (``tree_.is_regression``): LINEAR nodes for hyperplane/polynomial
        rules, THRESHOLD nodes for axis rules (a row goes left when the rule value is ``<=``
        the threshold); ``tree_.value[:, 0]`` the node means, ``tree_.node_weight`` and
        ``tree_.impurity`` (each node's squared error as a leaf).
    objective_ : float
        The training sum of squared errors (weighted).
    lower_bound_, upper_bound_, gap_ : float
        What the search proved: ``lower_bound_ == objective_`` when ``status_ == "optimal"``;
        otherwise the equivalent-points bound (identical rows share a leaf).
    status_ : str
        ``"optimal"`` only when the search finished over a rule family holding every split of
        its kind; ``"optimal_on_rules"`` or ``"time_limit"`` as for the classifier.
    stats_, fit_time_
        Search counters and seconds.
    """

    _parameter_constraints: dict = dict(_SEARCH_CONSTRAINTS)

    def __init__(self, *, n_splits: int = 2, rules: str = "hyperplane", degree: int = 2,
                 max_depth: int | None = None, min_samples_leaf: int = 1,
                 time_limit: float | None = None, memory_limit: float | None = None,
                 max_rules: int | None = None,
                 ties: str = "all", n_jobs: int | None = None, verbose: int = 0) -> None:
        self.n_splits = n_splits
        self.rules = rules
        self.degree = degree
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.time_limit = time_limit
        self.memory_limit = memory_limit
        self.max_rules = max_rules
        self.ties = ties
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _solve(self, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray,
               columns: list[Column]) -> SolveResult:
        return self._solve_proper(X, y, sample_weight, columns, 1, "squared_error")

    @property
    def feature_importances_(self) -> np.ndarray:
        """Normalised total decrease of the (weighted) training squared error brought by each
        feature's splits: sums to 1, all zeros for a single leaf, exactly 0 for features the
        tree does not test; an oblique/polynomial split shares its decrease equally among the
        features its rule uses. See :meth:`exactree.tree.Tree.feature_importances`."""
        check_is_fitted(self, "tree_")
        return self.tree_.feature_importances()

