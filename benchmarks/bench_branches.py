"""BRANCHES (SparseTreeClassifier's solver) against the paper's table and against GOSDT.

Part 1: every ordinal-encoded categorical dataset of ../shared/data/categorical/ with the paper's
lambda: the optimal objective (accuracy - lambda * splits), splits, iterations and time, next to
the paper's ``-o`` rows (Table 2), and checked against an exhaustive DP over all branches where
that is small enough.

Part 2: GOSDT (time of its ``fit``, capped by its own time limit) side by side on binary data:
one-hot versions of the same datasets (last category dropped, the paper's ``-l`` encoding) with
the paper's lambda, and ../shared/data/binary/ datasets with ``--lam`` (default 0.01). GOSDT
penalises leaves, we penalise splits; on binary trees leaves = splits + 1, so the optima coincide
and ``GOSDT objective = ours + lambda``. Reports the geometric-mean time ratio ours / GOSDT over
the rows both solved to proven optimality, with identical objectives required.

Part 3 (``--parts continuous``): raw numeric columns, the classification sets of
../shared/data/continuous/ (their ``train`` rows) and scikit-learn's iris, wine and breast cancer,
at ``--cont-lams`` (default 0.01 and 0.005): SparseTreeClassifier on the raw columns (every
midpoint threshold a candidate; ``--off ordered`` switches the chains of ordered thresholds
off), GOSDT on the same problem binarised at every midpoint (one 0/1 column per threshold, the
same optimum). ``--cont`` restricts it to some of these sets.

Part 2 ends with the goals of issue 16: the problems GOSDT does not prove within its limit and
whether we prove them within ours (``--limit``, 90 s), and the geometric-mean time ratio.
``--hard`` runs the binary sets where GOSDT (and BRANCHES before the look-ahead bounds) stopped;
``--lookahead 0`` runs our solver without look-ahead bounds (the "before" numbers);
``--depth2 0`` without the depth-2 bounds from pair counts (``--depth2 N``: at most N feature
rows per bound); ``--off dedup memo_rows split_budget nested refresh refine_kept`` switches those
techniques off (one feature per class of features splitting a branch alike; the memo keyed by
rows; the split budget; chains of nested 0/1 columns found on the data; the refresh of stale
action bounds during the selection; the refined bounds of every split an expansion keeps), for
ablation: results never change.

Run:  python benchmarks/bench_branches.py [--gosdt-limit 90] [--binary NAME ... | --hard]
Timings are wall-clock on whatever machine runs this; ours are warm (kernels compiled and
cached); the cold compile is printed once at the top. GOSDT runs in a child process with an
address-space cap (``--gosdt-mem`` GiB); running out of it shows as status ``memory``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "branches"))

from exactree.solvers.branches import solve  # noqa: E402

DATA = ROOT.parent / "shared" / "data"

# The paper's Table 2 / Table 5, "-o" rows: (lambda, objective, time s, iterations).
PAPER = {
    "monk1": (0.01, 0.9, 0.02, 64),
    "monk2": (0.001, 0.95, 0.14, 1000),
    "monk3": (0.001, 0.987, 0.04, 156),
    "careval": (0.005, 0.812, 0.11, 632),
    "balance": (0.01, 0.661, 0.02, 130),
    "tictactoe": (0.005, 0.832, 0.95, 3479),
    "zoo": (0.001, 0.993, 0.94, 1456),
    "lymph": (0.01, 0.852, 18.0, 20000),
}
# Binary datasets GOSDT (v1.0.4) proved optimal within two minutes at lambda = 0.01 in a survey
# of all of ../shared/data/binary/ on this machine (it timed out or ran out of memory on the rest:
# wine, hepatitis, lymph, primary-tumor, soybean, anneal, heart-cleveland, mushroom, tic-tac-toe).
DEFAULT_BINARY = ["monk1_bin", "monk2_bin", "monk3_bin", "iris_categorical_bin",
                  "balance-scale_categorical_bin", "car_evaluation_categorical_bin",
                  "seismic_bumps_categorical_bin", "IndiansDiabetes_categorical_bin", "vote",
                  "tic-tac-toe_bin", "banknote_categorical_bin", "winequality-red_categorical_bin"]
# Binary datasets where GOSDT timed out or ran out of memory at lambda = 0.01 (see above), and
# where BRANCHES stopped at memory_limit before the look-ahead bounds (issue 16).
# Part 3: raw numeric columns (scikit-learn's sets, then ../shared/data/continuous/'s
# classification sets).
SKLEARN = ["iris", "wine", "breast_cancer"]
CONTINUOUS = SKLEARN + ["bank", "raisin", "rice", "wilt", "segment", "page", "occupancy",
                        "bidding"]
HARD_BINARY = ["hepatitis", "heart-cleveland", "anneal", "kr-vs-kp", "lymph", "primary-tumor",
               "soybean", "mushroom", "tic-tac-toe", "wine_categorical_bin"]


def load_categorical(name: str) -> tuple[np.ndarray, np.ndarray]:
    a = np.loadtxt(DATA / "categorical" / f"{name}-o.txt", dtype=np.int64)
    return a[:, :-1], np.unique(a[:, -1], return_inverse=True)[1]


def load_binary(name: str) -> tuple[np.ndarray, np.ndarray]:
    a = np.loadtxt(DATA / "binary" / f"{name}.txt", dtype=np.int64)
    return a[:, 1:], np.unique(a[:, 0], return_inverse=True)[1]


def one_hot_drop_last(X: np.ndarray) -> np.ndarray:
    cols = [(X[:, f] == j) for f in range(X.shape[1]) for j in range(int(X[:, f].max()))]
    return np.stack(cols, axis=1).astype(np.int64)


def ours(X: np.ndarray, y: np.ndarray, lam: float, repeats: int, time_limit: float | None = None,
         lookahead: int | None = None, depth2: int | None = None, off: tuple = ()):
    """Best-of-``repeats`` warm time of the solver and its result (techniques in ``off``
    switched off)."""
    card = X.max(axis=0) + 1
    best, res = math.inf, None
    extra = {} if lookahead is None else {"lookahead": lookahead}
    if depth2 is not None:
        extra["depth2"] = depth2
    extra.update({name: False for name in off})
    for _ in range(repeats):
        t = time.perf_counter()
        res = solve(X, card, y, np.ones(len(y)), int(y.max()) + 1, lam, time_limit=time_limit,
                    **extra)
        best = min(best, time.perf_counter() - t)
        if best > 5:
            break
    return res, best


_GOSDT_CHILD = """
import resource, sys, time, json
import numpy as np
cap = int(sys.argv[2]) << 30
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
d = np.load(sys.argv[1])
from gosdt import GOSDTClassifier
clf = GOSDTClassifier(regularization=float(d["lam"]), allow_small_reg=True,
                      time_limit=int(d["limit"]))
t = time.perf_counter()
clf.fit(d["X"].astype(bool), d["y"])
elapsed = time.perf_counter() - t
r = clf.get_result()
print("RESULT", json.dumps([str(r["status"]).split(".")[-1].lower(), float(r["upper_bound"]),
                            float(r["lower_bound"]), int(r["n_iterations"]), elapsed]))
"""


def gosdt(X: np.ndarray, y: np.ndarray, lam: float, limit: int, mem_gib: int = 6):
    """GOSDT's status, upper and lower bound, iterations and fit time, run in a child process
    capped at ``mem_gib`` GiB of address space (status ``memory`` when it fails)."""
    import json
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "data.npz")
        np.savez(path, X=X, y=y, lam=lam, limit=limit)
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", _GOSDT_CHILD, path, str(mem_gib)],
                             capture_output=True, text=True, timeout=limit * 3 + 120, check=False)
        elapsed = time.perf_counter() - t
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            status, ub, lb, it, t_fit = json.loads(line[7:])
            return status, ub, lb, it, t_fit
    return "memory", math.nan, math.nan, 0, elapsed


def cold_compile() -> float:
    """Seconds for the first solve in a fresh process with an empty Numba cache."""
    import subprocess
    import tempfile

    code = ("import time, numpy as np; t=time.perf_counter(); "
            "from exactree.solvers.branches import solve; "
            "solve(np.array([[0,1],[1,0],[2,1],[1,1]]), np.array([3,2]), np.array([0,1,0,1]), "
            "np.ones(4), 2, 0.01); print(time.perf_counter()-t)")
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT / "src"))
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gosdt-limit", type=int, default=90, help="GOSDT time limit (s) per run")
    ap.add_argument("--gosdt-mem", type=int, default=6, help="GOSDT address-space cap (GiB)")
    ap.add_argument("--limit", type=float, default=90.0, help="our time limit (s) per run")
    ap.add_argument("--lookahead", type=int, default=None,
                    help="our look-ahead mode (default: the solver's; 0 = off)")
    ap.add_argument("--depth2", type=int, default=None,
                    help="our depth-2 bound row budget (default: the solver's; 0 = off)")
    ap.add_argument("--off", nargs="*", default=[],
                    choices=["dedup", "memo_rows", "split_budget", "ordered", "nested", "refresh",
                             "refine_kept"],
                    help="switch these techniques off (ablation)")
    ap.add_argument("--hard", action="store_true", help="run the HARD_BINARY sets")
    ap.add_argument("--lam", type=float, default=0.01, help="lambda on the binary datasets")
    ap.add_argument("--binary", nargs="*", default=DEFAULT_BINARY, help="binary dataset names")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--parts", nargs="*", default=["paper", "onehot", "binary"],
                    choices=["paper", "onehot", "binary", "continuous"],
                    help="which tables to print")
    ap.add_argument("--cont", nargs="*", default=CONTINUOUS, help="continuous dataset names")
    ap.add_argument("--cont-lams", nargs="*", type=float, default=[0.01, 0.005],
                    help="lambda values on the continuous datasets")
    ap.add_argument("--only", nargs="*", default=None, help="restrict to these dataset names")
    ap.add_argument("--no-cold", action="store_true")
    args = ap.parse_args()
    if args.hard:
        args.binary = HARD_BINARY
        args.parts = [p for p in args.parts if p == "binary"]

    if not args.no_cold:
        print(f"cold start (import + Numba compile + first tiny solve): {cold_compile():.1f} s")
    X, y = load_categorical("monk1")
    ours(X, y, 0.01, 1)  # load the cached kernels before timing
    if "continuous" in args.parts:  # and the ordered DP's, which the estimator asks on them
        from exactree import SparseTreeClassifier

        SparseTreeClassifier(penalty=0.01).fit(*load_continuous("iris"))

    from oracle import all_branches_cost

    keep = (lambda name: True) if args.only is None else (lambda name: name in args.only)
    if "paper" in args.parts:
        part1(args, keep, all_branches_cost)
    if "onehot" in args.parts or "binary" in args.parts:
        part2(args, keep)
    if "continuous" in args.parts:
        part3(args, keep)


def part1(args, keep, all_branches_cost) -> None:
    print("\n== Part 1: ordinal-encoded categorical data, the paper's lambda ==")
    print("objective = accuracy - lambda * splits (the paper's H_lambda; higher is better)")
    head = (f"{'dataset':10s} {'n':>5s} {'q':>3s} {'lambda':>6s} | {'objective':>8s} "
            f"{'splits':>6s} {'iters':>7s} {'expans':>7s} {'branches':>8s} {'time s':>8s} "
            f"{'status':>8s} {'exh. DP':>8s} | {'paper obj':>9s} {'paper s':>7s} {'paper it':>8s}")
    print(head)
    print("-" * len(head))
    for name, (lam, p_obj, p_time, p_it) in PAPER.items():
        if not keep(name):
            continue
        X, y = load_categorical(name)
        res, t = ours(X, y, lam, args.repeats)
        obj = 1 - res.objective
        card = X.max(0) + 1
        exh = "-"
        if np.prod(card + 1.0) <= 3e5:
            exh_obj = 1 - all_branches_cost(X, y, lam)
            exh = "equal" if abs(exh_obj - obj) < 1e-9 else f"{exh_obj:.4f}!"
        st = res.stats
        print(f"{name:10s} {len(y):5d} {X.shape[1]:3d} {lam:6.3f} | {obj:8.4f} "
              f"{res.tree.n_splits:6d} {st['iterations']:7d} {st['expansions']:7d} "
              f"{st['branches']:8d} {t:8.4f} {res.status:>8s} {exh:>8s} | {p_obj:9.3f} "
              f"{p_time:7.2f} {p_it:8d}")
    print("iters = selection/backpropagation rounds; expans = expansions (first or again after")
    print("partial storage; the paper's iterations expand once each); branches = stored branches.")
    print("Our balance-o has 625 rows and 3 classes (the paper's Table 5: 576 rows, 2 classes);")
    print("tictactoe-o differs from the paper's 0.832 although the exhaustive DP agrees with us.")



def part2(args, keep) -> None:
    print(f"\n== Part 2: binary data, side by side with GOSDT (its limit {args.gosdt_limit} s, "
          f"ours {args.limit:g} s) ==")
    print("objectives as misclassification rate + lambda * leaves (GOSDT's form = ours + lambda)")
    head = (f"{'dataset':34s} {'n':>5s} {'q':>4s} {'lambda':>6s} | {'ours obj':>9s} "
            f"{'status':>12s} {'gap':>7s} {'time s':>8s} | {'GOSDT obj':>9s} {'status':>11s} "
            f"{'iters':>8s} {'time s':>8s} | {'ratio':>7s} {'same':>5s}")
    print(head)
    print("-" * len(head))
    rows = []
    if "onehot" in args.parts:
        rows += [(f"{n}-o one-hot (-l)", *_onehot(n), PAPER[n][0]) for n in PAPER if keep(n)]
    if "binary" in args.parts:
        rows += [(n, *load_binary(n), args.lam) for n in args.binary if keep(n)]
    ratios, gosdt_stuck = [], []
    for label, X, y, lam in rows:
        res, t = ours(X, y, lam, args.repeats, time_limit=args.limit, lookahead=args.lookahead,
                      depth2=args.depth2, off=tuple(args.off))
        g_status, g_ub, g_lb, g_it, g_t = gosdt(X, y, lam, args.gosdt_limit, args.gosdt_mem)
        our_obj = res.objective + lam
        both = res.status == "optimal" and g_status == "converged"
        same = abs(our_obj - g_ub) < 1e-6 if both else None
        ratio = t / g_t
        if both and same:
            ratios.append(ratio)
        if g_status != "converged":
            gosdt_stuck.append((label, res.status, t))
        print(f"{label:34s} {len(y):5d} {X.shape[1]:4d} {lam:6.3f} | {our_obj:9.6f} "
              f"{res.status:>12s} {res.objective - res.lower_bound:7.4f} {t:8.3f} | {g_ub:9.6f} "
              f"{g_status:>11s} {g_it:8d} {g_t:8.3f} | {ratio if both else math.nan:7.4f} "
              f"{'-' if same is None else ('yes' if same else 'NO'):>5s}", flush=True)
    if ratios:
        gm = math.exp(np.mean(np.log(ratios)))
        print(f"\ngeometric-mean time ratio ours/GOSDT over {len(ratios)} rows both solved "
              f"with equal objectives: {gm:.4f} (goal <= 0.1)")
    if gosdt_stuck:
        proven = [r for r in gosdt_stuck if r[1] == "optimal"]
        print(f"GOSDT did not prove {len(gosdt_stuck)} problem(s) within {args.gosdt_limit} s; "
              f"we proved {len(proven)} of them within {args.limit:g} s (goal: all):")
        for label, status, t in gosdt_stuck:
            print(f"  {label:34s} {status:>12s} {t:8.2f} s")


def load_continuous(name: str) -> tuple[np.ndarray, np.ndarray]:
    """A classification set of ../shared/data/continuous/ (its train rows), or scikit-learn's
    iris, wine or breast_cancer."""
    if name in SKLEARN:
        import sklearn.datasets as ds

        return getattr(ds, f"load_{name}")(return_X_y=True)
    import pandas as pd

    df = pd.read_csv(DATA / "continuous" / f"{name}.csv.gz")
    df = df[df["split"] == "train"]
    return df.filter(like="x").to_numpy(float), np.unique(df["label"], return_inverse=True)[1]


def midpoints(X: np.ndarray) -> np.ndarray:
    """One 0/1 column ``x_j <= t`` per midpoint ``t`` of every column (GOSDT's input)."""
    cols = []
    for j in range(X.shape[1]):
        v = np.unique(X[:, j])
        t = (v[1:] + v[:-1]) / 2
        cols.append(X[:, j][:, None] <= t[None, :])
    return np.concatenate(cols, axis=1).astype(np.int64)


def part3(args, keep) -> None:
    from exactree import SparseTreeClassifier
    from exactree.solvers.branches import search

    print(f"\n== Part 3: raw numeric columns, side by side with GOSDT on every midpoint (its "
          f"limit {args.gosdt_limit} s, ours {args.limit:g} s) ==")
    print("objectives as misclassification rate + lambda * leaves (GOSDT's form = ours + lambda)")
    head = (f"{'dataset':14s} {'n':>5s} {'cols':>4s} {'thr':>6s} {'lambda':>6s} | "
            f"{'ours obj':>9s} {'status':>12s} {'gap':>7s} {'time s':>8s} | {'GOSDT obj':>9s} "
            f"{'status':>11s} {'time s':>8s} | {'ratio':>7s} {'same':>5s}")
    print(head)
    print("-" * len(head))
    saved = dict(search.solve.__kwdefaults__)
    search.solve.__kwdefaults__.update({name: False for name in args.off})
    ratios, gosdt_stuck = [], []
    try:
        for name in args.cont:
            if not keep(name):
                continue
            X, y = load_continuous(name)
            B = midpoints(X)
            for lam in args.cont_lams:
                t = time.perf_counter()
                clf = SparseTreeClassifier(penalty=lam, time_limit=args.limit).fit(X, y)
                t = time.perf_counter() - t
                g_status, g_ub, g_lb, g_it, g_t = gosdt(B, y, lam, args.gosdt_limit,
                                                        args.gosdt_mem)
                our_obj = clf.objective_ + lam
                both = clf.status_ == "optimal" and g_status == "converged"
                same = abs(our_obj - g_ub) < 1e-6 if both else None
                if both and same:
                    ratios.append(t / g_t)
                if g_status != "converged":
                    gosdt_stuck.append((f"{name} {lam:g}", clf.status_, t))
                print(f"{name:14s} {len(y):5d} {X.shape[1]:4d} {B.shape[1]:6d} {lam:6.3f} | "
                      f"{our_obj:9.6f} {clf.status_:>12s} "
                      f"{clf.objective_ - clf.lower_bound_:7.4f} {t:8.2f} | {g_ub:9.6f} "
                      f"{g_status:>11s} {g_t:8.2f} | {t / g_t if both else math.nan:7.4f} "
                      f"{'-' if same is None else ('yes' if same else 'NO'):>5s}", flush=True)
    finally:
        search.solve.__kwdefaults__.clear()
        search.solve.__kwdefaults__.update(saved)
    if ratios:
        gm = math.exp(np.mean(np.log(ratios)))
        print(f"\ngeometric-mean time ratio ours/GOSDT over {len(ratios)} rows both solved "
              f"with equal objectives: {gm:.4f} (goal <= 0.1)")
    if gosdt_stuck:
        proven = [r for r in gosdt_stuck if r[1] == "optimal"]
        print(f"GOSDT did not prove {len(gosdt_stuck)} problem(s) within {args.gosdt_limit} s; "
              f"we proved {len(proven)} of them within {args.limit:g} s (goal: all):")
        for label, status, t in gosdt_stuck:
            print(f"  {label:34s} {status:>12s} {t:8.2f} s")


def _onehot(name: str) -> tuple[np.ndarray, np.ndarray]:
    X, y = load_categorical(name)
    return one_hot_drop_last(X), y


if __name__ == "__main__":
    main()
