"""The one tree type every exactree solver returns.

A :class:`Tree` lives in the *original* feature space: its split nodes test raw column values
(a threshold, a category, or a polynomial rule over several columns), so binarisation stays an
internal detail of the solvers. All structure is held in flat NumPy arrays, nodes in preorder
with the root at index 0.

Node kinds
----------
``LEAF``
    No children.
``THRESHOLD``
    Two children ``[left, right]``: left when ``x[feature] <= threshold``. A missing value (NaN)
    goes left where ``missing_left`` is true, else right.
``CATEGORICAL``
    One child slot per category code of ``feature``: row goes to ``children[code]``. Codes are the
    integers ``0..C-1`` of the encoded column (see ``categories``). Several slots may point at the
    same child, so a binary test ``colour == red`` is a categorical node with two distinct children.
``LINEAR``
    Two children ``[left, right]``: left when ``sum_j coef_j * prod_f x[f] ** powers[j, f] <=
    threshold``. Hyperplanes have one-hot power rows; polynomial surfaces use higher powers.

Missing values
--------------
Only THRESHOLD nodes route missing values (NaN); one reaching a CATEGORICAL or LINEAR node is
an error. ``missing_left`` holds each THRESHOLD node's side. A tree fitted on data with missing
values in a column has the side of every split on that column chosen by the fit
(``missing_seen[feature]`` is true there, and the exports show the side); elsewhere a missing
value goes to the child that more training weight reached (the left one on a tie), which is
the default :class:`TreeBuilder` and the constructor give.

Regression trees
----------------
A regression tree (``Tree.is_regression``) has ``value`` of shape ``(n_nodes, 1)``: the
weighted mean of the training targets reaching each node (its prediction), plus ``node_weight``
(the training weight reaching each node) and ``impurity`` (its weighted sum of squared errors
taken as a leaf). ``label`` is all zeros and there are no class names. Classification trees
leave both arrays ``None``.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .compiled import CompiledTree

LEAF, THRESHOLD, CATEGORICAL, LINEAR = 0, 1, 2, 3
#: Threshold of the split ``x is not missing`` (no finite value exceeds it; missing goes right).
NOT_MISSING = float(np.finfo(np.float64).max)
KIND_NAMES = ("leaf", "threshold", "categorical", "linear")


def feature_matrix(X: Any, n_features: int, *, feature_names: Sequence[str] | None = None,
                   categories: Sequence[Sequence[Any] | None] | None = None) -> np.ndarray:
    """``X`` as a float64 matrix with ``n_features`` columns (NaN for a missing value, never an
    infinity), or a ValueError.

    A numeric array is the *encoded* matrix (a categorical column holds category codes
    ``0..C-1``). Raw input, a pandas DataFrame or an array of strings/objects, is encoded the
    way the estimator encodes it: a column with ``categories`` becomes the code of each value
    (an unknown value is an error), the others are read as numbers (``None`` and ``pandas.NA``
    as NaN); DataFrame columns are taken by name when they hold every name of
    ``feature_names``, else by position.
    """
    if _is_raw(X):
        X = _encode_raw(X, n_features, feature_names, categories)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != n_features:
        raise ValueError(f"X must be 2-D with {n_features} columns, got shape {X.shape}")
    if np.isinf(X).any():
        raise ValueError("X contains infinity")
    return X


def _is_raw(X: Any) -> bool:
    """A DataFrame, or an array holding strings or Python objects (not yet encoded)."""
    if hasattr(X, "dtypes") and hasattr(X, "columns") and hasattr(X, "iloc"):
        return True
    if isinstance(X, np.ndarray):
        return X.dtype.kind in "OUS"
    if isinstance(X, (list, tuple)):
        try:
            return np.asarray(X).dtype.kind in "OUS"
        except (TypeError, ValueError):
            return False
    return False


def _encode_raw(X: Any, n_features: int, feature_names: Sequence[str] | None,
                categories: Sequence[Sequence[Any] | None] | None) -> np.ndarray:
    """Raw input to the encoded float matrix (see :func:`feature_matrix`)."""
    if hasattr(X, "iloc"):
        names = [str(c) for c in X.columns]
        if feature_names is not None and names != list(feature_names) and \
                set(feature_names) <= set(names) and len(set(names)) == len(names):
            X = X[[X.columns[names.index(f)] for f in feature_names]]
        columns = [X.iloc[:, j].to_numpy(dtype=object) for j in range(X.shape[1])]
    else:
        A = np.asarray(X, dtype=object)
        if A.ndim != 2:
            raise ValueError(f"X must be 2-D with {n_features} columns, got shape {A.shape}")
        columns = [A[:, j] for j in range(A.shape[1])]
    if len(columns) != n_features:
        raise ValueError(f"X must be 2-D with {n_features} columns, got {len(columns)} columns")
    out = np.empty((len(columns[0]) if columns else 0, n_features), np.float64)
    for j, values in enumerate(columns):
        name = feature_names[j] if feature_names is not None else f"x{j}"
        cats = categories[j] if categories is not None else None
        if cats is not None:
            index = {c: i for i, c in enumerate(cats)}
            codes = [index.get(v, -1) for v in values.tolist()]
            if -1 in codes:
                bad = values[codes.index(-1)]
                raise ValueError(f"column {name!r} holds category {bad!r} not seen in fit")
            out[:, j] = codes
        else:
            try:
                out[:, j] = _numbers(values)
            except (TypeError, ValueError) as e:
                raise ValueError(f"column {name!r} is numeric in the tree but holds "
                                 f"non-numbers ({e})") from None
    return out


def _numbers(values: np.ndarray) -> np.ndarray:
    """An object column of numbers as float64, ``None`` and ``pandas.NA`` as NaN."""
    try:
        return values.astype(np.float64)
    except (TypeError, ValueError):
        blank = np.array([v is None or type(v).__name__ == "NAType" for v in values.tolist()], bool)
        if not blank.any():
            raise
        out = np.full(len(values), np.nan)
        out[~blank] = values[~blank].astype(np.float64)
        return out


def default_missing_left(kind: np.ndarray, child_ptr: np.ndarray, child: np.ndarray,
                         value: np.ndarray, node_weight: np.ndarray | None = None) -> np.ndarray:
    """Per node: whether a missing value goes left, for splits whose column had no missing
    values at fit time: to the child more training weight reached (left on a tie), as
    scikit-learn's trees do. Meaningful for THRESHOLD nodes only (false elsewhere). The weight
    of a node is its ``value`` total, or ``node_weight`` when given (regression trees)."""
    out = np.zeros(len(kind), np.bool_)
    binary = np.flatnonzero(kind == THRESHOLD)
    if len(binary):
        weight = value.sum(axis=1) if node_weight is None else node_weight
        left, right = child[child_ptr[binary]], child[child_ptr[binary] + 1]
        out[binary] = weight[left] >= weight[right]
    return out


def weighted_terms(terms: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """``terms @ coef`` added term by term in a fixed order. A BLAS product may fuse or order
    the additions differently with the number of rows, which moves a point lying exactly on a
    rule's threshold to the other side in one call and not in another."""
    out = np.zeros(terms.shape[0])
    for k in range(len(coef)):
        out += terms[:, k] * coef[k]
    return out


class Tree:
    """A fitted decision tree held in flat arrays (see the module docstring for the node kinds).

    Build one with :class:`TreeBuilder` rather than by hand. Arrays, all indexed by node id:

    - ``kind`` (int8), ``feature`` (int64, -1 when the node tests no single column),
      ``threshold`` (float64, NaN for leaves and categorical nodes);
    - ``child_ptr`` (n_nodes + 1) and ``child``: node ``i``'s children are
      ``child[child_ptr[i]:child_ptr[i + 1]]``;
    - ``rule_ptr`` (n_nodes + 1), ``rule_coef`` (n_terms) and ``rule_powers`` (n_terms x
      n_features): the polynomial of a LINEAR node;
    - ``value`` (n_nodes x n_classes): weighted training class totals reaching each node;
    - ``label`` (int64): the class index each node predicts (used at leaves);
    - ``missing_left`` (bool): whether a missing value goes left at a THRESHOLD node (default:
      to the heavier child, see the module docstring).

    ``missing_seen`` (bool, one per feature): the column held missing values at fit time, so
    the sides of its splits were chosen by the fit (default: none).

    Regression trees (see the module docstring) also hold ``node_weight`` and ``impurity``
    (float64, one per node); ``value`` is then the ``(n_nodes, 1)`` leaf means.
    """

    def __init__(
        self,
        *,
        kind: np.ndarray,
        feature: np.ndarray,
        threshold: np.ndarray,
        child_ptr: np.ndarray,
        child: np.ndarray,
        value: np.ndarray,
        label: np.ndarray,
        n_features: int,
        rule_ptr: np.ndarray | None = None,
        rule_coef: np.ndarray | None = None,
        rule_powers: np.ndarray | None = None,
        feature_names: Sequence[str] | None = None,
        class_names: Sequence[Any] | None = None,
        categories: Sequence[Sequence[Any] | None] | None = None,
        missing_left: np.ndarray | None = None,
        missing_seen: Sequence[bool] | None = None,
        node_weight: np.ndarray | None = None,
        impurity: np.ndarray | None = None,
        check: bool = True,
    ) -> None:
        n = len(kind)
        self.kind = np.asarray(kind, dtype=np.int8)
        self.feature = np.asarray(feature, dtype=np.int64)
        self.threshold = np.asarray(threshold, dtype=np.float64)
        self.child_ptr = np.asarray(child_ptr, dtype=np.int64)
        self.child = np.asarray(child, dtype=np.int64)
        self.value = np.asarray(value, dtype=np.float64)
        self.label = np.asarray(label, dtype=np.int64)
        self.n_features = int(n_features)
        self.rule_ptr = np.zeros(n + 1, np.int64) if rule_ptr is None else np.asarray(rule_ptr, np.int64)
        self.rule_coef = np.zeros(0) if rule_coef is None else np.asarray(rule_coef, np.float64)
        self.rule_powers = (
            np.zeros((0, self.n_features), np.int64)
            if rule_powers is None
            else np.asarray(rule_powers, np.int64).reshape(-1, self.n_features)
        )
        self.feature_names = None if feature_names is None else tuple(str(f) for f in feature_names)
        self.class_names = None if class_names is None else tuple(class_names)
        self.categories = None if categories is None else tuple(
            None if c is None else tuple(c) for c in categories
        )
        self.missing_left = None if missing_left is None else np.asarray(missing_left, np.bool_)
        self.missing_seen = (np.zeros(self.n_features, np.bool_) if missing_seen is None
                             else np.asarray(missing_seen, dtype=np.bool_).reshape(-1))
        if (node_weight is None) != (impurity is None):
            raise ValueError("a regression tree needs both node_weight and impurity")
        self.node_weight = None if node_weight is None else np.asarray(node_weight, np.float64)
        self.impurity = None if impurity is None else np.asarray(impurity, np.float64)
        if check:  # off only for trees built from a solver's output, valid by construction
            self._check()
        if self.missing_left is None:  # after the check: it reads the children
            self.missing_left = default_missing_left(self.kind, self.child_ptr, self.child,
                                                     self.value, self.node_weight)

    # ------------------------------------------------------------------ structure
    def _check(self) -> None:
        n = len(self.kind)
        if n == 0:
            raise ValueError("a tree needs at least one node")
        for name in ("feature", "threshold", "label", "missing_left"):
            if getattr(self, name) is not None and getattr(self, name).shape != (n,):
                raise ValueError(f"Tree.{name} must have shape ({n},)")
        if self.value.ndim != 2 or self.value.shape[0] != n:
            raise ValueError(f"Tree.value must have shape ({n}, n_classes)")
        if self.child_ptr.shape != (n + 1,) or self.child_ptr[0] != 0 or self.child_ptr[-1] != len(self.child):
            raise ValueError("Tree.child_ptr is inconsistent with Tree.child")
        if self.rule_ptr.shape != (n + 1,) or self.rule_ptr[-1] != len(self.rule_coef):
            raise ValueError("Tree.rule_ptr is inconsistent with Tree.rule_coef")
        if self.rule_powers.shape[0] != len(self.rule_coef):
            raise ValueError("Tree.rule_powers needs one row per rule term")
        if np.any((self.kind < LEAF) | (self.kind > LINEAR)):
            raise ValueError("Tree.kind holds an unknown node kind")
        n_children = np.diff(self.child_ptr)
        if np.any((self.kind == LEAF) != (n_children == 0)):
            raise ValueError("exactly the leaves must have no children")
        binary = (self.kind == THRESHOLD) | (self.kind == LINEAR)
        if np.any(n_children[binary] != 2):
            raise ValueError("threshold and linear nodes need exactly two children")
        left, right = self.child[self.child_ptr[:-1][binary]], self.child[self.child_ptr[:-1][binary] + 1]
        if np.any(left == right):
            raise ValueError("the two children of a threshold or linear node must differ")
        single = (self.kind == THRESHOLD) | (self.kind == CATEGORICAL)
        if np.any((self.feature[single] < 0) | (self.feature[single] >= self.n_features)):
            raise ValueError("a split node tests a feature index out of range")
        if np.any((self.label < 0) | (self.label >= self.value.shape[1])):
            raise ValueError("Tree.label holds a class index out of range")
        if self.missing_seen.shape != (self.n_features,):
            raise ValueError(f"Tree.missing_seen needs {self.n_features} entries")
        if self.is_regression:
            for name in ("node_weight", "impurity"):
                if getattr(self, name).shape != (n,):
                    raise ValueError(f"Tree.{name} must have shape ({n},)")
            if self.value.shape[1] != 1:
                raise ValueError(f"a regression tree's value must have shape ({n}, 1)")
            if self.class_names is not None:
                raise ValueError("a regression tree has no class_names")
        for name, size in (("feature_names", self.n_features), ("categories", self.n_features),
                           ("class_names", self.value.shape[1])):
            names = getattr(self, name)
            if names is not None and len(names) != size:
                raise ValueError(f"Tree.{name} needs {size} entries, got {len(names)}")
        # Preorder and one parent per node: every child id is larger than its parent's id.
        # (A categorical node may send several categories to one child: it counts once.)
        parents = np.repeat(np.arange(n), n_children)
        if np.any((self.child <= parents) | (self.child >= n)):
            raise ValueError("Tree.child does not describe a tree in preorder")
        n_parents = np.bincount(np.unique(parents * n + self.child) % n, minlength=n)
        if np.any(n_parents > 1):
            raise ValueError("Tree.child does not describe a tree in preorder")
        if np.any(n_parents[1:] == 0):
            raise ValueError("every node but the root needs a parent")

    @property
    def n_nodes(self) -> int:
        return len(self.kind)

    @property
    def n_classes(self) -> int:
        return self.value.shape[1]

    @property
    def is_regression(self) -> bool:
        """Whether the leaves predict numbers (weighted means), not classes."""
        return getattr(self, "impurity", None) is not None  # trees pickled before lack it

    @property
    def n_leaves(self) -> int:
        return int(np.sum(self.kind == LEAF))

    @property
    def n_splits(self) -> int:
        """Number of branching (internal) nodes."""
        return self.n_nodes - self.n_leaves

    def children(self, node: int) -> np.ndarray:
        """The child slots of ``node`` (a categorical node has one slot per category)."""
        return self.child[self.child_ptr[node] : self.child_ptr[node + 1]]

    @property
    def depth(self) -> np.ndarray:
        """Depth of every node (root 0)."""
        d = np.zeros(self.n_nodes, np.int64)
        for i in range(self.n_nodes):  # preorder: parents come first
            d[np.unique(self.children(i))] = d[i] + 1
        return d

    @property
    def max_depth(self) -> int:
        return int(self.depth.max())

    # ------------------------------------------------------------------ prediction
    def _check_X(self, X: Any) -> np.ndarray:
        return feature_matrix(X, self.n_features, feature_names=self.feature_names,
                              categories=self.categories)

    def rule_values(self, node: int, X: np.ndarray) -> np.ndarray:
        """Value of the polynomial rule of LINEAR ``node`` on rows ``X``."""
        lo, hi = self.rule_ptr[node], self.rule_ptr[node + 1]
        terms = np.prod(X[:, None, :] ** self.rule_powers[None, lo:hi, :], axis=2)
        return weighted_terms(terms, self.rule_coef[lo:hi])

    def apply(self, X: Any) -> np.ndarray:
        """Leaf id reached by every row of ``X``: the encoded numeric matrix (category codes),
        or raw input (a DataFrame or string columns) encoded by ``categories`` (see
        :func:`feature_matrix`)."""
        X = self._check_X(X)
        node = np.zeros(len(X), np.int64)
        active = np.flatnonzero(self.kind[node] != LEAF)
        while len(active):
            at = node[active]
            slot = np.zeros(len(active), np.int64)
            kind = self.kind[at]
            thr = kind == THRESHOLD
            x = X[active[thr], self.feature[at[thr]]]
            slot[thr] = (x > self.threshold[at[thr]]) | (np.isnan(x) & ~self.missing_left[at[thr]])
            cat = np.flatnonzero(kind == CATEGORICAL)
            if len(cat):
                code = X[active[cat], self.feature[at[cat]]]
                if np.isnan(code).any():
                    f = int(self.feature[at[cat]][np.isnan(code)][0])
                    raise ValueError(f"X has a missing value in categorical column "
                                     f"{self._feature_name(f)}; only numeric columns may hold "
                                     "missing values")
                n_slots = self.child_ptr[at[cat] + 1] - self.child_ptr[at[cat]]
                bad = (code != np.floor(code)) | (code < 0) | (code >= n_slots)
                if np.any(bad):
                    raise ValueError(
                        f"category code {code[bad][0]!r} in column {self.feature[at[cat]][bad][0]} is "
                        "not one the tree was fitted on"
                    )
                slot[cat] = code.astype(np.int64)
            for i in np.unique(at[kind == LINEAR]):
                rows = kind == LINEAR
                rows &= at == i
                z = self.rule_values(i, X[active[rows]])
                if np.isnan(z).any():
                    raise_nan_rule(self, i, X[active[rows]])
                slot[rows] = z > self.threshold[i]
            node[active] = self.child[self.child_ptr[at] + slot]
            active = active[self.kind[node[active]] != LEAF]
        return node

    def _feature_name(self, f: int) -> str:
        return f"{f} ({self.feature_names[f]!r})" if self.feature_names is not None else str(f)

    def predict(self, X: Any) -> np.ndarray:
        """Class index predicted for every row (regression trees: the leaf's mean)."""
        if self.is_regression:
            return self.value[self.apply(X), 0]
        return self.label[self.apply(X)]

    def predict_proba(self, X: Any) -> np.ndarray:
        """Weighted training class frequencies of the leaf each row reaches.

        A leaf no training weight reached predicts its label with probability one.
        """
        return self.leaf_proba()[self.apply(X)]

    def leaf_proba(self) -> np.ndarray:
        """Class probabilities of every node (rows of ``value`` normalised)."""
        if self.is_regression:
            raise ValueError("a regression tree has no class probabilities")
        total = self.value.sum(axis=1, keepdims=True)
        proba = np.divide(self.value, total, out=np.zeros_like(self.value), where=total > 0)
        empty = total[:, 0] <= 0
        proba[empty, self.label[empty]] = 1.0
        return proba

    def feature_importances(self) -> np.ndarray:
        """Normalised decrease of the training misclassification brought by each feature.

        Every split node contributes the weighted misclassification of its node taken as a
        leaf (``value`` total minus its largest class total) minus that of its children; the
        contributions are summed per feature and normalised to sum to 1 (all zeros when no
        split lowers the training error, e.g. a single leaf). A LINEAR (oblique or polynomial)
        node shares its decrease equally among the features its rule uses (non-zero
        coefficient). Features the tree never tests get exactly 0. Regression trees use the
        weighted sum of squared errors (``impurity``) instead of the misclassification.
        """
        error = (self.impurity if self.is_regression
                 else self.value.sum(axis=1) - self.value.max(axis=1))
        out = np.zeros(self.n_features, np.float64)
        for node in np.flatnonzero(self.kind != LEAF):
            kids = np.unique(self.children(node))
            decrease = max(float(error[node] - error[kids].sum()), 0.0)
            if decrease == 0.0:
                continue
            if self.kind[node] == LINEAR:
                lo, hi = self.rule_ptr[node], self.rule_ptr[node + 1]
                used = np.flatnonzero(
                    np.any(self.rule_powers[lo:hi][self.rule_coef[lo:hi] != 0] > 0, axis=0))
                if len(used):
                    out[used] += decrease / len(used)
            else:
                out[self.feature[node]] += decrease
        total = out.sum()
        return out / total if total > 0 else out

    def compile(self) -> CompiledTree:
        """Zhang's bitvector-matrix form ``(S, t, B, v)``: see :mod:`exactree.tree.compiled`."""
        from .compiled import compile_tree

        return compile_tree(self)

    # ------------------------------------------------------------------ serialisation
    _ARRAYS = ("kind", "feature", "threshold", "child_ptr", "child", "value", "label",
               "rule_ptr", "rule_coef", "rule_powers")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable description; :meth:`from_dict` rebuilds an equal tree."""
        d: dict[str, Any] = {"format": "exactree.Tree/1", "n_features": self.n_features}
        for name in self._ARRAYS:
            d[name] = getattr(self, name).tolist()
        d["threshold"] = [None if np.isnan(t) else t for t in self.threshold.tolist()]
        d["missing_left"] = self.missing_left.tolist()
        d["missing_seen"] = self.missing_seen.tolist()
        d["feature_names"] = None if self.feature_names is None else list(self.feature_names)
        d["class_names"] = None if self.class_names is None else [_plain(c) for c in self.class_names]
        d["categories"] = None if self.categories is None else [
            None if c is None else [_plain(v) for v in c] for c in self.categories
        ]
        if self.is_regression:  # absent from classification trees (their format is unchanged)
            d["node_weight"] = self.node_weight.tolist()
            d["impurity"] = self.impurity.tolist()
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Tree:
        """Inverse of :meth:`to_dict`; a ValueError (never another error) for anything that does
        not describe a valid tree."""
        if not isinstance(d, dict) or d.get("format") != "exactree.Tree/1":
            raise ValueError("not an exactree tree description (missing format 'exactree.Tree/1')")
        missing = [k for k in (*cls._ARRAYS, "n_features") if k not in d]
        if missing:
            raise ValueError(f"not a valid exactree tree description: no {', '.join(missing)}")
        try:
            arrays = {name: np.asarray(d[name]) for name in cls._ARRAYS}
            arrays["threshold"] = np.array([np.nan if t is None else t for t in d["threshold"]],
                                           np.float64)
            arrays["value"] = np.asarray(d["value"], np.float64).reshape(len(d["kind"]), -1)
            n_features = d["n_features"]
            if not isinstance(n_features, int) or isinstance(n_features, bool) or n_features < 1:
                raise ValueError(f"n_features must be a positive integer, got {n_features!r}")
            for name in ("feature_names", "class_names", "categories"):
                if not isinstance(d.get(name), (list, type(None))):
                    raise ValueError(f"{name} must be a list or null")
            if any(not isinstance(c, (list, type(None))) for c in d.get("categories") or ()):
                raise ValueError("categories must hold a list (or null) per feature")
            missing = {}  # optional: absent from trees written before missing values
            for name in ("missing_left", "missing_seen"):
                if d.get(name) is not None:
                    if not isinstance(d[name], list) or \
                            any(not isinstance(v, bool) for v in d[name]):
                        raise ValueError(f"{name} must be a list of booleans")
                    missing[name] = np.array(d[name], np.bool_)
            regression = {}
            if d.get("node_weight") is not None or d.get("impurity") is not None:
                for name in ("node_weight", "impurity"):
                    if not isinstance(d.get(name), list):
                        raise ValueError(f"{name} must be a list of numbers")
                    regression[name] = np.array(d[name], np.float64)
            return cls(**arrays, n_features=n_features, feature_names=d.get("feature_names"),
                       class_names=d.get("class_names"), categories=d.get("categories"),
                       **missing, **regression)
        except (TypeError, ValueError, OverflowError, IndexError) as e:
            raise ValueError(f"not a valid exactree tree description: {e}") from None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tree):
            return NotImplemented
        return (
            self.n_features == other.n_features
            and all(np.array_equal(getattr(self, a), getattr(other, a), equal_nan=a == "threshold")
                    for a in self._ARRAYS if a != "rule_powers")
            and np.array_equal(self.rule_powers, other.rule_powers)
            and np.array_equal(self._routing(), other._routing())
            and np.array_equal(self.missing_seen, other.missing_seen)
            and self.is_regression == other.is_regression
            and (not self.is_regression or (np.array_equal(self.node_weight, other.node_weight)
                                            and np.array_equal(self.impurity, other.impurity)))
            and (self.feature_names, self.class_names, self.categories)
            == (other.feature_names, other.class_names, other.categories)
        )

    def _routing(self) -> np.ndarray:
        """``missing_left`` where it means something (THRESHOLD nodes), false elsewhere."""
        return self.missing_left & (self.kind == THRESHOLD)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        last = "regression=True" if self.is_regression else f"n_classes={self.n_classes}"
        return (f"Tree(n_nodes={self.n_nodes}, n_leaves={self.n_leaves}, max_depth={self.max_depth}, "
                f"n_features={self.n_features}, {last})")


# Rough costs in seconds behind :func:`prefer_compiled`, measured on a 2-core VM
# (benchmarks/bench_compiled.py and balanced random trees of depth 3-13).
_TRAVERSE_S = 3e-8  # Tree.apply, per row and tree level
_KERNEL_S = 3e-9  # the compiled walk kernel once loaded, per row and level
_BUILD_S = 5e-8  # compile_tree, per cell of the leaves x split-nodes matrix B (+ its copies)
_LOAD_S = 0.5  # loading the compiled kernel from Numba's cache, once per process
#: Largest ``leaves x split nodes`` matrix prediction ever builds implicitly (~5 bytes a cell).
MAX_COMPILED_CELLS = 1 << 24


def compiled_shape(tree: Tree) -> tuple[int, int] | None:
    """``(leaves, split nodes)`` of ``tree``'s compiled (bitvector) form, without building it.

    Categorical nodes become chains of binary tests, one per run of consecutive codes sharing a
    child. ``None`` when such a chain would duplicate a subtree (a child reached from separate
    runs), whose size this cheap count does not follow.
    """
    n_internal = int(np.sum((tree.kind == THRESHOLD) | (tree.kind == LINEAR)))
    for i in np.flatnonzero(tree.kind == CATEGORICAL):
        kids = tree.children(i)
        runs = 1 + int(np.count_nonzero(kids[1:] != kids[:-1]))
        if runs != len(np.unique(kids)):
            return None
        n_internal += runs - 1
    return tree.n_leaves, n_internal


def prefer_compiled(tree: Tree, n_rows: int) -> bool:
    """Whether predicting ``n_rows`` rows is expected to be faster through the compiled form.

    Compiling builds a ``leaves x split nodes`` matrix (quadratic in the tree size) and, once per
    process, loads a Numba kernel; traversal (:meth:`Tree.apply`) needs neither. The compiled
    path is chosen only when its estimated cost, build and load included, is below traversal's,
    and never for a matrix above :data:`MAX_COMPILED_CELLS` cells.
    """
    shape = compiled_shape(tree)
    if shape is None or shape[1] == 0:
        return False
    cells = shape[0] * shape[1]
    if cells > MAX_COMPILED_CELLS:
        return False
    levels = max(1.0, math.log2(shape[0]))  # a lower bound on the mean path length
    kernels = sys.modules.get("exactree.tree._compiled_kernels")
    walk = getattr(kernels, "leaf_rows_walk", None)
    loaded = bool(getattr(walk, "signatures", ()))
    compiled = (0.0 if loaded else _LOAD_S) + _BUILD_S * cells + _KERNEL_S * n_rows * levels
    return compiled < _TRAVERSE_S * n_rows * levels


def raise_nan_rule(tree: Tree, node: int, X: np.ndarray) -> None:
    """The error for a missing value reaching the oblique/polynomial rule of LINEAR ``node``."""
    lo, hi = tree.rule_ptr[node], tree.rule_ptr[node + 1]
    used = np.flatnonzero(np.any(tree.rule_powers[lo:hi] > 0, axis=0))
    bad = [int(f) for f in used if np.isnan(X[:, f]).any()] or [int(np.argmax(np.isnan(X).any(0)))]
    raise ValueError(f"X has a missing value in column {tree._feature_name(bad[0])}, which the "
                     f"rule of node {node} uses; only threshold splits route missing values")


def _plain(v: Any) -> Any:
    """NumPy scalars become Python scalars so JSON can hold them."""
    return v.item() if isinstance(v, np.generic) else v


class TreeBuilder:
    """Collects nodes in any order and emits a :class:`Tree` in preorder.

    >>> b = TreeBuilder(n_features=1, n_classes=2)
    >>> left, right = b.leaf([3, 0], 0), b.leaf([0, 2], 1)
    >>> root = b.threshold(0, 0.5, [left, right], [3, 2], 0)
    >>> b.build(root).n_leaves
    2

    With ``regression=True`` (and ``n_classes=1``) every node's ``value`` is the triple
    ``(mean, weight, impurity)`` (see :class:`Tree`) and ``label`` is 0.
    """

    def __init__(self, n_features: int, n_classes: int, *, regression: bool = False) -> None:
        if regression and n_classes != 1:
            raise ValueError("a regression tree builder needs n_classes=1")
        self.n_features, self.n_classes = n_features, n_classes
        self.regression = regression
        self._width = 3 if regression else n_classes
        # (kind, feature, threshold, children, value, label, rule, missing_left or None)
        self._nodes: list[tuple[int, int, float, list[int], np.ndarray, int, Any, Any]] = []

    def _add(self, kind: int, feature: int, threshold: float, children: Sequence[int],
             value: Sequence[float], label: int, rule: Any = None,
             missing_left: bool | None = None) -> int:
        value = np.asarray(value, np.float64)
        if value.shape != (self._width,):
            raise ValueError(f"node value must have {self._width} entries")
        self._nodes.append((kind, int(feature), float(threshold), [int(c) for c in children],
                            value, int(label), rule,
                            None if missing_left is None else bool(missing_left)))
        return len(self._nodes) - 1

    def leaf(self, value: Sequence[float], label: int) -> int:
        return self._add(LEAF, -1, np.nan, [], value, label)

    def threshold(self, feature: int, threshold: float, children: Sequence[int],
                  value: Sequence[float], label: int, missing_left: bool | None = None) -> int:
        """Left child (``children[0]``) when ``x[feature] <= threshold``; a missing value goes
        left when ``missing_left``, right when false, to the heavier child when None."""
        return self._add(THRESHOLD, feature, threshold, children, value, label,
                         missing_left=missing_left)

    def categorical(self, feature: int, children: Sequence[int], value: Sequence[float],
                    label: int) -> int:
        """``children[c]`` is the node for category code ``c`` of ``feature``."""
        return self._add(CATEGORICAL, feature, np.nan, children, value, label)

    def linear(self, coef: Sequence[float], powers: Any, threshold: float, children: Sequence[int],
               value: Sequence[float], label: int) -> int:
        """Left when ``sum_j coef[j] * prod_f x[f] ** powers[j, f] <= threshold``."""
        powers = np.asarray(powers, np.int64).reshape(len(coef), self.n_features)
        return self._add(LINEAR, -1, threshold, children, value, label,
                         (np.asarray(coef, np.float64), powers))

    def build(self, root: int, check: bool = True, **names: Any) -> Tree:
        """The subtree under ``root`` as a :class:`Tree`; ``names`` go to the Tree constructor.
        ``check=False`` skips the Tree's consistency checks (for callers whose nodes are valid by
        construction)."""
        order: list[int] = []
        seen: set[int] = set()
        stack = [root]
        while stack:  # iterative preorder, children visited left to right
            i = stack.pop()
            if i in seen:
                raise ValueError("a node was reached twice: the nodes do not form a tree")
            seen.add(i)
            order.append(i)
            kids = list(dict.fromkeys(self._nodes[i][3]))
            stack.extend(reversed(kids))
        new_id = {old: new for new, old in enumerate(order)}
        kind, feature, threshold, child, ptr, rule_coef, rule_powers, rule_ptr = [], [], [], [], [0], [], [], [0]
        for i in order:
            k, f, t, kids, _, _, rule, _ = self._nodes[i]
            kind.append(k)
            feature.append(f)
            threshold.append(t)
            child.extend(new_id[c] for c in kids)
            ptr.append(len(child))
            if rule is not None:
                rule_coef.extend(rule[0])
                rule_powers.extend(rule[1])
            rule_ptr.append(len(rule_coef))
        kind, ptr, child = np.array(kind), np.array(ptr), np.array(child, np.int64)
        value = np.array([self._nodes[i][4] for i in order]).reshape(len(order), self._width)
        extra: dict[str, np.ndarray] = {}
        if self.regression:
            extra = {"node_weight": value[:, 1].copy(), "impurity": value[:, 2].copy()}
            value = value[:, :1].copy()
        missing_left = default_missing_left(kind, ptr, child, value, extra.get("node_weight"))
        for new, i in enumerate(order):
            if self._nodes[i][7] is not None:
                missing_left[new] = self._nodes[i][7]
        return Tree(
            kind=kind, feature=np.array(feature), threshold=np.array(threshold),
            child_ptr=ptr, child=child, value=value, missing_left=missing_left,
            label=np.array([self._nodes[i][5] for i in order]),
            rule_ptr=np.array(rule_ptr), rule_coef=np.array(rule_coef, np.float64),
            rule_powers=np.array(rule_powers, np.int64).reshape(-1, self.n_features),
            n_features=self.n_features, check=check, **extra, **names,
        )
