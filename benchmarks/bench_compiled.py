"""Throughput of compiled-tree prediction against traversal and scikit-learn.

For trees of depth 2..8 (a scikit-learn ``DecisionTreeClassifier`` fitted on random data, and the
exactree ``Tree`` of exactly the same shape and thresholds) and batches of 1e3..1e6 rows, prints
rows/second of:

- ``walk``: ``CompiledTree.apply`` with the Numba root-to-leaf kernel over the structure decoded
  from ``B`` (the default, ``method="auto"``);
- ``bitvec``: the Numba bitvector-AND kernel (Zhang's formula evaluated QuickScorer-style);
- ``matmul``: the formula ``argmax(B σ(Sx − t))`` literally, NumPy float32 matrix product;
- ``traverse``: exactree's own ``Tree.apply`` (level-by-level NumPy traversal);
- ``sklearn``: ``DecisionTreeClassifier.predict``;

plus speed-up ratios over ``traverse`` and ``sklearn`` (higher = faster than them) of the
compiled kernels and of the literal matrix formula (``mm/trav``: below 1 means the formula
``argmax(B σ(Sx − t))`` itself is *slower* than traversal). The speed of compiled prediction
comes from the Numba root-to-leaf walk over the structure decoded from ``B``, not from the
matrix formula, whose work grows with the number of nodes (O(L²) per row for the product with
``B``) rather than the depth. Every run checks that all paths agree on every row. Everything
runs single-threaded (BLAS limited to one thread) so the comparison is per core.
Usage: ``python benchmarks/bench_compiled.py [--quick]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

from exactree.tree import Tree
from exactree.tree.compiled import predict_leaves


def sklearn_to_tree(clf: DecisionTreeClassifier) -> Tree:
    """The exactree Tree with the same nodes, thresholds and class totals as ``clf``."""
    t = clf.tree_
    left, right = t.children_left, t.children_right
    internal = left >= 0
    kind = np.where(internal, 1, 0).astype(np.int8)
    n_children = np.where(internal, 2, 0)
    child_ptr = np.concatenate([[0], np.cumsum(n_children)])
    child = np.stack([left[internal], right[internal]], axis=1).reshape(-1)
    value = t.value[:, 0, :] * t.weighted_n_node_samples[:, None]
    return Tree(kind=kind, feature=np.where(internal, t.feature, -1),
                threshold=np.where(internal, t.threshold, np.nan), child_ptr=child_ptr,
                child=child, value=value, label=np.argmax(value, axis=1),
                n_features=clf.n_features_in_)


def best_time(fn, budget: float = 0.4, max_reps: int = 7) -> float:
    """Smallest of several timings, stopping when ``budget`` seconds are spent."""
    best, spent, reps = np.inf, 0.0, 0
    while reps < max_reps and (reps < 2 or spent < budget):
        start = time.perf_counter()
        fn()
        dt = time.perf_counter() - start
        best, spent, reps = min(best, dt), spent + dt, reps + 1
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller grid (CI smoke run)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n_features, n_classes = 10, 3
    depths = [2, 4, 8] if args.quick else [2, 3, 4, 5, 6, 7, 8]
    sizes = [1_000, 10_000, 100_000] if args.quick else [1_000, 10_000, 100_000, 1_000_000]
    big_depths = {2, 5, 8}  # 1e6 rows only for these depths: keeps the run to a few minutes

    # Random labels and random split points (greedy Gini splits on noise isolate small pure
    # groups early): the trees come out complete, or nearly (2**depth leaves).
    Xtrain = rng.random((200_000, n_features)).astype(np.float32).astype(np.float64)
    ytrain = rng.integers(0, n_classes, len(Xtrain))
    Xall = rng.random((max(sizes), n_features)).astype(np.float32).astype(np.float64)

    def fitted(depth: int) -> DecisionTreeClassifier:
        return DecisionTreeClassifier(max_depth=depth, splitter="random",
                                      random_state=0).fit(Xtrain, ytrain)

    # One-off costs: compiling the kernel (or loading it from Numba's cache) and compiling a tree.
    start = time.perf_counter()
    clf = DecisionTreeClassifier(max_depth=2, random_state=0).fit(Xtrain, ytrain)
    sklearn_to_tree(clf).compile().apply(Xall[:10])
    print(f"first kernel call (Numba compile or cache load): {time.perf_counter() - start:.2f} s")

    methods = ("walk", "bitvec", "matmul", "traverse", "sklearn")
    header = (f"{'depth':>5} {'leaves':>6} {'rows':>9} | "
              + " ".join(f"{m:>8}" for m in methods)
              + f" | {'walk/trav':>9} {'walk/skl':>8} {'bv/trav':>7} {'bv/skl':>7}"
              + f" {'mm/trav':>7}")
    print("throughput in million rows / second (higher is better); ratios = speed-ups")
    print(header)
    print("-" * len(header))
    for depth in depths:
        clf = fitted(depth)
        tree = sklearn_to_tree(clf)
        start = time.perf_counter()
        ct = tree.compile()
        compile_ms = 1e3 * (time.perf_counter() - start)
        for n in sizes:
            if n >= 1_000_000 and depth not in big_depths:
                continue
            X = Xall[:n]
            leaves = tree.apply(X)
            for method in ("walk", "bitvector", "matmul"):
                assert np.array_equal(ct.apply(X, method=method), leaves)
            assert np.array_equal(clf.apply(X), leaves)  # same node ids by construction
            assert np.array_equal(predict_leaves(tree, X), leaves)
            few = n >= 1_000_000  # the slow paths get one timing at 1e6 rows
            times = {
                "walk": best_time(lambda: ct.apply(X, method="walk")),
                "bitvec": best_time(lambda: ct.apply(X, method="bitvector")),
                "matmul": best_time(lambda: ct.apply(X, method="matmul"),
                                    max_reps=1 if few else 7),
                "traverse": best_time(lambda: tree.apply(X), max_reps=2 if few else 7),
                "sklearn": best_time(lambda: clf.predict(X)),
            }
            rate = {k: n / v / 1e6 for k, v in times.items()}
            print(f"{depth:>5} {tree.n_leaves:>6} {n:>9} | "
                  + " ".join(f"{rate[m]:>8.2f}" for m in methods)
                  + f" | {times['traverse'] / times['walk']:>9.1f}"
                  f" {times['sklearn'] / times['walk']:>8.1f}"
                  f" {times['traverse'] / times['bitvec']:>7.1f}"
                  f" {times['sklearn'] / times['bitvec']:>7.1f}"
                  f" {times['traverse'] / times['matmul']:>7.2f}", flush=True)
        print(f"      (compiling the depth-{depth} tree: {compile_ms:.2f} ms)")

    # Crossover for predict_leaves: smallest batches, compiled (cached) vs traversal.
    print("\nsmall batches, depth 5 (microseconds per call):")
    tree = sklearn_to_tree(fitted(5))
    predict_leaves(tree, Xall[:2])
    for n in (1, 10, 100):
        X = Xall[:n]
        tc = best_time(lambda: predict_leaves(tree, X, method="compiled"), budget=0.05,
                       max_reps=200)
        tt = best_time(lambda: predict_leaves(tree, X, method="traversal"), budget=0.05,
                       max_reps=200)
        print(f"  rows={n:>4}: compiled {1e6 * tc:8.1f}   traversal {1e6 * tt:8.1f}")


if __name__ == "__main__":
    with threadpool_limits(1):
        main()
