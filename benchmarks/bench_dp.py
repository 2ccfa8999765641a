"""exactree's MurTree solver next to STreeD (and DL8.5) on the same data, same process.

    python benchmarks/bench_dp.py                        # binary benchmarks, depths 2-4, vs STreeD
    python benchmarks/bench_dp.py --depths 5 --datasets anneal vehicle
    python benchmarks/bench_dp.py --dl85                 # also pydl8.5 at depth 4
    python benchmarks/bench_dp.py --startup              # cold compile and warm-cache start-up
    python benchmarks/bench_dp.py --ablation --depths 4  # each technique switched, time ratio
    python benchmarks/bench_dp.py --estimator            # time OptimalTreeClassifier.fit instead

Raw numeric data against ConTree: ``benchmarks/bench_continuous.py``.

Both solvers are warm (exactree compiled before timing; STreeD is C++). Each row prints both
optima, both times and the ratio exactree / peer; a mismatch of optima is flagged. Runs under
a second are repeated (up to three times, for both solvers alike) and the fastest is kept, so
millisecond timings are not dominated by noise.
Needs the bench extra: pip install -e ".[bench]".
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "binary"


def load(name: str):
    a = np.loadtxt(DATA / f"{name}.txt", dtype=np.int64)
    return a[:, 1:], a[:, 0]


def known_optima() -> dict:
    with open(DATA / "optima.csv") as f:
        return {(r["dataset"], int(r["max_depth"])): (float(r["optimal_misclassifications"]),
                                                      float(r["streed_seconds"]))
                for r in csv.DictReader(f)}


def best_of(run, *args, **kwargs):
    """``run``'s result with the least seconds (its second item) over up to three runs, repeating
    only while the runs take under a second."""
    best = run(*args, **kwargs)
    for _ in range(2):
        if best[1] >= 1.0:
            break
        again = run(*args, **kwargs)
        if again[1] < best[1]:
            best = again
    return best


def ours(X, y, depth, time_limit, techniques=None):
    if ESTIMATOR:
        return through_estimator(X, y, depth, time_limit, techniques)
    from exactree.solvers.dp.solver import DPSolver

    yi = np.unique(y, return_inverse=True)[1]
    start = time.perf_counter()
    solver = DPSolver(X.astype(bool), yi, int(yi.max()) + 1, max_depth=depth, techniques=techniques)
    sol = solver.solve(time_limit=time_limit)
    return sol.cost, time.perf_counter() - start, sol.optimal


def through_estimator(X, y, depth, time_limit, techniques=None):
    """``ours`` as users call it: ``OptimalTreeClassifier.fit`` with its input checks,
    binarisation and search choice."""
    from exactree import OptimalTreeClassifier

    start = time.perf_counter()
    model = OptimalTreeClassifier(max_depth=depth, time_limit=time_limit,
                                  techniques=techniques).fit(X, y)
    return model.objective_, time.perf_counter() - start, model.status_ == "optimal"


# --estimator: time OptimalTreeClassifier.fit instead of the internal solver.
ESTIMATOR = False


def streed(X, y, depth, time_limit):
    from pystreed import STreeDClassifier

    model = STreeDClassifier(max_depth=depth, cost_complexity=0, time_limit=time_limit)
    start = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - start
    return float((model.predict(X) != y).sum()), seconds


def dl85(X, y, depth, time_limit):
    from pydl85 import DL85Classifier

    model = DL85Classifier(max_depth=depth, time_limit=time_limit)
    start = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - start
    return float((model.predict(X) != y).sum()), seconds, not model.timeout_


def warm_up(time_limit) -> None:
    """Compile (or load from the cache) every kernel path before anything is timed."""
    rng = np.random.default_rng(0)
    X, y = rng.integers(0, 2, (200, 12)), rng.integers(0, 2, 200)
    for depth in (2, 3, 4):
        ours(X, y, depth, time_limit)
        ours(X, y, depth, None)


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def run_binary(args) -> None:
    optima = known_optima()
    names = args.datasets or sorted({d for d, _ in optima})
    warm_up(args.time_limit)
    print(f"{'dataset':34s} {'d':>2s} {'exactree':>9s} {'peer':>9s} {'ours s':>8s} {'peer s':>8s} "
          f"{'ratio':>6s}  check")
    ratios: dict[int, list[float]] = {}
    for depth in args.depths:
        for name in names:
            if (name, depth) not in optima and depth <= 4:
                continue  # STreeD did not finish within two minutes when optima.csv was made
            X, y = load(name)
            peer_cost, peer_s = best_of(streed, X, y, depth, args.time_limit)
            cost, our_s, proven = best_of(ours, X, y, depth, args.time_limit)
            if not proven or peer_s >= args.time_limit:
                print(f"{name:34s} {depth:2d} {'timeout' if not proven else cost:>9} {peer_cost:9.0f} "
                      f"{our_s:8.3f} {peer_s:8.3f}      -  (not both finished)")
                continue
            ratio = our_s / max(peer_s, 1e-4)
            ratios.setdefault(depth, []).append(ratio)
            check = "ok" if cost == peer_cost else "MISMATCH"
            print(f"{name:34s} {depth:2d} {cost:9.0f} {peer_cost:9.0f} {our_s:8.3f} {peer_s:8.3f} "
                  f"{ratio:6.2f}  {check}", flush=True)
    for depth, rs in ratios.items():
        print(f"depth {depth}: geometric-mean time ratio exactree/STreeD = {geomean(rs):.2f} "
              f"over {len(rs)} datasets, worst {max(rs):.2f}")


def run_dl85(args) -> None:
    optima = known_optima()
    names = args.datasets or sorted({d for d, _ in optima})
    warm_up(args.time_limit)
    rs = []
    print(f"{'dataset':34s} {'exactree':>9s} {'DL8.5':>9s} {'ours s':>8s} {'DL8.5 s':>8s} {'ratio':>6s}")
    for name in names:
        if (name, 4) not in optima:
            continue
        X, y = load(name)
        cost, our_s, _ = best_of(ours, X, y, 4, args.time_limit)
        peer_cost, peer_s, finished = best_of(dl85, X, y, 4, args.time_limit)
        ratio = our_s / max(peer_s, 1e-4)
        if finished:
            rs.append(ratio)
        mark = "ok" if cost == peer_cost else ("DL8.5 timeout" if not finished else "MISMATCH")
        print(f"{name:34s} {cost:9.0f} {peer_cost:9.0f} {our_s:8.3f} {peer_s:8.3f} {ratio:6.2f}  {mark}",
              flush=True)
    print(f"depth 4: geometric-mean time ratio exactree/DL8.5 = {geomean(rs):.2f} over {len(rs)}")


ABLATION_SETS = ("anneal", "diabetes", "heart-cleveland", "kr-vs-kp", "tic-tac-toe", "vote",
                 "yeast", "mushroom", "monk2_bin")


def run_ablation(args) -> None:
    """Each technique switched away from its default alone: time ratio switched / default."""
    from exactree.solvers.dp.solver import DEFAULT_OFF, TECHNIQUES

    warm_up(args.time_limit)
    for tech in TECHNIQUES:  # compile the switched paths too
        X, y = np.random.default_rng(0).integers(0, 2, (200, 12)), np.arange(200) % 2
        ours(X, y, 3, None, {tech: tech in DEFAULT_OFF})
    names = args.datasets or ABLATION_SETS
    print(f"{'dataset':28s} {'d':>2s} {'default s':>9s} " + " ".join(f"{t[:10]:>10s}" for t in TECHNIQUES))
    ratios: dict[str, list[float]] = {t: [] for t in TECHNIQUES}
    for depth in args.depths:
        for name in names:
            X, y = load(name)
            cost, base_s, proven = best_of(ours, X, y, depth, args.time_limit)
            cells = []
            for tech in TECHNIQUES:
                c, s, ok = best_of(ours, X, y, depth, args.time_limit, {tech: tech in DEFAULT_OFF})
                mark = "" if (c == cost and ok) else ("T" if not ok else "!")
                cells.append(f"{s / base_s:9.2f}{mark or ' '}")
                if ok and proven:
                    ratios[tech].append(s / base_s)
            print(f"{name:28s} {depth:2d} {base_s:9.3f} " + " ".join(cells), flush=True)
    print("geometric-mean time ratio, technique switched / default (>1: the default is faster; "
          "T: time limit, !: different optimum):")
    for tech, rs in ratios.items():
        state = "on" if tech in DEFAULT_OFF else "off"
        print(f"  {tech:18s} switched {state:3s} {geomean(rs):6.2f} over {len(rs)}")


# Import plus a first depth-3 fit on the bundled anneal data, through the estimator and
# through the solver alone (which needs neither scikit-learn nor its import time).
STARTUP = {
    "OptimalTreeClassifier": """
import time; t = time.perf_counter()
from exactree import OptimalTreeClassifier, load_anneal
X, y, _ = load_anneal()
OptimalTreeClassifier(max_depth=3).fit(X, y)
print(time.perf_counter() - t)
""",
    "DPSolver": """
import time; t = time.perf_counter()
from exactree.data import load_anneal
from exactree.solvers.dp.solver import DPSolver
X, y, _ = load_anneal()
DPSolver(X, y, 2, max_depth=3).solve()
print(time.perf_counter() - t)
""",
}
SKLEARN_IMPORT = "import time; t = time.perf_counter(); import sklearn.base; print(time.perf_counter() - t)"


def run_startup(args) -> None:
    """Cold: a fresh Numba cache directory; warm: the same directory again, new process."""
    def seconds(code, env):
        out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                             capture_output=True, text=True).stdout
        return float(out.strip())

    for api, code in STARTUP.items():
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            for label in ("cold (compile)", "warm cache, fresh process", "warm cache, fresh process"):
                print(f"{api:22s} {label:26s} import + first fit (anneal, depth 3): "
                      f"{seconds(code, env):6.2f} s", flush=True)
    print(f"of which importing scikit-learn alone takes {seconds(SKLEARN_IMPORT, os.environ):.2f} s")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--depths", type=int, nargs="+", default=[2, 3, 4])
    p.add_argument("--datasets", nargs="+")
    p.add_argument("--time-limit", type=float, default=120.0)
    p.add_argument("--dl85", action="store_true", help="compare with pydl8.5 at depth 4")
    p.add_argument("--startup", action="store_true", help="measure compile and start-up times")
    p.add_argument("--ablation", action="store_true", help="switch each technique alone")
    p.add_argument("--estimator", action="store_true",
                   help="time OptimalTreeClassifier.fit (input checks included), not the solver")
    args = p.parse_args()
    global ESTIMATOR
    ESTIMATOR = args.estimator
    if args.startup:
        run_startup(args)
    elif args.dl85:
        run_dl85(args)
    elif args.ablation:
        run_ablation(args)
    else:
        run_binary(args)


if __name__ == "__main__":
    main()
