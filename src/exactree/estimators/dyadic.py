"""Optimal dyadic decision trees with the complete regularisation path (Hush & Porter 2010)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..data import check_sample_weight
from ..data.encoding import Column
from ..data.validation import TimeLimitReached
from ..limits import check_memory
from ..objectives import CostSensitive
from ..progress import new_board
from ..solvers.dyadic import SEARCHES, build_tree, compute_path, prepare, solve
from ..solvers.dyadic.path import PathResult
from ..solvers.dyadic.search import MAX_K, DyadicProblem, DyadicSolution, prepare_bytes
from ..solvers.result import OPTIMAL, TIME_LIMIT, SolveResult
from ..tree import Tree, TreeBuilder
from ._params import Interval, StrOptions
from .base import TreeClassifierBase


@dataclass
class DyadicPathEntry:
    """One distinct solution of the penalty path.

    ``tree`` is optimal in ``T_k`` for every ``penalty`` in ``(penalty_low, penalty_high]``
    (Lemma 3; ``penalty_high`` is ``inf`` for the single leaf). ``error`` is the training error
    as a fraction of the total sample weight.
    """

    tree: Tree
    error: float
    n_leaves: int
    penalty_low: float
    penalty_high: float


class DyadicTreeClassifier(TreeClassifierBase):
    """Optimal dyadic decision tree: minimises ``error + penalty * leaves`` exactly over ``T_k``.

    Features are scaled to the bounding box of the training data; every split cuts a dyadic
    interval at its midpoint, coordinates in any order, at most ``k_i`` splits along feature
    ``i`` on any root-to-leaf path (the class ``T_k`` of Hush & Porter). The tree is stored as an
    ordinary :class:`~exactree.tree.Tree` with thresholds in the original feature units.

    Optimality is *relative to the dyadic class* ``T_k``: ``status_ == "optimal"`` and
    ``lower_bound_ == objective_`` mean no tree of ``T_k`` has a smaller penalised error, not that
    no tree with arbitrary thresholds does.

    Missing values (NaN) are an error: a dyadic cell needs every coordinate.
    :class:`~exactree.OptimalTreeClassifier` and :class:`~exactree.SparseTreeClassifier` route
    them natively.

    Parameters
    ----------
    penalty : float > 0 or None, default=None
        ``lambda``: cost of one leaf, with the error measured as a fraction of the total sample
        weight. ``None`` uses the rule of thumb of Blanchard et al. ``2 / n`` (``n`` = sum of
        sample weights, the number of samples for unit weights). The rule was derived for two
        classes; for more classes we keep ``2 / n`` (every leaf must pay for itself with two
        samples' worth of error); pick a better value on the path with :meth:`fit_path` and
        :meth:`select_by_validation`.
    max_splits_per_dim : "auto", int or array-like of int, default="auto"
        ``k``. ``"auto"`` is the paper's section 5: the smallest uniform ``k0`` whose grid has
        only zero-loss cells, reduced per feature while the partition of the samples stays the
        same. Constant features are never split.
    loss : array-like of shape (n_classes, n_classes) or None, default=None
        Cost-sensitive loss, ``loss[true, predicted]`` in ``classes_`` order (see
        :class:`exactree.objectives.CostSensitive`); ``None`` is 0/1 misclassification.
    compress : bool, default=True
        Replace duplicate points, then all points of one finest dyadic cell, by one surrogate
        (section 5). The optimum is unchanged; only the run time is.
    lookahead : bool, default=True
        Lemma 1 look-ahead pruning (off: the dynamic-programming-equivalent full search).
    max_rectangles : int, default=10_000_000
        Refuse (:class:`~exactree.MemoryLimitError` naming the estimate) problems whose
        rectangle bound ``min(n_hat * prod(k_i + 1), prod(2**(k_i+1) - 1))`` exceeds this.
    memory_limit : float or None, default=None
        MiB the fit may hold beyond the input: before preparing, the prepared points (about
        ``64 * n * d + 32 * n * n_classes + 64 * n`` bytes), then the search's table (up to
        240 bytes per rectangle of the bound above, its peak while the table grows) are
        estimated, and a fit that would not fit is refused with
        :class:`~exactree.MemoryLimitError` naming the ways out. None: half of the memory
        available when ``fit`` starts.
    path_search : {"hull", "adaptive", "adaptive_heuristic"}, default="hull"
        Penalty search of :meth:`fit_path` (see :mod:`exactree.solvers.dyadic.path`). The
        heuristic search skips solutions now and then (about 1 problem in 10 measured); its
        path is completed by the exact hull test before it is used, so every search gives the
        same, exact path (``path_stats_["skipped_by_heuristic"]`` counts what it had missed).
    cv : int, cross-validation splitter or None, default=None
        Choose the penalty by cross-validation over the path (as CART's pruning does): one
        representative penalty per interval of the full-data path, scored by the (weighted,
        cost-sensitive) validation error of each fold's own optimal tree; ties go to the larger
        penalty. ``penalty`` must then be None. Sets ``cv_penalties_`` and ``cv_errors_``.
    class_weight : dict, "balanced" or None, default=None
        Weight of each class, ``{label: weight}`` (labels left out weigh 1); ``"balanced"``
        weighs class ``c`` by ``n_samples / (n_classes * count(c))``. Fitting with it is
        identical to fitting with the matching ``sample_weight`` (scikit-learn's
        ``compute_sample_weight``), multiplied into ``sample_weight`` when both are given.
    time_limit : float > 0 or None, default=None
        Seconds for the whole fit, counted from the call of ``fit``: input checks, the
        preparation (the automatic ``k`` reads the clock before every grid it tries), the
        searches and the tree. Past it the search stops with the best tree it has found
        (each open rectangle keeps the best split it finished, a rectangle not yet reached
        is a leaf), ``status_ == "time_limit"`` and a proven ``lower_bound_`` (every tree has
        at least one leaf and at least the least error any tree of ``T_k`` can reach, as far
        as the finished searches proved it); when it runs out before any search, a single
        leaf. :meth:`fit_path` and ``cv`` share the limit: the path search stops at the first
        search the clock cuts (``path_stats_["complete"]`` false; the tree for ``penalty_`` is
        then the best of the trees found), and ``cv`` uses the folds whose paths finished in
        time (``stats_["cv_folds"]``; none: the penalty ``2 / n``), status ``"time_limit"``
        when any was left out.
    verbose : int, default=0
        1 or 2: a summary line on stderr after the fit (status, objective, time), and while a
        search runs about one line a second with the rectangles it has visited (from one
        second on at ``verbose=1``). Ctrl-C during a search stops it as ``time_limit`` does
        (status ``"interrupted"``); during the preparation it raises ``KeyboardInterrupt``.

    Attributes
    ----------
    k_ : ndarray of shape (n_features,)
        Splits allowed per feature (all 0 when ``time_limit`` ran out before ``k`` was known).
    bounding_box_ : ndarray of shape (2, n_features)
        Training minimum and maximum of each feature (the unit hypercube; NaN when
        ``time_limit`` ran out before the preparation finished).
    penalty_ : float
        The penalty used.
    path_ : list of DyadicPathEntry
        After :meth:`fit_path`: every distinct solution, smallest tree first.
    """

    _parameter_constraints: dict = {
        "penalty": [None, Interval(Real, 0, None, closed="neither")],
        "max_splits_per_dim": [StrOptions({"auto"}), Interval(Integral, 0, MAX_K, closed="both"),
                               "array-like"],
        "loss": [None, "array-like"],
        "compress": ["boolean"],
        "lookahead": ["boolean"],
        "max_rectangles": [Interval(Integral, 1, None, closed="left")],
        "memory_limit": [Interval(Real, 0, None, closed="neither"), None],
        "path_search": [StrOptions(set(SEARCHES))],
        "cv": [None, "cv_object"],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
    }
    _whole_fit_time_limit = True  # the clock starts when fit is entered (see TreeEstimatorBase)

    def __init__(self, *, penalty: float | None = None, max_splits_per_dim: Any = "auto",
                 loss: Any = None, compress: bool = True, lookahead: bool = True,
                 max_rectangles: int = 10_000_000, memory_limit: float | None = None,
                 path_search: str = "hull", cv: Any = None,
                 class_weight: dict | str | None = None, time_limit: float | None = None,
                 verbose: int = 0) -> None:
        self.penalty = penalty
        self.max_splits_per_dim = max_splits_per_dim
        self.loss = loss
        self.compress = compress
        self.lookahead = lookahead
        self.max_rectangles = max_rectangles
        self.memory_limit = memory_limit
        self.path_search = path_search
        self.cv = cv
        self.class_weight = class_weight
        self.time_limit = time_limit
        self.verbose = verbose

    # ------------------------------------------------------------------ fitting
    def _problem(self, X: np.ndarray, y: np.ndarray, w: np.ndarray,
                 columns: list[Column]) -> DyadicProblem:
        self._require_numeric(columns, "dyadic splits cut numeric ranges")
        K = len(self.classes_)
        loss = None
        if self.loss is not None:
            loss = CostSensitive(np.asarray(self.loss, np.float64)).loss
            if loss.shape != (K, K):
                raise ValueError(f"loss must have shape ({K}, {K}) for the {K} classes in y, got "
                                 f"{loss.shape}")
        problem = prepare(X, y, w, K, loss=loss, max_splits=self._k_param(X),
                          compress=self.compress, max_rectangles=self.max_rectangles,
                          memory_bytes=self._check_prepare(X, K), deadline=self._deadline)
        self.k_ = problem.k.copy()
        self.bounding_box_ = np.vstack([problem.lower, problem.upper])
        self.penalty_ = float(self.penalty) if self.penalty is not None else 2.0 / problem.total_weight
        return problem

    def _check_prepare(self, X: np.ndarray, n_classes: int) -> float:
        """The bytes the search may hold (``memory_limit`` or half the memory available, less
        the input ``X``), after refusing (:class:`~exactree.MemoryLimitError`) a problem whose
        preparation alone (:func:`~exactree.solvers.dyadic.search.prepare_bytes`) would not
        fit; prepare then refuses a search table that would not."""
        budget = max(self._memory_bytes(X), 0.0)
        n, d = X.shape
        check_memory(prepare_bytes(n, d, n_classes), budget,
                     f"preparing the dyadic problem of {n:,} rows x {d} features "
                     "(sorted copies, distinct points, cell codes)",
                     ["fewer rows", "fewer features", "a larger memory_limit (MiB)"],
                     type(self).__name__)
        return budget

    def _k_param(self, X: np.ndarray) -> Any:
        k = self.max_splits_per_dim
        if not isinstance(k, str | Integral):
            k = np.asarray(k)
            if k.shape != (X.shape[1],) or not np.issubdtype(k.dtype, np.integer):
                raise ValueError(f"max_splits_per_dim must be 'auto', an int or {X.shape[1]} ints "
                                 f"(one per feature), got {self.max_splits_per_dim!r}")
        return k

    def _result(self, problem: DyadicProblem, sol: DyadicSolution, tree: Tree, extra: dict,
                proven: bool = True, known: list[DyadicSolution] = ()) -> SolveResult:
        """The fit of ``sol`` at ``penalty_``: optimal when ``proven`` and ``sol`` finished,
        else ``"time_limit"`` with the bound of :meth:`_lower_bound` over the finished
        searches ``known`` (``sol`` among them when it finished)."""
        error = problem.to_fraction(sol.err)
        objective = error + self.penalty_ * tree.n_leaves
        stats = dict(problem.stats, k=problem.k.tolist(), error=error, n_leaves=tree.n_leaves,
                     rectangles_visited=sol.visited, **extra)
        if proven and sol.complete:
            return SolveResult(tree=tree, objective=objective, lower_bound=objective,
                               status=OPTIMAL, stats=stats)
        done = [s for s in [*known, sol] if s.complete]
        lower = min(self._lower_bound(problem, done), objective)
        return SolveResult(tree=tree, objective=objective, lower_bound=lower,
                           status=TIME_LIMIT, stats=stats)

    def _lower_bound(self, problem: DyadicProblem, done: list[DyadicSolution]) -> float:
        """What every tree of ``T_k`` costs at least at ``penalty_`` (fit units): one leaf and
        no error below the translation's ``offset``; a finished search at ``lam = 0`` (the least
        error) raises the error part, one at a penalty up to ``penalty_`` its optimum (the
        optimal value never decreases with the penalty)."""
        lam = problem.to_internal(self.penalty_)
        best = lam  # internal units: error >= 0, at least one leaf
        for s in done:
            if s.lam == 0.0:
                best = max(best, s.err + lam)
            elif s.lam <= lam:
                best = max(best, s.err + s.lam * s.leaves)
        return problem.to_fraction(best)

    def _board(self) -> np.ndarray:
        """A progress board with this fit's deadline (inf without ``time_limit``)."""
        return new_board(math.inf if self._deadline is None else self._deadline)

    def _solve(self, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray,
               columns: list[Column]) -> SolveResult:
        for stale in ("path_", "path_stats_", "cv_penalties_", "cv_errors_", "selected_index_",
                      "validation_errors_", "k_", "bounding_box_"):
            self.__dict__.pop(stale, None)
        if self.cv is not None and self.penalty is not None:
            raise ValueError("set either penalty or cv, not both: cv chooses the penalty")
        problem = self._problem(X, y, sample_weight, columns)
        if self.cv is not None:
            return self._solve_cv(problem, X, y, sample_weight)
        if getattr(self, "_path_mode", False):
            return self._solve_path(problem)
        self._search_time()  # TimeLimitReached (a leaf) when the preparation took it all
        sol = solve(problem, problem.to_internal(self.penalty_), prune=self.lookahead,
                    board=self._board(), progress=self._progress)
        return self._result(problem, sol, build_tree(problem, sol), {})

    def _path(self, problem: DyadicProblem) -> PathResult:
        self._search_time()  # TimeLimitReached (a leaf) when the preparation took it all
        return compute_path(problem, search=self.path_search, prune=self.lookahead,
                            board=self._board(), progress=self._progress)

    def _entries(self, problem: DyadicProblem, res: PathResult) -> list[DyadicPathEntry]:
        W = problem.total_weight
        return [DyadicPathEntry(tree=build_tree(problem, s), error=problem.to_fraction(s.err),
                                n_leaves=s.leaves, penalty_low=lo / W, penalty_high=hi / W)
                for s, lo, hi in zip(res.solutions, res.lam_low, res.lam_high)]

    def _solve_path(self, problem: DyadicProblem) -> SolveResult:
        res = self._path(problem)
        W = problem.total_weight
        entries = self._entries(problem, res)
        self.path_ = entries
        self.path_stats_ = {"evaluations": res.evaluations, "penalties": [x / W for x in res.lams],
                            "rectangles_visited": res.visited, "exact": res.exact,
                            "complete": res.complete, "skipped_by_heuristic": res.skipped}
        if not res.complete:
            return self._best_found(problem, res, {"path_evaluations": res.evaluations})
        # The solution for penalty_: the entry whose interval holds it.
        lam = problem.to_internal(self.penalty_)
        idx = next((i for i, (lo, hi) in enumerate(zip(res.lam_low, res.lam_high))
                    if lo < lam <= hi), len(entries) - 1)
        sol, tree = self._at_penalty(problem, res, idx, entries[idx].tree)
        return self._result(problem, sol, tree,
                            {"path_evaluations": res.evaluations, "path_index": idx})

    def _best_found(self, problem: DyadicProblem, res: PathResult, extra: dict) -> SolveResult:
        """A path search the clock stopped: the best, at ``penalty_``, of its finished
        solutions and the stopped search's tree; ``"time_limit"``."""
        lam = problem.to_internal(self.penalty_)
        trees = [*res.solutions, *([res.cut] if res.cut is not None else [])]
        sol = min(trees, key=lambda s: (s.err + lam * s.leaves, -s.leaves))
        return self._result(problem, sol, build_tree(problem, sol), extra, proven=False,
                            known=res.solutions)

    def _at_penalty(self, problem: DyadicProblem, res, idx: int, tree: Tree):
        """The path's solution for ``penalty_``. compute_path certifies the heuristic path (it
        may skip solutions, and "optimal" must be proven), so the path is exact; an inexact
        one would be solved afresh at ``penalty_``."""
        if res.exact:
            return res.solutions[idx], tree
        sol = solve(problem, problem.to_internal(self.penalty_), prune=self.lookahead,
                    board=self._board(), progress=self._progress)
        return sol, build_tree(problem, sol)

    def _leaf_result(self, y: np.ndarray, w: np.ndarray, columns: list[Column]) -> SolveResult:
        """The single leaf (``time_limit`` ran out before any search) of least (cost-sensitive)
        error; objective ``error + penalty_``, proven bound ``penalty_`` (one leaf at least)."""
        total = float(w.sum())
        self.penalty_ = float(self.penalty) if self.penalty is not None else 2.0 / total
        counts = np.bincount(y, weights=w, minlength=len(self.classes_))
        costs = counts @ self._loss_matrix()
        label = int(np.argmin(costs))
        builder = TreeBuilder(len(columns), len(self.classes_))
        tree = builder.build(builder.leaf(counts, label), check=False)
        d = len(columns)
        if getattr(self, "_path_mode", False) or self.cv is not None:
            self.__dict__.setdefault("path_", [])  # no search ran: an empty, unproven path
            self.__dict__.setdefault("path_stats_", {"evaluations": 0, "exact": False,
                                                     "complete": False})
        self.__dict__.setdefault("k_", np.zeros(d, np.int64))
        self.__dict__.setdefault("bounding_box_", np.full((2, d), np.nan))
        objective = float(costs[label]) / total + self.penalty_
        return SolveResult(tree, objective, min(self.penalty_, objective), TIME_LIMIT,
                           stats={"error": float(costs[label]) / total, "n_leaves": 1})

    def _loss_matrix(self) -> np.ndarray:
        K = len(self.classes_)
        return (1.0 - np.eye(K)) if self.loss is None else np.asarray(self.loss, np.float64)

    def _solve_cv(self, problem: DyadicProblem, X: np.ndarray, y: np.ndarray,
                  w: np.ndarray) -> SolveResult:
        from sklearn.model_selection import check_cv

        full = self._path(problem)
        Wt = problem.total_weight
        if not full.complete:  # out of time on the full data: no candidate penalties
            self.path_ = self._entries(problem, full)
            self.path_stats_ = {"evaluations": full.evaluations, "exact": full.exact,
                                "complete": False, "skipped_by_heuristic": full.skipped}
            return self._best_found(problem, full, {"path_evaluations": full.evaluations,
                                                    "cv_folds": 0})
        problem_bytes = sum(a.nbytes for a in (problem.cells, problem.W, problem.C))
        # One penalty inside every interval (low, high] of the full-data path.
        cands = []
        for lo, hi in zip(full.lam_low, full.lam_high):
            lo, hi = lo / Wt, hi / Wt
            cands.append(2 * lo if not math.isfinite(hi) else (hi / 2 if lo == 0 else math.sqrt(lo * hi)))
        cands = np.asarray(cands)
        L = self._loss_matrix()
        errs = np.zeros(len(cands))
        splitter = check_cv(self.cv, y, classifier=True)
        K = len(self.classes_)
        if hasattr(self.cv, "split") or isinstance(self.cv, Integral):
            splits = list(splitter.split(X, y))
        else:
            # Explicit (train, test) index pairs refer to the rows given to fit, but rows of
            # zero weight do not reach _solve: map the indices onto the kept rows.
            kept = getattr(self, "_rows_kept", None)
            if kept is None or len(kept) == len(y):
                kept = np.ones(len(y), bool)
            pos = np.full(len(kept), -1)
            pos[kept] = np.arange(int(kept.sum()))
            splits = [(pos[tr][pos[tr] >= 0], pos[va][pos[va] >= 0])
                      for tr, va in splitter.split(None, None)]
        # Folds in turn under the fit's deadline: the first one it cuts ends cross-validation,
        # and the folds finished choose the penalty (sharing the time out equally would leave
        # every fold a little short of what it needs).
        folds_done = 0
        for tr, va in splits:
            if not np.any(w[tr] > 0):
                folds_done += 1
                continue
            if self._progress.interrupted:
                break
            try:
                self._search_time()
                X_tr = X[tr]  # (one copy of the fold's rows)
                p = prepare(X_tr, y[tr], w[tr], K, loss=None if self.loss is None else L,
                            max_splits=self._k_param(X), compress=self.compress,
                            max_rectangles=self.max_rectangles,
                            memory_bytes=self._check_prepare(X_tr, K) - problem_bytes,
                            deadline=self._deadline)
            except TimeLimitReached:
                break
            res = compute_path(p, search=self.path_search, prune=self.lookahead,
                               board=self._board(), progress=self._progress)
            if not res.complete:
                break
            folds_done += 1
            preds = {}
            for c_i, c in enumerate(cands):
                lam = c * p.total_weight
                j = next((i for i, (lo, hi) in enumerate(zip(res.lam_low, res.lam_high))
                          if lo < lam <= hi), len(res.solutions) - 1)
                if j not in preds:
                    preds[j] = build_tree(p, res.solutions[j]).predict(X[va])
                errs[c_i] += float(np.sum(w[va] * L[y[va], preds[j]]))
        errs /= w.sum()
        entries = self._entries(problem, full)
        self.path_ = entries
        self.path_stats_ = {"evaluations": full.evaluations, "exact": full.exact,
                            "complete": True, "skipped_by_heuristic": full.skipped}
        if folds_done == 0:  # out of time before any fold: the default penalty on the path
            lam = problem.to_internal(self.penalty_)
            best = next((i for i, (lo, hi) in enumerate(zip(full.lam_low, full.lam_high))
                         if lo < lam <= hi), len(entries) - 1)
        else:
            best = int(np.flatnonzero(errs <= errs.min() + 1e-12)[0])  # largest penalty on ties
            self.cv_penalties_, self.cv_errors_ = cands, errs
            self.penalty_ = float(cands[best])
        sol, tree = self._at_penalty(problem, full, best, entries[best].tree)
        result = self._result(problem, sol, tree, {"path_evaluations": full.evaluations,
                                                   "path_index": best, "cv_folds": folds_done})
        if folds_done < len(splits):  # the tree is optimal at penalty_, cross-validation cut
            result.status = TIME_LIMIT
        return result

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> DyadicTreeClassifier:
        """Fit the optimal dyadic tree for ``penalty`` (or the one ``cv`` picks on the path)."""
        # Rows of weight zero are dropped before _solve; the base keeps the mask in
        # _rows_kept while solving, so explicit cv index pairs stay aligned.
        return super().fit(X, y, sample_weight)

    def fit_path(self, X: Any, y: Any, sample_weight: Any = None) -> list[DyadicPathEntry]:
        """Fit every distinct optimal tree over all penalties; return them, smallest first.

        The estimator itself ends up fitted with the path tree for ``penalty`` (``penalty_``)
        and keeps the whole path in ``path_``. ``time_limit`` covers the whole path: a path
        it cuts keeps the solutions found (``path_stats_["complete"]`` and ``["exact"]``
        false) and the fit the best of them for ``penalty_``, ``status_ == "time_limit"``.
        """
        self._path_mode = True
        try:
            self.fit(X, y, sample_weight)
        finally:
            del self._path_mode
        return self.path_

    def _store(self, result: SolveResult) -> None:
        super()._store(result)
        for e in getattr(self, "path_", ()):  # path trees get the same names as tree_
            e.tree.feature_names = self.tree_.feature_names
            e.tree.class_names = self.tree_.class_names
            e.tree.categories = self.tree_.categories

    def select_by_validation(self, X: Any, y: Any, sample_weight: Any = None) -> DyadicTreeClassifier:
        """Keep the path tree with the least (weighted, cost-sensitive) error on ``(X, y)``.

        Ties go to the smaller tree. Sets ``tree_``, ``selected_index_``,
        ``validation_errors_`` and ``penalty_`` (the middle of the chosen tree's interval).
        The tree is optimal for ``penalty_`` because the path is exact (a heuristic path is
        certified before it is stored, see :func:`~exactree.solvers.dyadic.compute_path`).
        """
        check_is_fitted(self, "path_")
        if not self.path_stats_.get("exact", True):  # a path time_limit cut; keep the claim honest
            raise ValueError("the stored path is not exact (complete: "
                             f"{self.path_stats_.get('complete', True)}): refit with an exact "
                             "path search and, if time_limit cut it, a larger time_limit")
        Xe = self._encode(X)
        y = np.asarray(y)
        if y.ndim != 1 or len(y) != len(Xe):
            raise ValueError("y must be 1-D with one label per row of X")
        pos = np.searchsorted(self.classes_, y)
        pos = np.clip(pos, 0, len(self.classes_) - 1)
        if np.any(self.classes_[pos] != y):
            raise ValueError("y holds labels not seen in fit")
        w = check_sample_weight(sample_weight, len(y))
        L = self._loss_matrix()
        errs = np.array([float(np.sum(w * L[pos, e.tree.predict(Xe)])) / w.sum() for e in self.path_])
        idx = int(np.flatnonzero(errs <= errs.min() + 1e-12)[0])
        e = self.path_[idx]
        self.validation_errors_ = errs
        self.selected_index_ = idx
        hi = e.penalty_high if math.isfinite(e.penalty_high) else 2 * e.penalty_low + 1.0
        self.penalty_ = 0.5 * (e.penalty_low + hi)
        self.tree_ = e.tree
        self.objective_ = e.error + self.penalty_ * e.n_leaves
        self.lower_bound_ = self.upper_bound_ = self.objective_
        self.gap_ = 0.0
        self.status_ = OPTIMAL
        return self
