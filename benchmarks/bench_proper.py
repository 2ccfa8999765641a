"""Proper decision trees with arbitrary splitting rules (He & Little): what the search proves.

Run: ``python benchmarks/bench_proper.py [--quick] [--sections ABCDE]``. Prints five tables:

A. the axis-parallel family with K splits against two independent solvers on the same data:
   exactree's MurTree DP ``OptimalTreeClassifier(max_depth=K, max_nodes=K)`` and a brute-force
   recursion over every axis-parallel tree with at most K splits (any thresholds);
B. training accuracy of the optimal hyperplane tree vs the optimal axis-parallel tree with the
   same K (K = 1, 2, 3) on small 2-D data, and the heuristic oblique baseline ``obliquetree``
   given the same number of splits it used;
C. growth of the work with N (rules, combinations, proper trees generated, seconds) against the
   paper's O(N^(D*K)) (log-log slope);
D. cold (empty Numba cache) vs warm first fit in a fresh process;
E. speed: N x K x rule family, seconds of ``ObliqueTreeClassifier.fit`` before (the combination
   search of commit 356af0b, timed once on the 2-core development machine, numbers in
   ``BEFORE``) and now, with the objectives, which must be equal. Goal cases: K=2 hyperplanes on
   150 two-dimensional points under 15 s, a degree-2 hypersurface (K=1) on 100 points under
   60 s, 10x faster on the cases of sections A-B;
F. ``ObliqueTreeRegressor`` (squared error): axis rules with room for a full tree against the
   depth-limited DP ``OptimalTreeRegressor`` (same optimum), and hyperplane / conic trees
   against the axis tree with the same K on two-dimensional regression data, with seconds.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.datasets import load_diabetes, load_iris, make_moons

from exactree.estimators.oblique import ObliqueTreeClassifier, ObliqueTreeRegressor
from exactree.solvers.proper import make_rules, odt, point_data


# ---------------------------------------------------------------------------- data
def iris2(n=None, seed=0):
    X, y = load_iris(return_X_y=True)
    X = X[:, 2:]  # petal length and width
    return _subsample(X, y, n, seed)


def moons(n, seed=0):
    return make_moons(n, noise=0.25, random_state=seed)


def rotated(n, seed=0):
    """Two classes split by a line at 30 degrees plus 10% label noise."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    y = (np.cos(np.pi / 6) * X[:, 0] + np.sin(np.pi / 6) * X[:, 1] > 0.1).astype(int)
    flip = rng.random(n) < 0.1
    y[flip] = 1 - y[flip]
    return X, y


def _subsample(X, y, n, seed):
    if n is None or n >= len(X):
        return X, y
    idx = np.random.default_rng(seed).choice(len(X), size=n, replace=False)
    return X[idx], y[idx]


DATASETS = {"iris2": iris2, "moons": moons, "rotated": rotated}


# ---------------------------------------------------------------------------- brute force
def brute_axis(X, y, k):
    """Fewest misclassifications of any axis-parallel tree with at most ``k`` splits."""
    n_classes = int(y.max()) + 1
    memo: dict = {}

    def best(rows_key, rows, k):
        key = (rows_key, k)
        if key in memo:
            return memo[key]
        cnt = np.bincount(y[rows], minlength=n_classes)
        value = len(rows) - cnt.max()
        if k > 0 and value > 0:
            for f in range(X.shape[1]):
                vals = np.unique(X[rows, f])
                for t in (vals[:-1] + vals[1:]) / 2:
                    go = X[rows, f] <= t
                    left, right = rows[go], rows[~go]
                    for kl in range(k):
                        lv = best(left.tobytes(), left, kl)
                        if lv >= value:
                            continue
                        value = min(value, lv + best(right.tobytes(), right, k - 1 - kl))
        memo[key] = value
        return value

    rows = np.arange(len(y))
    return best(rows.tobytes(), rows, k)


def table(rows, header):
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(header)]
    line = "  ".join(str(h).rjust(w) for h, w in zip(header, widths))
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join(str(c).rjust(w) for c, w in zip(r, widths)))
    print()


# ---------------------------------------------------------------------------- A
def section_a(quick):
    print("A. axis-parallel family, K splits: proper-tree odt vs MurTree DP vs brute force")
    try:
        from exactree.estimators.optimal import OptimalTreeClassifier
    except ImportError:  # the DP estimator is not there yet
        OptimalTreeClassifier = None
    rows = []
    cases = [("iris2", None), ("moons", 60), ("rotated", 60)]
    for name, n in cases:
        X, y = DATASETS[name](n) if n else DATASETS[name]()
        for k in (1, 2, 3):
            t = time.perf_counter()
            ours = ObliqueTreeClassifier(n_splits=k, rules="axis").fit(X, y)
            t_ours = time.perf_counter() - t
            dp, t_dp = "n/a", float("nan")
            if OptimalTreeClassifier is not None:
                t = time.perf_counter()
                m = OptimalTreeClassifier(max_depth=k, max_nodes=k).fit(X, y)
                t_dp = time.perf_counter() - t
                dp = int(round(m.objective_))
            brute = "skipped"
            if not (quick and k == 3) and len(X) <= 150:
                brute = int(brute_axis(X, y, k))
            agree = all(v == int(ours.objective_) for v in (dp, brute) if isinstance(v, int))
            rows.append((name, len(X), k, int(ours.objective_), dp, brute, "yes" if agree else "NO",
                         f"{t_ours:.3f}", f"{t_dp:.3f}"))
    table(rows, ("data", "N", "K", "odt(axis)", "MurTree DP", "brute force", "agree", "odt s", "DP s"))


# ---------------------------------------------------------------------------- B
def section_b(quick):
    print("B. training accuracy: optimal hyperplane vs optimal axis-parallel tree, same K;")
    print("   obliquetree (heuristic oblique CART) vs our hyperplane tree with the splits it used")
    from obliquetree import Classifier

    sizes = {1: 60, 2: 40, 3: 14 if quick else 18}
    rows = []
    for name in DATASETS:
        for k, n in sizes.items():
            X, y = DATASETS[name](n)
            axis = ObliqueTreeClassifier(n_splits=k, rules="axis").fit(X, y)
            t = time.perf_counter()
            plane = ObliqueTreeClassifier(n_splits=k, rules="hyperplane").fit(X, y)
            t_plane = time.perf_counter() - t
            rows.append((name, n, k, f"{axis.score(X, y):.3f}", f"{plane.score(X, y):.3f}",
                         "yes" if plane.objective_ <= axis.objective_ else "NO",
                         plane.status_, f"{t_plane:.2f}"))
    table(rows, ("data", "N", "K", "axis acc", "hyperplane acc", "plane>=axis", "status", "plane s"))

    rows = []
    for name in DATASETS:
        for depth, n in ((1, 60), (2, 14 if quick else 18)):
            X, y = DATASETS[name](n)
            base = Classifier(use_oblique=True, max_depth=depth, random_state=0).fit(X, y)
            k = len(np.unique(base.apply(X))) - 1
            base_err = int(np.sum(base.predict(X) != y))
            ours = ObliqueTreeClassifier(n_splits=max(k, 1), rules="hyperplane").fit(X, y)
            rows.append((name, n, depth, k, base_err, int(ours.objective_),
                         "yes" if ours.objective_ <= base_err else "NO"))
    table(rows, ("data", "N", "obliquetree depth", "its splits K", "obliquetree errors",
                 "odt errors (<=K)", "never worse"))


# ---------------------------------------------------------------------------- C
def section_c(quick):
    print("C. growth with N, hyperplane family (D = 2, ties='all', no bound pruning), rotated data")
    print("   paper: rules O(N^D), combinations O(N^(D*K)), time O(K! N^(D*K+1))")
    grid = {1: [10, 20, 40, 80], 2: [8, 12, 16, 24], 3: [6, 8, 10] if quick else [6, 8, 10, 12]}
    rows = []
    for k, ns in grid.items():
        pts = []
        for n in ns:
            X, y = rotated(n, seed=1)
            data = point_data(X, y, np.ones(n), 2)
            rules = make_rules(data.X, "hyperplane")
            t = time.perf_counter()
            res = odt(rules, data, k, prune=False, exact_k=True)
            sec = time.perf_counter() - t
            s = res.stats
            pts.append((n, s["combinations"], s["proper_trees"], sec))
            rows.append((k, n, len(rules), s["combinations"], s["feasible_combinations"],
                         s["proper_trees"], f"{sec:.3f}", "", ""))
        ln = np.log([p[0] for p in pts])
        slope_c = np.polyfit(ln, np.log([p[1] for p in pts]), 1)[0]
        slope_t = np.polyfit(ln[1:], np.log([max(p[3], 1e-6) for p in pts[1:]]), 1)[0]
        rows.append((k, "slope", "", "", "", "", "", f"{slope_c:.2f}", f"{slope_t:.2f}"))
    table(rows, ("K", "N", "rules M", "combinations", "with a tree", "proper trees", "seconds",
                 "combos ~N^", "time ~N^"))
    print("   predicted exponent D*K: K=1 -> 2, K=2 -> 4, K=3 -> 6 (time adds ~1 for leaf costs)\n")


# ---------------------------------------------------------------------------- D
_SNIPPET = """
import time, numpy as np
t = time.perf_counter()
from exactree.estimators.oblique import ObliqueTreeClassifier
X = np.random.default_rng(0).normal(size=(20, 2)); y = (X[:, 0] > X[:, 1]).astype(int)
ObliqueTreeClassifier(n_splits=2).fit(X, y)
print(f"{time.perf_counter() - t:.2f}")
"""


def section_d():
    print("D. first fit in a fresh process (import + compile or cache load + fit, N=20, K=2)")
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for label in ("cold (empty cache)", "warm (cache filled)"):
            out = subprocess.run([sys.executable, "-c", _SNIPPET], env=env, capture_output=True,
                                 text=True, check=True)
            rows.append((label, out.stdout.strip()))
    table(rows, ("run", "seconds"))


# ---------------------------------------------------------------------------- E
#: case "data:N:K:family" -> (objective, seconds) at commit 356af0b (combination search, rule
#: generation in NumPy, refusal above 200,000 rules) on the shared 2-core development machine,
#: after a warm-up: the fastest of 7 fits for the cases of sections A-B, one fit for the goal
#: cases (as :func:`section_e` times them now). "all" = the whole data set.
BEFORE = {
    "iris2:all:1:axis": (50.0, 0.0037),
    "iris2:all:2:axis": (6.0, 0.0204),
    "iris2:all:3:axis": (3.0, 1.8588),
    "moons:60:1:axis": (10.0, 0.0022),
    "moons:60:2:axis": (5.0, 0.0088),
    "moons:60:3:axis": (4.0, 0.3194),
    "rotated:60:1:axis": (15.0, 0.0014),
    "rotated:60:2:axis": (8.0, 0.0058),
    "rotated:60:3:axis": (6.0, 0.4085),
    "iris2:60:1:hyperplane": (17.0, 0.0183),
    "iris2:40:2:hyperplane": (0.0, 0.0092),
    "iris2:18:3:hyperplane": (0.0, 0.003),
    "moons:60:1:hyperplane": (7.0, 0.0301),
    "moons:40:2:hyperplane": (4.0, 2.1845),
    "moons:18:3:hyperplane": (0.0, 3.6025),
    "rotated:60:1:hyperplane": (4.0, 0.0222),
    "rotated:40:2:hyperplane": (3.0, 1.8321),
    "rotated:18:3:hyperplane": (0.0, 0.1981),
    # goal cases; the polynomial ones were refused by max_rules (timed with it raised)
    "moons:30:1:polynomial": (1.0, 16.039),
    "iris2:all:2:hyperplane": (3.0, 69.901),
    "moons:150:2:hyperplane": (17.0, 493.947),
    "moons:100:1:polynomial": (None, None),  # 2.4e9 rules: would need ~300 GB to list
}
GOALS = {"iris2:all:2:hyperplane": 15.0, "moons:150:2:hyperplane": 15.0,
         "moons:100:1:polynomial": 60.0}


def _case(spec: str, n_jobs=None, repeat: int = 1):
    """Fit one case; the fastest of ``repeat`` fits (noise on a shared machine)."""
    name, n, k, family = spec.split(":")
    X, y = DATASETS[name](None if n == "all" else int(n))
    kw = dict(n_splits=int(k), rules=family, n_jobs=n_jobs)
    if family == "polynomial":
        kw["degree"] = 2
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        m = ObliqueTreeClassifier(**kw).fit(X, y)
        best = min(best, time.perf_counter() - t)
    return len(X), m, best


def section_e(quick):
    print("E. speed, N x K x family: seconds before (commit 356af0b) and now; objectives equal")
    _case("moons:12:2:hyperplane")  # compile / load the kernels outside the timings
    rows = []
    specs = [s for s in BEFORE if not (quick and s.startswith(("moons:150", "moons:100")))]
    for spec in specs:
        obj0, t0 = BEFORE[spec]
        n, m, t1 = _case(spec, repeat=1 if spec in GOALS or "polynomial" in spec else 7)
        name, _, k, family = spec.split(":")
        goal = GOALS.get(spec)
        rows.append((name, n, k, family, "-" if obj0 is None else int(obj0),
                     int(m.objective_), m.status_,
                     "refused" if t0 is None else f"{t0:.3f}", f"{t1:.3f}",
                     "-" if t0 is None else f"{t0 / t1:.1f}x",
                     "" if goal is None else ("< %g s: %s" % (goal, "met" if t1 < goal else
                                                              "NOT met")),
                     "" if obj0 is None else ("yes" if obj0 == m.objective_ else "NO")))
    table(rows, ("data", "N", "K", "family", "obj before", "obj now", "status", "s before",
                 "s now", "speed-up", "goal", "same obj"))
    if not quick:
        rows = []
        for spec in ("moons:150:2:hyperplane", "moons:100:1:polynomial"):
            n, m, t1 = _case(spec, n_jobs=2)
            rows.append((spec, int(m.objective_), f"{t1:.2f}"))
        table(rows, ("case, n_jobs=2", "objective", "seconds"))


# ---------------------------------------------------------------------------- F
def ramp(n, seed=0):
    """A step across a line at 30 degrees plus a slope in x0 and noise: oblique structure."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    step = np.cos(np.pi / 6) * X[:, 0] + np.sin(np.pi / 6) * X[:, 1] > 0.1
    return X, 2.0 * step + 0.5 * X[:, 0] + rng.normal(scale=0.2, size=n)


def diabetes2(n, seed=0):
    """scikit-learn's diabetes, columns bmi and s5 (its two strongest), ``n`` rows."""
    X, y = load_diabetes(return_X_y=True)
    return _subsample(X[:, [2, 8]], y, n, seed)


REGRESSION = {"ramp": ramp, "diabetes2": diabetes2}


def _fit_seconds(est, X, y):
    t = time.perf_counter()
    est.fit(X, y)
    return est, time.perf_counter() - t


def section_f(quick):
    print("F. ObliqueTreeRegressor (squared error): axis rules vs the DP OptimalTreeRegressor "
          "(full trees),")
    print("   hyperplane / conic trees vs axis trees with the same K")
    from exactree.estimators.regressor import OptimalTreeRegressor

    ObliqueTreeRegressor(n_splits=2).fit(*ramp(12))  # compile / load outside the timings
    rows = []
    for name, n in (("ramp", 60), ("diabetes2", 60 if quick else 100)):
        X, y = REGRESSION[name](n)
        for depth in (1, 2):
            ours, t_ours = _fit_seconds(ObliqueTreeRegressor(
                rules="axis", n_splits=2 ** depth - 1, max_depth=depth), X, y)
            dp, t_dp = _fit_seconds(OptimalTreeRegressor(max_depth=depth), X, y)
            same = abs(ours.objective_ - dp.objective_) <= 1e-9 * max(1.0, dp.objective_)
            rows.append((name, n, depth, 2 ** depth - 1, f"{ours.objective_:.6g}",
                         f"{dp.objective_:.6g}", "yes" if same else "NO", ours.status_,
                         f"{t_ours:.3f}", f"{t_dp:.3f}"))
    table(rows, ("data", "N", "depth", "K", "odt(axis) SSE", "DP SSE", "agree", "status",
                 "odt s", "DP s"))
    rows = []
    # conic (degree-2) rules only on small N: squared error lists its rules (C(N, 5) * 32 of
    # them in the plane), it has no streaming one-rule search
    cases = [("ramp", 60, 1), ("ramp", 25, 1), ("ramp", 40, 2), ("ramp", 16, 3),
             ("diabetes2", 60, 1), ("diabetes2", 25, 1), ("diabetes2", 40, 2)]
    for name, n, k in cases:
        X, y = REGRESSION[name](n)
        axis = ObliqueTreeRegressor(n_splits=k, rules="axis").fit(X, y)
        plane, t_plane = _fit_seconds(ObliqueTreeRegressor(n_splits=k), X, y)
        conic, t_conic = "-", "-"
        if k == 1 and n <= 25:
            m, t = _fit_seconds(ObliqueTreeRegressor(n_splits=1, rules="polynomial"), X, y)
            conic, t_conic = f"{m.objective_:.4g}", f"{t:.2f}"
        rows.append((name, n, k, f"{axis.objective_:.4g}", f"{plane.objective_:.4g}",
                     f"{plane.score(X, y):.3f}", plane.status_, f"{t_plane:.2f}", conic,
                     t_conic))
    table(rows, ("data", "N", "K", "axis SSE", "hyperplane SSE", "hyperplane R2", "status",
                 "plane s", "conic SSE", "conic s"))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller K=3 cases, no big goals")
    parser.add_argument("--sections", default="ABCDEF", help="which tables, e.g. E")
    args = parser.parse_args()
    print("exactree proper-tree benchmark (timings on a shared 2-core machine: expect noise)\n")
    t = time.perf_counter()
    for name, run in (("A", section_a), ("B", section_b), ("C", section_c), ("D", section_d),
                      ("E", section_e), ("F", section_f)):
        if name in args.sections.upper():
            run() if name == "D" else run(args.quick)
    print(f"total {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    main()
