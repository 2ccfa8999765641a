"""The scikit-learn bases every exactree estimator derives from.

:class:`TreeEstimatorBase` holds what does not depend on the task: parameter validation, input
checks, categorical columns, the fit pipeline (progress lines, Ctrl-C, the fit report),
``apply`` and the exports. :class:`TreeClassifierBase` adds labels, ``class_weight``,
``predict``/``predict_proba``; :class:`TreeRegressorBase` numeric targets and leaf means.

A subclass declares ``_parameter_constraints``, stores its parameters in a keyword-only
``__init__``, and implements ``_solve``.
"""

from __future__ import annotations

import os
import time
from abc import abstractmethod
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import check_array
from sklearn.utils.validation import check_consistent_length, check_is_fitted, validate_data

from .._compile_note import note_compiling
from ..data import FeatureEncoder, check_sample_weight, encode_labels
from ..data.validation import TimeLimitReached, check_regression_target
from ..data.encoding import Column, _is_dataframe, nonfinite_error
from ..progress import Progress
from ..solvers.result import (INTERRUPTED, OPTIMAL, OPTIMAL_ON_BINARIZED, OPTIMAL_ON_RULES,
                              TIME_LIMIT, SolveResult)
from ..tree import TreeBuilder, export_graphviz, export_text
from ..tree.tree import prefer_compiled
from ..tree.compiled import predict_leaves
from ._params import Interval, InvalidParameterError, StrOptions, validate_params

__all__ = ["Interval", "InvalidParameterError", "StrOptions", "TreeClassifierBase",
           "TreeEstimatorBase", "TreeRegressorBase", "available_memory", "memory_limit_bytes"]

#: Share of the memory available at fit time that ``memory_limit=None`` lets one search use.
MEMORY_SHARE = 0.5
#: Bytes taken as available where the platform does not say (4 GiB).
FALLBACK_MEMORY = 4 * 2**30


def _read_int(path: str) -> int | None:
    """The first integer in a small system file, or None (absent, unreadable, ``max``)."""
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


_AVAILABLE_TTL = 1.0  # seconds a reading of the available memory is reused
_available: list[float] = [-float("inf"), 0.0]  # when it was read, and what


def available_memory() -> float:
    """Bytes of memory this process could take now (read at most once a second: the files
    cost about a tenth of a millisecond, a millisecond fit's worth): on Linux ``MemAvailable`` of
    ``/proc/meminfo`` (free memory plus what the kernel can reclaim), lowered to the headroom
    of the process's cgroup (a container's memory limit less its usage) where one is set;
    elsewhere ``os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")``; else
    :data:`FALLBACK_MEMORY`."""
    now = time.monotonic()
    if now - _available[0] < _AVAILABLE_TTL:
        return _available[1]
    _available[:] = now, _read_available_memory()
    return _available[1]


def _read_available_memory() -> float:
    found = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    found = float(line.split()[1]) * 1024  # kB
                    break
    except (OSError, ValueError, IndexError):
        pass
    if found is None:
        try:
            found = float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (AttributeError, ValueError, OSError):
            found = None
    for limit_path, usage_path in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        limit, usage = _read_int(limit_path), _read_int(usage_path)
        if limit is not None and usage is not None and limit < 2**60:
            headroom = float(max(limit - usage, 0))
            found = headroom if found is None else min(found, headroom)
            break
    return FALLBACK_MEMORY if found is None or found <= 0 else found


def memory_limit_bytes(memory_limit: float | None, workers: int = 1) -> float:
    """An estimator's ``memory_limit`` (MiB) in bytes, an equal share of it for each of
    ``workers`` (a parallel fit's workers each hold a copy of the search); None:
    :data:`MEMORY_SHARE` of :func:`available_memory` at the time of the call (the start of a
    fit)."""
    if memory_limit is None:
        return MEMORY_SHARE * available_memory() / max(workers, 1)
    return float(memory_limit) * 2**20 / max(workers, 1)


def _check_finite_columns(X: Any, allow_nan: bool = False, estimator: str | None = None) -> None:
    """For a dense float matrix: name the column (and row) of the first infinity, or NaN unless
    ``allow_nan``, and say what to do, before scikit-learn's generic ``Input X contains NaN.``"""
    if not isinstance(X, (np.ndarray, list, tuple)):
        return
    try:
        A = np.asarray(X)
    except (TypeError, ValueError):
        return  # ragged input: check_array reports it
    if A.ndim != 2 or A.dtype.kind != "f":
        return
    nonfinite = np.isinf(A).any() if allow_nan else not np.isfinite(A).all()
    if not nonfinite:
        return  # all is well: one pass over the data, then the details only for the error
    finite = np.isfinite(A)
    if allow_nan:
        finite |= np.isnan(A)
    if not finite.all():
        bad = np.flatnonzero(~finite.all(axis=0))[0]
        raise nonfinite_error(A[:, bad], finite[:, bad], f"{bad} (x{bad})", estimator)


def _check_lengths(*arrays: Any) -> None:
    """scikit-learn's ``check_consistent_length``, without its per-argument probes where every
    argument is a NumPy array of one length (the same error otherwise)."""
    if all(type(a) is np.ndarray and a.ndim for a in arrays) and \
            len({a.shape[0] for a in arrays}) == 1:
        return
    check_consistent_length(*arrays)


class TreeEstimatorBase(BaseEstimator):
    """Task-neutral fit plumbing for exactree estimators (see the module docstring).

    Fitted attributes: ``n_features_in_``, ``feature_names_in_`` (for DataFrames with string
    column names), ``tree_`` (:class:`~exactree.tree.Tree`), ``objective_``, ``lower_bound_``,
    ``upper_bound_``, ``gap_``, ``status_``, ``fit_time_``, ``stats_``,
    ``feature_importances_``.

    A subclass whose splits route missing values sets ``_allow_nan = True``: numeric columns
    may then hold NaN (``None``/``pandas.NA`` too) in fit and predict; the others refuse NaN
    with an error naming the column. A subclass implements :meth:`_encode_target` (the target
    as the solver takes it, and the final row weights) and :meth:`_solve`.

    A subclass whose ``time_limit`` covers the whole fit sets ``_whole_fit_time_limit = True``:
    the clock then starts when ``fit`` is entered (input checks and encoding count), ``_solve``
    finds the deadline in ``self._deadline`` (a ``time.perf_counter()`` value, or None) and the
    seconds left in :meth:`_time_left`, and a :class:`~exactree.data.validation.TimeLimitReached`
    raised before any search could run makes the fit a single leaf (:meth:`_leaf_result`) with
    ``status_ == "time_limit"``.
    """

    _parameter_constraints: dict = {}
    _allow_nan = False
    _whole_fit_time_limit = False

    def _validate_params(self) -> None:
        """Check the constructor parameters against ``_parameter_constraints`` (see
        :mod:`exactree.estimators._params`); raises ``InvalidParameterError``."""
        # Only constrained names are checked: reading them directly skips get_params'
        # signature inspection (a tenth of a millisecond per fit).
        params = {name: getattr(self, name) for name in self._parameter_constraints}
        validate_params(self._parameter_constraints, params, type(self).__name__)

    def _check_X(self, X: Any, *, reset: bool) -> Any:
        if _is_dataframe(X):
            if X.shape[0] == 0:
                raise ValueError("X is empty: it has 0 samples")
            if X.shape[1] == 0:
                raise ValueError("X has 0 features")
            checked = X
        else:
            _check_finite_columns(X, self._allow_nan, type(self).__name__)
            if (type(X) is np.ndarray and X.ndim == 2 and X.dtype.kind in "fiu"
                    and min(X.shape) > 0):
                checked = X  # a finite numeric matrix: nothing for check_array to do
            else:
                checked = check_array(X, dtype=None,
                                      ensure_all_finite="allow-nan" if self._allow_nan else True,
                                      ensure_min_samples=1, ensure_min_features=1,
                                      input_name="X")
        if reset and type(X) is np.ndarray:
            # What validate_data does for an array at fit (its data-frame probes cost about
            # a tenth of a millisecond): the feature count, and no feature names.
            self.n_features_in_ = X.shape[1]
            self.__dict__.pop("feature_names_in_", None)
        else:
            validate_data(self, X, skip_check_array=True, reset=reset)  # names and count
        return checked

    def _require_numeric(self, columns: list[Column], why: str) -> None:
        """Raise for categorical columns in an estimator whose splits need numbers."""
        for c in columns:
            if c.is_categorical:
                raise ValueError(
                    f"{type(self).__name__} needs numeric features, but column {c.name!r} is "
                    f"categorical (non-numeric values or a pandas category/string dtype); {why}. "
                    "Encode it numerically (e.g. ordinal codes) first.")

    def _encoder(self) -> FeatureEncoder:
        return FeatureEncoder(categorical=getattr(self, "categorical_features", None),
                              allow_nan=self._allow_nan, estimator=type(self).__name__)

    @abstractmethod
    def _encode_target(self, y: Any, sample_weight: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(target, weights)``: ``y`` checked and encoded for the solver (class indices, or
        float targets), and the row weights (``sample_weight`` checked, times any class
        weight). Sets the target's fitted attributes (``classes_``)."""

    def _fit(self, X: Any, y: Any, sample_weight: Any, solve) -> TreeEstimatorBase:
        """Validate and encode the input, run ``solve`` on it and store its result."""
        entered = time.perf_counter()
        self._validate_params()
        limit = getattr(self, "time_limit", None) if self._whole_fit_time_limit else None
        deadline = None if limit is None else entered + float(limit)
        X = self._check_X(X, reset=True)
        if y is not None:
            _check_lengths(X, y)
        y_index, w = self._encode_target(y, sample_weight)
        _check_lengths(X, y_index)
        self.encoder_ = self._encoder()
        X_encoded = self.encoder_.fit_transform(X)
        # Rows of weight zero change no objective; dropping them keeps them from adding
        # threshold candidates or counting toward leaf sizes.
        keep = w > 0
        note_compiling()  # one line on stderr if the kernels compile (a cold Numba cache)
        start = time.perf_counter()
        self._rows_kept = keep  # for solvers that map row indices given to fit (dyadic cv)
        # Live lines (verbose) and Ctrl-C, for the searches that report (see exactree.progress).
        progress = self._progress = Progress(int(getattr(self, "verbose", 0)), type(self).__name__)
        self._deadline = deadline
        self._fit_workers = None  # n_workers(n_jobs) once read in this fit (_memory_bytes)
        if keep.all():  # no copy of the encoded matrix (its own already)
            X_kept, y_kept, w_kept = np.ascontiguousarray(X_encoded), y_index, w
        else:
            X_kept, y_kept, w_kept = X_encoded[keep], y_index[keep], w[keep]
        del X_encoded
        try:
            result = solve(X_kept, y_kept, w_kept, self.encoder_.columns_)
        except TimeLimitReached:  # the data layer's deadline, before any search could run
            result = self._leaf_result(y_kept, w_kept, self.encoder_.columns_)
        finally:
            del self._rows_kept, self._progress, self._deadline, self._fit_workers
        if progress.interrupted and result.status not in (OPTIMAL, OPTIMAL_ON_BINARIZED,
                                                           OPTIMAL_ON_RULES):
            result.status = INTERRUPTED
        self.fit_time_ = time.perf_counter() - start
        progress.finish(result.status, result.objective, result.lower_bound, result.stats)
        self._store(result)
        return self

    def _search_time(self) -> float | None:
        """The seconds a search may take of what is left of this fit's ``time_limit`` (None:
        no limit); raises TimeLimitReached when none is left."""
        left = self._time_left()
        if left is not None and left <= 0:
            raise TimeLimitReached
        return left

    def _share(self, budgets_left: int) -> float | None:
        """Seconds for the next of ``budgets_left`` searches: an equal share of the time left
        (what a quick one does not use goes to the ones after it); None without a
        ``time_limit``. Raises TimeLimitReached when no time is left."""
        left = self._search_time()
        return None if left is None else left / max(budgets_left, 1)

    def _time_left(self) -> float | None:
        """Seconds left of this fit's ``time_limit`` (at most 0 once it ran out), or None
        without one (see ``_whole_fit_time_limit``)."""
        deadline = getattr(self, "_deadline", None)
        return None if deadline is None else deadline - time.perf_counter()

    def _memory_bytes(self, *held: Any) -> float:
        """The bytes one search may hold under this estimator's ``memory_limit`` (MiB; None:
        see :func:`memory_limit_bytes`), less what the fit holds beside it (``held``: objects
        with ``nbytes``, e.g. the encoded matrix, the binarizer, the ordered features): all of
        it, or an equal share for each of the ``n_jobs`` workers of a parallel fit (depth 3 or
        more, see :func:`~exactree.solvers.dp.parallel.solve_dp`). Never negative."""
        workers = 1
        if getattr(self, "max_depth", 0) >= 3 and getattr(self, "n_jobs", None) != 1:
            from ..solvers._workers import n_workers

            workers = n_workers(self.n_jobs)
            self._fit_workers = workers  # the fit's reading of n_jobs (see _fit)
        total = memory_limit_bytes(getattr(self, "memory_limit", None))
        return max(total - sum(a.nbytes for a in held), 0.0) / workers

    def _announce(self, plan: Any) -> None:
        """Keep the planner's choice (``plan_``, ``search_``) and say it (one line at
        ``verbose`` >= 1)."""
        self.plan_ = plan
        self.search_ = plan.search
        self._progress.note(f"search {plan.search!r}: {plan.reason}")

    def _leaf_result(self, y: np.ndarray, w: np.ndarray, columns: list[Column]) -> SolveResult:
        """The fit when ``time_limit`` ran out before any search: a single leaf (see
        :class:`TreeClassifierBase` and :class:`TreeRegressorBase`), lower bound 0."""
        raise NotImplementedError

    def _name_tree(self, tree: Any) -> None:
        """Put the target's names on a solver's tree (classifiers: the class names)."""

    def _store(self, result: SolveResult) -> None:
        tree = result.tree
        columns = self.encoder_.columns_
        tree.feature_names = tuple([c.name for c in columns])
        self._name_tree(tree)
        tree.categories = tuple([c.categories for c in columns])
        self.tree_ = tree
        self.objective_ = result.objective
        self.lower_bound_ = result.lower_bound
        self.upper_bound_ = result.upper_bound
        self.gap_ = result.gap
        self.status_ = result.status
        self.stats_ = result.stats

    @abstractmethod
    def _solve(self, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray,
               columns: list[Column]) -> SolveResult:
        """Solve on the encoded matrix ``X`` (categorical columns as codes) and target ``y``."""

    def _encode(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "tree_")
        return self.encoder_.transform(self._check_X(X, reset=False))

    def _leaves(self, X: Any) -> np.ndarray:
        """Leaf ids of the encoded rows: the compiled kernel only where it pays (see
        :func:`~exactree.tree.tree.prefer_compiled`), traversal otherwise."""
        method = "compiled" if prefer_compiled(self.tree_, len(X)) else "traversal"
        if method == "compiled":
            note_compiling()
        return predict_leaves(self.tree_, X, method=method)

    def apply(self, X: Any) -> np.ndarray:
        """Index (in ``tree_``) of the leaf every row reaches."""
        return self._leaves(self._encode(X))

    def export_text(self) -> str:
        """The fitted tree as indented text with feature (and class) names."""
        check_is_fitted(self, "tree_")
        return export_text(self.tree_)

    def export_graphviz(self) -> str:
        """The fitted tree in Graphviz DOT."""
        check_is_fitted(self, "tree_")
        return export_graphviz(self.tree_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        tags.input_tags.allow_nan = self._allow_nan
        return tags


class TreeClassifierBase(ClassifierMixin, TreeEstimatorBase):
    """Shared fit/predict plumbing for exactree classifiers.

    Fitted attributes: those of :class:`TreeEstimatorBase`, and ``classes_``.

    A subclass with a ``class_weight`` parameter (None, ``"balanced"`` or a dict of label ->
    weight) gets it applied here: fitting with it is identical to fitting with the matching
    ``sample_weight`` (multiplied into any ``sample_weight`` given).
    """

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> TreeClassifierBase:
        """Fit the tree to ``X`` (array or DataFrame) and labels ``y``."""
        return self._fit(X, y, sample_weight, self._solve)

    def _encode_target(self, y: Any, sample_weight: Any) -> tuple[np.ndarray, np.ndarray]:
        self.classes_, y_index = encode_labels(y)
        w = check_sample_weight(sample_weight, len(y_index))
        return y_index, self._class_weighted(w, y_index)

    def _leaf_result(self, y: np.ndarray, w: np.ndarray, columns: list[Column]) -> SolveResult:
        """A leaf predicting the class of most weight; objective: the weight of the others."""
        counts = np.bincount(y, weights=w, minlength=len(self.classes_))
        builder = TreeBuilder(len(columns), len(self.classes_))
        tree = builder.build(builder.leaf(counts, int(np.argmax(counts))), check=False)
        return SolveResult(tree, float(counts.sum() - counts.max()), 0.0, TIME_LIMIT)

    def _name_tree(self, tree: Any) -> None:
        if self.classes_.dtype.kind != "O":  # tolist gives each label's Python value at once
            tree.class_names = tuple(self.classes_.tolist())
        else:
            tree.class_names = tuple(c.item() if isinstance(c, np.generic) else c
                                     for c in self.classes_)

    def _class_weighted(self, w: np.ndarray, y_index: np.ndarray) -> np.ndarray:
        """``w`` times the weight of each row's class under ``class_weight`` (scikit-learn's
        :func:`~sklearn.utils.class_weight.compute_sample_weight`: ``"balanced"`` gives class
        ``c`` the weight ``n_samples / (n_classes * count(c))``, counted over the rows given to
        fit; a dict maps labels to weights, missing labels weigh 1)."""
        class_weight = getattr(self, "class_weight", None)
        if class_weight is None:
            return w
        from sklearn.utils.class_weight import compute_sample_weight

        if isinstance(class_weight, dict):
            labels = [c.item() if isinstance(c, np.generic) else c for c in self.classes_]
            unknown = [k for k in class_weight if k not in labels]
            if unknown and len(class_weight) - len(unknown) < len(labels):
                raise ValueError(f"class_weight names labels not in y: {unknown!r} (classes: "
                                 f"{labels!r})")
            class_weight = {i: class_weight[c] for i, c in enumerate(labels) if c in class_weight}
        factor = compute_sample_weight(class_weight, y_index)
        return check_sample_weight(w * factor, len(w))

    @property
    def feature_importances_(self) -> np.ndarray:
        """Normalised total decrease of the (weighted) training misclassification brought by
        each feature's splits: sums to 1, all zeros for a single leaf, exactly 0 for features
        the tree does not test. An oblique/polynomial split shares its decrease equally among
        the features its rule uses. See :meth:`exactree.tree.Tree.feature_importances`."""
        check_is_fitted(self, "tree_")
        return self.tree_.feature_importances()

    def predict(self, X: Any) -> np.ndarray:
        """Predicted class label of every row."""
        leaves = self._leaves(self._encode(X))  # checks it is fitted first
        return self.classes_[self.tree_.label[leaves]]

    def predict_proba(self, X: Any) -> np.ndarray:
        """Weighted training class frequencies of each row's leaf, columns in ``classes_`` order."""
        leaves = self._leaves(self._encode(X))
        return self.tree_.leaf_proba()[leaves]


class TreeRegressorBase(RegressorMixin, TreeEstimatorBase):
    """Shared fit/predict plumbing for exactree regressors: numeric targets (checked by
    :func:`~exactree.data.validation.check_regression_target`), leaves predicting the
    (weighted) mean of their training targets, ``score`` is R²."""

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> TreeRegressorBase:
        """Fit the tree to ``X`` (array or DataFrame) and numeric targets ``y``."""
        return self._fit(X, y, sample_weight, self._solve)

    def _encode_target(self, y: Any, sample_weight: Any) -> tuple[np.ndarray, np.ndarray]:
        y = check_regression_target(y)
        return y, check_sample_weight(sample_weight, len(y))

    def _leaf_result(self, y: np.ndarray, w: np.ndarray, columns: list[Column]) -> SolveResult:
        """A leaf predicting the weighted mean; objective: its weighted squared error."""
        total = float(w.sum())
        mean = float(w @ y) / total
        sse = float(w @ (y - mean) ** 2)
        builder = TreeBuilder(len(columns), 1, regression=True)
        tree = builder.build(builder.leaf([mean, total, sse], 0), check=False)
        return SolveResult(tree, sse, 0.0, TIME_LIMIT)

    def predict(self, X: Any) -> np.ndarray:
        """The mean of the training targets in each row's leaf."""
        leaves = self._leaves(self._encode(X))  # checks it is fitted first
        return self.tree_.value[leaves, 0].copy()
