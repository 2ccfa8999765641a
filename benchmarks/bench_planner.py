"""Which search should a fit run? A grid of generated problems, each search forced and ``auto``.

Every cell is one generated problem (rows, features of one kind, classes or regression, depth),
fitted through ``OptimalTreeClassifier`` / ``OptimalTreeRegressor`` as users call them: with
``search="binary"`` and ``search="ordered"`` forced (each capped at ``--cap`` seconds) and with
``search="auto"`` (the planner, :mod:`exactree.core.planner`). It prints one line per cell and a
summary: ``auto`` against the faster forced search (goal: within 1.25x in every cell, geometric
mean 1.05 or less, never the capped search when the other finished).

The records (``benchmarks/results/planner.csv``) are what the planner's cost model is fitted on:
``python benchmarks/bench_planner.py --fit`` reads them and prints the constants that go into
:data:`exactree.core.planner.MODEL` (least squares on log time ratios of the cells where both
forced searches finished).

    python benchmarks/bench_planner.py --quick            # a few minutes
    python benchmarks/bench_planner.py                    # the whole grid (hours)
    python benchmarks/bench_planner.py --fit              # refit the cost model
"""

from __future__ import annotations

import argparse
import csv
import itertools
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).parent / "results" / "planner.csv"
KINDS = ("binary", "thermometer", "integer", "continuous", "mixed")
FIELDS = ("rows", "features", "kind", "classes", "depth", "search", "seconds", "status",
          "objective", "chosen", "m_binary", "f_ordered", "note")
#: Bytes a forced binary search may take before the cell is skipped (rows x binary features).
MAX_CELLS = 3 * 10**9
#: Binary features beyond which the forced binary search is not run: one depth-two solve over
#: them (pair counts of every two features) is not cut by the time limit (200 rows x 102,000
#: thresholds took 664 s at depth 2 with a 10-s cap).
MAX_BINARY = 20_000


def make_problem(rows: int, features: int, kind: str, classes: int, seed: int = 0):
    """``(X, y)``: ``features`` columns of ``kind``; labels from a planted depth-3 tree on a
    few columns with 10% of them flipped (``classes == 0``: a regression target)."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(rows, features))
    if kind == "binary":
        X = (Z < rng.uniform(-1, 1, features)).astype(float)
    elif kind == "thermometer":  # numeric columns coded at 10 quantile thresholds each
        base = max(features // 10, 1)
        cuts = np.quantile(Z[:, :base], np.linspace(0.05, 0.95, 10), axis=0)  # 10 x base
        X = np.concatenate([(Z[:, j:j + 1] <= cuts[:, j]).astype(float) for j in range(base)],
                           axis=1)[:, :features]
        Z = np.repeat(Z[:, :base], 10, axis=1)[:, :features]
    elif kind == "integer":
        values = rng.integers(3, 21, features)
        X = np.floor((Z - Z.min(0)) / (np.ptp(Z, 0) + 1e-9) * values).astype(float)
    else:
        X = np.round(Z, 3)
    score = (Z[:, 0] > 0).astype(float) + (Z[:, min(1, features - 1)] > 0.5) \
        + 0.5 * (Z[:, min(2, features - 1)] < 0)
    if classes == 0:
        y = score + rng.normal(scale=0.3, size=rows)
    else:
        y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))
        flip = rng.random(rows) < 0.1
        y = np.where(flip, rng.integers(0, classes, rows), y)
    if kind == "mixed":  # a quarter of the columns categorical (strings of 3-8 values)
        X = pd.DataFrame(X, columns=[f"x{j}" for j in range(features)])
        for j in range(0, features, 4):
            X[f"x{j}"] = pd.Series(np.digitize(Z[:, j], [-1, -0.3, 0.3, 1]).astype(str)
                                   ).astype("category")
    return X, y


def fit_once(X, y, classes: int, depth: int, search: str, cap: float) -> dict:
    from exactree import OptimalTreeClassifier, OptimalTreeRegressor

    if classes == 0:  # one search for squared error: "ordered" and "auto" are the same fit
        est = OptimalTreeRegressor(max_depth=depth, time_limit=cap)
    else:
        est = OptimalTreeClassifier(max_depth=depth, search=search, time_limit=cap)
    start = time.perf_counter()
    try:
        est.fit(X, y)
    except (MemoryError, ValueError) as e:
        return {"seconds": time.perf_counter() - start, "status": "refused",
                "objective": math.nan, "chosen": "", "note": str(e)[:60]}
    seconds = time.perf_counter() - start
    plan = getattr(est, "plan_", None)
    return {"seconds": seconds, "status": est.status_, "objective": est.objective_,
            "chosen": getattr(est, "search_", None) or "", "note": "" if plan is None else plan.reason[:80],
            "m_binary": getattr(plan, "n_binary", getattr(est, "n_binary_features_", "")),
            "f_ordered": getattr(plan, "n_ordered", "")}


def binary_features(X) -> int:
    """The thresholds and category tests of ``X`` (what the binary search takes as features)."""
    cols = [X.iloc[:, j] for j in range(X.shape[1])] if hasattr(X, "iloc") else list(X.T)
    return sum(len(np.unique(np.asarray(c))) - 1 for c in cols)


def ordered_count(X, kind: str, m: int) -> int:
    """The ordered features of a generated problem (what the planner counts), for records
    made by a version without a planner: thermometer codes merge into one feature per column,
    a categorical column gives one feature per category test."""
    features = X.shape[1]
    if kind == "thermometer":
        return max(features // 10, 1)
    if kind == "binary":
        return m
    if kind == "mixed":
        cats = len(range(0, features, 4))
        return features - cats + (m - sum(len(np.unique(X.iloc[:, j])) - 1
                                          for j in range(features) if j % 4))
    return features


def grid(args) -> list[tuple]:
    if args.quick:
        return [(r, f, k, c, d) for r, f, k, c, d in itertools.product(
            [200, 2000], [16, 64, 512], KINDS, [2, 3], [2, 3])
            if not (f == 512 and r == 2000 and d == 3)]
    return list(itertools.product(args.rows, args.features, args.kinds, args.classes,
                                  args.depths))


def warm_up() -> None:
    """Load (or compile) every kernel the grid uses, outside the timings."""
    for kind, classes in (("binary", 2), ("continuous", 3), ("continuous", 0), ("mixed", 2)):
        X, y = make_problem(60, 4, kind, classes)
        for search in ("binary", "ordered", "auto"):
            if classes == 0 and search == "binary":
                continue
            fit_once(X, y, classes, 3, search, 30)


def run(args) -> None:
    warm_up()
    RESULTS.parent.mkdir(exist_ok=True)
    new = not RESULTS.exists() or args.fresh
    with open(RESULTS, "w" if new else "a", newline="") as f:
        out = csv.DictWriter(f, FIELDS)
        if new:
            out.writeheader()
        for rows, features, kind, classes, depth in grid(args):
            cell = dict(rows=rows, features=features, kind=kind, classes=classes, depth=depth)
            if rows * features * (10 if kind == "continuous" else 1) > MAX_CELLS:
                print(f"skip {cell}: more than {MAX_CELLS:.0e} cells (memory)", flush=True)
                continue
            X, y = make_problem(rows, features, kind, classes)
            times = {}
            searches = ("ordered", "auto") if classes == 0 else ("binary", "ordered", "auto")
            if binary_features(X) > MAX_BINARY:
                searches = tuple(s for s in searches if s != "binary")
            for search in searches:
                r = fit_once(X, y, classes, depth, search, args.cap)
                if r.get("m_binary") not in ("", None) and not r.get("f_ordered"):
                    r["f_ordered"] = ordered_count(X, kind, int(r["m_binary"]))
                r.setdefault("m_binary", "")
                r.setdefault("f_ordered", "")
                out.writerow({**cell, "search": search, **r})
                f.flush()
                times[search] = (r["seconds"], r["status"], r["chosen"])
            print(cell, {s: (round(t, 3), st, ch) for s, (t, st, ch) in times.items()},
                  flush=True)
    summarise(RESULTS)


def _cells(path: Path) -> dict:
    cells: dict = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            try:
                key = (int(r["rows"]), int(r["features"]), r["kind"], int(r["classes"]),
                       int(r["depth"]))
                float(r["seconds"])
            except (TypeError, ValueError):  # a line two runs wrote into at once
                continue
            cells.setdefault(key, {})[r["search"]] = r
    return cells


def summarise(path: Path) -> None:
    """``auto`` against the faster forced search, per cell and overall."""
    ratios, bad, wrong_cap = [], [], []
    for key, runs in _cells(path).items():
        forced = [runs[s] for s in ("binary", "ordered") if s in runs]
        if "auto" not in runs or not forced:
            continue
        done = [r for r in forced if r["status"] in ("optimal", "optimal_on_binarized")]
        auto = runs["auto"]
        if not done:
            continue
        best = min(float(r["seconds"]) for r in done)
        ratio = float(auto["seconds"]) / max(best, 1e-4)
        ratios.append(ratio)
        if auto["status"] not in ("optimal", "optimal_on_binarized"):
            wrong_cap.append(key)
        elif ratio > 1.25 and float(auto["seconds"]) > 0.05:
            bad.append((key, round(ratio, 2), auto["chosen"]))
    if not ratios:
        print("no cell with auto and a finished forced search")
        return
    gm = math.exp(np.mean(np.log(ratios)))
    print(f"\nauto / faster search: geometric mean {gm:.3f} over {len(ratios)} cells; "
          f"worst {max(ratios):.2f}; cells above 1.25x (and 50 ms): {len(bad)}; "
          f"auto capped where a forced search finished: {len(wrong_cap)}")
    for b in bad:
        print("  above 1.25x:", b)
    for k in wrong_cap:
        print("  capped:", k)


def _timed_cells(path: Path) -> list[tuple]:
    """``(shape, seconds, finished)`` per classification cell with both searches run and at
    least one finished: ``seconds`` and ``finished`` by search. Cells whose faster search took
    under 5 ms (Python around the kernels, not the search) are left out."""
    from exactree.core.planner import ProblemShape

    out = []
    for (rows, features, kind, classes, depth), runs in _cells(path).items():
        if classes == 0 or "binary" not in runs or "ordered" not in runs:
            continue
        ro = runs["ordered"]
        if not (ro["m_binary"] and ro["f_ordered"]):  # (the ordered run counts exactly)
            continue
        seconds = {s: float(runs[s]["seconds"]) for s in ("binary", "ordered")}
        finished = {s: runs[s]["status"] in ("optimal", "optimal_on_binarized")
                    for s in ("binary", "ordered")}
        if not any(finished.values()):
            continue
        if min(seconds[s] for s in seconds if finished[s]) < 0.005:
            continue
        shape = ProblemShape(rows, int(float(ro["m_binary"])), int(float(ro["f_ordered"])),
                             classes, depth)
        out.append((shape, seconds, finished))
    return out


def time_lost(cells: list[tuple]) -> float:
    """Mean log of (what the planner's choice takes, races included) / (the faster search),
    under the planner's current :data:`~exactree.core.planner.MODEL`."""
    from exactree.core import planner

    lost = []
    for shape, seconds, finished in cells:
        best = min(seconds[s] for s in seconds if finished[s])
        plan = planner.plan_search(shape)
        other = "ordered" if plan.search == "binary" else "binary"
        took = seconds[plan.search] if finished[plan.search] else 2 * seconds[plan.search]
        if plan.race:  # each search gets RACE_SECONDS first
            r = planner.RACE_SECONDS
            if finished[plan.search] and seconds[plan.search] <= r:
                took = seconds[plan.search]
            elif finished[other] and seconds[other] <= r:
                took = r + seconds[other]
            else:
                took += 2 * r
        lost.append(math.log(took / best))
    return float(np.mean(lost))


def fit_model(path: Path) -> None:
    """The constants of :data:`~exactree.core.planner.MODEL` that lose the least time over the
    recorded cells (a capped search counted at twice its cap), searched on a grid; among
    equally good ones, the one whose predicted log ratios are nearest the measured ones."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "src"))
    from exactree.core import planner

    cells = _timed_cells(path)
    if len(cells) < 6:
        print(f"only {len(cells)} usable cells: run the grid first")
        return
    measured = np.array([math.log(s["binary"] / s["ordered"]) for _, s, _ in cells])
    ranked = []
    for c0, c1, c2, c4 in itertools.product(np.arange(-7, 0.01, 0.25), (0.6, 0.8, 1.0, 1.2, 1.4),
                                            (-0.2, 0.0, 0.2), (-0.3, -0.15, 0.0, 0.15, 0.3)):
        planner.MODEL = (float(c0), c1, c2, 0.0, c4, 0.0)
        err = measured - np.array([planner.predicted_log_ratio(s) for s, _, _ in cells])
        ranked.append((round(time_lost(cells), 6), float(np.mean(err ** 2)), planner.MODEL))
    lost, mse, model = min(ranked)
    print("MODEL =", tuple(round(c, 4) for c in model))
    print(f"{len(cells)} cells: time lost {math.exp(lost):.3f}x (geometric mean), "
          f"residual sd {math.sqrt(mse):.2f} (log units)")


def _suite_sets():
    """``(name, X, y)`` of every shared benchmark set: the binary ones and the continuous
    classification ones (train split), plus scikit-learn's iris, wine and breast cancer."""
    import bench_continuous
    import bench_dp

    for path in sorted(bench_dp.DATA.glob("*.txt")):
        if path.name.startswith(("LICENSE", "README")):
            continue
        X, y = bench_dp.load(path.stem)
        yield path.stem, X.astype(float), y
    for name in bench_continuous.SKLEARN_SETS + bench_continuous.SETS:
        X, y = bench_continuous.load(name)
        yield name, X, y


def old_rule(n_rows: int, n_binary: int, n_ordered: int) -> str:
    """The fixed thresholds the planner replaced: ordered from 32 splits per ordered feature
    (16 on at most 500 rows) or from 1,000 binary features."""
    per_feature = 16 if n_rows <= 500 else 32
    ordered = n_binary >= 1000 or n_binary >= per_feature * n_ordered
    return "ordered" if ordered else "binary"


def suites(args) -> None:
    """Every shared set at ``--depths``: both searches timed (best of three under a second,
    ``--cap`` each) and recorded (kind ``suite:<name>``, so ``--fit`` learns from real data
    too), and where the planner decides otherwise than the old fixed rule, how the two compare:
    no suite may get slower."""
    from exactree import OptimalTreeClassifier
    from exactree.core.planner import ProblemShape, plan_search

    sys.path.insert(0, str(Path(__file__).parent))
    warm_up()
    worse = []
    with open(RESULTS, "a", newline="") as f:
        out = csv.DictWriter(f, FIELDS)
        for name, X, y in _suite_sets():
            if args.sets and name not in args.sets:
                continue
            probe = OptimalTreeClassifier(max_depth=1, search="ordered").fit(X, y)
            m, F, K = probe.plan_.n_binary, probe.plan_.n_ordered, len(probe.classes_)
            for depth in args.depths:
                cell = dict(rows=len(X), features=X.shape[1], kind=f"suite:{name}", classes=K,
                            depth=depth)
                times = {"binary": math.inf}  # (not run beyond MAX_BINARY: see there)
                for search in ("binary", "ordered") if m <= MAX_BINARY else ("ordered",):
                    rec = None
                    for _ in range(3):
                        r = fit_once(X, y, K, depth, search, args.cap)
                        if rec is None or r["seconds"] < rec["seconds"]:
                            rec = r
                        if r["seconds"] > 1:
                            break
                    rec.update(m_binary=m, f_ordered=F)
                    out.writerow({**cell, "search": search, **rec})
                    f.flush()
                    done = rec["status"].startswith("optimal")
                    times[search] = rec["seconds"] if done else math.inf
                new = plan_search(ProblemShape(len(X), m, F, K, depth)).search
                old = old_rule(len(X), m, F)
                ratio = times[new] / max(times[old], 1e-6)
                flag = "" if new == old else f"  planner {new}: {ratio:.2f}x the old rule's"
                print(f"{name} depth {depth}: {m} binary / {F} ordered features, {len(X)} rows:"
                      f" binary {times['binary']:.4f} s, ordered {times['ordered']:.4f} s{flag}",
                      flush=True)
                if new != old and ratio > 1.1 and times[new] > 0.02:
                    worse.append((name, depth, round(ratio, 2)))
    print("\nslower than the old rule (over 10% and 20 ms):", worse or "none")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a small grid (minutes)")
    p.add_argument("--fit", action="store_true", help="refit the planner's cost model")
    p.add_argument("--fresh", action="store_true", help="overwrite the records")
    p.add_argument("--cap", type=float, default=60.0, help="seconds per forced run")
    p.add_argument("--rows", type=int, nargs="+", default=[200, 2000, 20000, 200000])
    p.add_argument("--features", type=int, nargs="+", default=[4, 16, 64, 512, 2048])
    p.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    p.add_argument("--classes", type=int, nargs="+", default=[2, 3, 6, 0],
                   help="0: regression")
    p.add_argument("--depths", type=int, nargs="+", default=[2, 3, 4])
    p.add_argument("--summary", action="store_true", help="only summarise the records")
    p.add_argument("--suites", action="store_true",
                   help="every shared set, both searches; where the planner and the old fixed "
                        "rule disagree")
    p.add_argument("--sets", nargs="+", help="only these shared sets (with --suites)")
    args = p.parse_args()
    os.environ.setdefault("PYTHONHASHSEED", "0")
    if args.suites:
        suites(args)
    elif args.fit:
        fit_model(RESULTS)
    elif args.summary:
        summarise(RESULTS)
    else:
        run(args)


if __name__ == "__main__":
    main()
