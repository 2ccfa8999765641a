"""Optimal dyadic decision trees (Hush & Porter 2010): the paper's tables on scikit-learn data.

Run:  python benchmarks/bench_dyadic.py [--quick] [--repeats R]
      python benchmarks/bench_dyadic.py --heuristic   (only: how often the heuristic skips)

Tables (in the spirit of the paper):
  T1  look-ahead pruning: rectangles visited without / with Lemma 1 over the penalty grid
      (improvement ratio, mean over the grid and at the rule of thumb 2/n)
  T2/T3  the penalty path: distinct solutions, l_bound, l_max, size of the original
      lambda-list, penalties visited by the adaptive, adaptive+heuristic and hull searches
      (distinct solutions found in parentheses)
  T4  automatic k and compression (n, unique, compressed)
  T5  memory: |sigma_k|, n_hat*rho, rectangles stored at lambda = 1/(n*l_bound)
  T6  run times (cold compile in a fresh Numba cache, warm single fit, path)
  T7  test error and leaves against scikit-learn CART with cost-complexity pruning chosen by
      cross-validation, over random design/test splits (ODT: path on 90 % of the design set,
      tree chosen by validation error on the other 10 %).
  H   how often the raw adaptive+heuristic path (``certify=False``) skips a solution of the
      exact path, over 200 random small problems (the estimator always certifies it).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine, make_moons
from sklearn.feature_selection import mutual_info_classif
from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split
from sklearn.tree import DecisionTreeClassifier

from exactree.estimators.dyadic import DyadicTreeClassifier
from exactree.solvers.dyadic import (compute_path, greedy_leaf_bound, original_list_size,
                                     prepare, solve)
from exactree.solvers.dyadic.path import error_unit

ADAPTIVE_BUDGET = 3000  # exact searches allowed to the (slow) plain adaptive search


def _top_features(X, y, m, seed=0):
    mi = mutual_info_classif(X, y, random_state=seed)
    return np.sort(np.argsort(mi)[::-1][:m])


def checkerboard(n=400, cells=4, noise=0.05, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2))
    y = ((np.floor(X[:, 0] * cells) + np.floor(X[:, 1] * cells)) % 2).astype(int)
    flip = rng.random(n) < noise
    y[flip] = 1 - y[flip]
    return X, y


def datasets(quick: bool):
    out = []
    X, y = load_iris(return_X_y=True)
    out.append(("iris", X, y))
    X, y = load_wine(return_X_y=True)
    out.append(("wine[3]", X[:, _top_features(X, y, 3)], y))
    X, y = load_breast_cancer(return_X_y=True)
    out.append(("breast_cancer[3]", X[:, _top_features(X, y, 3)], y))
    X, y = load_digits(return_X_y=True)
    out.append(("digits[3]", X[:, _top_features(X, y, 3)], y))
    X, y = make_moons(n_samples=300 if quick else 500, noise=0.3, random_state=0)
    out.append(("moons", X, y))
    X, y = checkerboard(300 if quick else 500)
    out.append(("checkerboard", X, y))
    return out


def e1_root(p):
    """Root leaf error (weight units): penalties above it give the single leaf."""
    return float(p.W.sum(axis=0).min())


def table(title, header, rows):
    print(f"\n{title}")
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(header)]
    print("  ".join(str(h).rjust(w) for h, w in zip(header, widths)))
    for r in rows:
        print("  ".join(str(c).rjust(w) for c, w in zip(r, widths)))


def cold_compile_time() -> tuple[float, float]:
    """First fit in a fresh process with an empty Numba cache, then with the cache filled."""
    code = ("import time; t=time.perf_counter();"
            "import numpy as np; from exactree.estimators.dyadic import DyadicTreeClassifier;"
            "X=np.random.default_rng(0).random((50,2)); y=(X[:,0]>.5).astype(int);"
            "DyadicTreeClassifier().fit(X,y); print(time.perf_counter()-t)")
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, NUMBA_CACHE_DIR=d)
        cold = float(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                    text=True, check=True).stdout)
        warm = float(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                    text=True, check=True).stdout)
    return cold, warm


def heuristic_skips(n_cases: int = 200) -> None:
    """Table H: raw adaptive+heuristic path against the exact hull path on random problems
    (2-D uniform points, 10-59 samples, 2-3 random classes, k from 1 to 4 per feature)."""
    ks = [(1, 1), (2, 1), (1, 2), (2, 2), (3, 1), (3, 3), (4, 2)]
    cases = solutions = missed_cases = missed = 0
    for seed in range(n_cases):
        rng = np.random.default_rng(seed)
        n, K = int(rng.integers(10, 60)), int(rng.integers(2, 4))
        X, y = rng.random((n, 2)), rng.integers(0, K, n)
        y[:K] = np.arange(K)
        p = prepare(X, y, np.ones(n), K, max_splits=np.array(ks[seed % len(ks)]))
        exact = {(s.leaves, round(s.err, 9)) for s in compute_path(p).solutions}
        raw = compute_path(p, search="adaptive_heuristic", certify=False)
        got = {(s.leaves, round(s.err, 9)) for s in raw.solutions}
        assert got <= exact, "the heuristic returned a non-solution"
        certified = compute_path(p, search="adaptive_heuristic")
        assert {(s.leaves, round(s.err, 9)) for s in certified.solutions} == exact
        cases += 1
        solutions += len(exact)
        missed_cases += got != exact
        missed += len(exact - got)
    print(f"\nH  adaptive+heuristic (raw) skipped solutions in {missed_cases} of {cases} random "
          f"problems ({missed} of {solutions} path solutions); certified paths: all exact")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller synthetic sets, fewer repeats")
    ap.add_argument("--repeats", type=int, default=None, help="design/test splits for T7")
    ap.add_argument("--heuristic", action="store_true",
                    help="only table H (how often the heuristic path skips solutions)")
    args = ap.parse_args()
    if args.heuristic:
        heuristic_skips()
        return
    repeats = args.repeats or (2 if args.quick else 5)
    data = datasets(args.quick)
    t1, t23, t4, t5, t6 = [], [], [], [], []
    for name, X, y in data:
        n, d = X.shape
        K = int(y.max()) + 1
        w = np.ones(n)
        t0 = time.perf_counter()
        p = prepare(X, y, w, K)
        t_prep = time.perf_counter() - t0
        lam_rt = 2.0  # 2/n as a fraction = 2 samples' worth of error
        l_bound = greedy_leaf_bound(p)
        t0 = time.perf_counter()
        hull = compute_path(p, search="hull", l_bound=l_bound)
        t_hull = time.perf_counter() - t0
        t0 = time.perf_counter()
        heur = compute_path(p, search="adaptive_heuristic", l_bound=l_bound, certify=False)
        t_heur = time.perf_counter() - t0
        t0 = time.perf_counter()
        adap = compute_path(p, search="adaptive", l_bound=l_bound, max_evaluations=ADAPTIVE_BUDGET)
        t_adap = time.perf_counter() - t0
        m = len(hull.solutions)
        l_max = hull.solutions[-1].leaves
        e1 = float(p.W.sum(axis=0).min())
        unit = error_unit(p) or 1.0
        orig = original_list_size(int(round(e1 / unit)), l_bound)
        # Without look-ahead pruning the search visits every occupied rectangle, whatever lambda.
        full = solve(p, lam_rt, prune=False).visited
        # Mean over the hull's penalties, leaving out the trivial first search (lambda above the
        # root error, one rectangle) that would dominate the mean.
        grid = [full / v for v, lam in zip(hull.visited, hull.lams) if lam <= e1_root(p)]
        grid_ratio, grid_median = np.mean(grid), np.median(grid)
        rt = solve(p, lam_rt)
        t0 = time.perf_counter()
        est = DyadicTreeClassifier().fit(X, y)
        t_fit = time.perf_counter() - t0
        smallest = solve(p, 1.0 / max(l_bound, 1))  # lambda = 1/(n l_bound) as a fraction
        t1.append((name, d, n, full, f"{grid_ratio:.1f}", f"{grid_median:.1f}", rt.visited,
                   f"{full / rt.visited:.1f}"))
        ad = f"{adap.evaluations}{'+' if not adap.complete else ''} ({len(adap.solutions)})"
        t23.append((name, d, n, l_bound, l_max, m, orig, ad,
                    f"{heur.evaluations} ({len(heur.solutions)})",
                    f"{hull.evaluations} ({len(hull.solutions)})"))
        t4.append((name, d, n, str(p.k.tolist()), p.stats.get("k0"), p.stats["n_unique"],
                   p.stats["n_compressed"]))
        t5.append((name, f"{p.stats['sigma_k']:.3g}", f"{p.stats['n_rho']:.3g}", smallest.visited))
        t6.append((name, f"{t_prep:.3f}", f"{t_fit:.3f}", est.tree_.n_leaves,
                   f"{t_hull:.2f}", f"{t_heur:.2f}", f"{t_adap:.2f}"))
        print(f"[{name}] done", flush=True)

    table("T1  look-ahead pruning (rectangles visited; ratio = without / with Lemma 1)",
          ["data", "d", "n", "rects no-prune", "mean ratio (hull grid)", "median ratio",
           "rects at 2/n", "ratio at 2/n"], t1)
    table("T2/T3  penalty path: distinct solutions and penalties visited (solutions found); "
          f"'+' = adaptive stopped at {ADAPTIVE_BUDGET} searches",
          ["data", "d", "n", "l_bound", "l_max", "distinct", "original list", "adaptive",
           "adaptive+heuristic", "hull (exact)"], t23)
    table("T4  automatic k and compression", ["data", "d", "n", "k", "k0", "n unique",
                                               "n compressed"], t4)
    table("T5  memory: bounds and rectangles stored at lambda = 1/(n l_bound)",
          ["data", "|sigma_k|", "n_hat*rho", "rects stored"], t5)
    table("T6  seconds: prepare, single fit at 2/n (warm), leaves, path searches",
          ["data", "prepare", "fit", "leaves", "hull", "adapt+heur", "adaptive"], t6)
    cold, warm = cold_compile_time()
    print(f"\nfirst fit in a fresh process: cold Numba cache {cold:.1f} s, warm cache {warm:.1f} s")

    rows = []
    for name, X, y in data:
        res = {k: [] for k in ("odt_err", "odt_leaves", "odt_t", "cv_err", "cv_leaves", "cv_t",
                               "cart_err", "cart_leaves", "cart_t")}
        for r in range(repeats):
            Xd, Xt, yd, yt = train_test_split(X, y, test_size=0.3, random_state=r, stratify=y)
            t0 = time.perf_counter()
            Xtr, Xva, ytr, yva = train_test_split(Xd, yd, test_size=0.1, random_state=r,
                                                  stratify=yd)
            odt = DyadicTreeClassifier()
            odt.fit_path(Xtr, ytr)
            odt.select_by_validation(Xva, yva)
            res["odt_t"].append(time.perf_counter() - t0)
            res["odt_err"].append(np.mean(odt.predict(Xt) != yt))
            res["odt_leaves"].append(odt.tree_.n_leaves)
            t0 = time.perf_counter()
            odt_cv = DyadicTreeClassifier(cv=StratifiedKFold(10, shuffle=True, random_state=r))
            odt_cv.fit(Xd, yd)
            res["cv_t"].append(time.perf_counter() - t0)
            res["cv_err"].append(np.mean(odt_cv.predict(Xt) != yt))
            res["cv_leaves"].append(odt_cv.tree_.n_leaves)
            t0 = time.perf_counter()
            alphas = DecisionTreeClassifier(random_state=0).cost_complexity_pruning_path(Xd, yd).ccp_alphas
            alphas = np.unique(np.clip(alphas, 0, None))
            cv = GridSearchCV(DecisionTreeClassifier(random_state=0), {"ccp_alpha": alphas},
                              cv=StratifiedKFold(10, shuffle=True, random_state=r))
            cv.fit(Xd, yd)
            res["cart_t"].append(time.perf_counter() - t0)
            res["cart_err"].append(np.mean(cv.predict(Xt) != yt))
            res["cart_leaves"].append(cv.best_estimator_.get_n_leaves())

        def f(v, fmt):
            return f"{fmt.format(min(v))}/{fmt.format(np.mean(v))}/{fmt.format(max(v))}"

        rows.append((name, f(res["odt_err"], "{:.3f}"), f(res["cv_err"], "{:.3f}"),
                     f(res["cart_err"], "{:.3f}"), f(res["odt_leaves"], "{:.0f}"),
                     f(res["cv_leaves"], "{:.0f}"), f(res["cart_leaves"], "{:.0f}"),
                     f"{np.mean(res['odt_t']):.2f}", f"{np.mean(res['cv_t']):.2f}",
                     f"{np.mean(res['cart_t']):.2f}"))
    table(f"T7  test error and leaves (min/mean/max over {repeats} 70/30 design/test splits); "
          "ODT-val: path + 10 % validation (the paper's protocol); ODT-cv: penalty by 10-fold CV "
          "over the path; CART: ccp_alpha by 10-fold CV",
          ["data", "ODT-val error", "ODT-cv error", "CART error", "ODT-val leaves",
           "ODT-cv leaves", "CART leaves", "ODT-val s", "ODT-cv s", "CART s"], rows)


if __name__ == "__main__":
    main()
