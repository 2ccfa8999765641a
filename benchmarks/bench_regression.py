"""Optimal regression trees: exactree's OptimalTreeRegressor next to STreeD, same process.

    python benchmarks/bench_regression.py                  # depths 2-3, every regression set
    python benchmarks/bench_regression.py --depths 4 --limit 600

(a) Both solvers get the *same* binary features: ``x <= t`` for 20 quantile thresholds per
    column, built here (exactree's data layer merges each column's nested 0/1 tests back into
    one ordered feature). STreeD is ``pystreed.STreeDRegressor(optimization_task="regression")``
    (least squares, depth-limited, no penalty). Both training SSEs are printed, a mismatch is
    flagged, and the ratio exactree / STreeD is summarised by its geometric mean per depth.
(b) exactree on the raw values with every threshold: its SSE can only be lower than (a)'s
    (a violation is flagged); its time is printed.
(c) ``--cost-complexity A [A ...]``: sparse regression, ``SSE / SSE_0 + alpha * splits`` (SSE_0:
    the single leaf's), on (a)'s binary features: exactree's ``cost_complexity`` against
    STreeD's ``cost-complex-regression`` and against OSRT (``osrt``, if installed: it charges
    ``alpha`` per leaf, so its objective is ours plus ``alpha``; its ``depth_budget`` counts the
    leaves' level). Objectives are recomputed from each model's predictions and size.

Data: the regression sets of ``../shared/data/continuous/`` (train split) and scikit-learn's
diabetes. Both sides are timed through ``fit`` as a user calls it, warm (each fits once before
timing), runs under a second repeated (up to three times, millisecond runs up to fifteen) and
the fastest kept. Needs the bench extra: ``pip install -e ".[bench]"``.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
from bench_continuous import best_of  # (result, seconds) of the fastest of a few runs

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "continuous"
SETS = ("concrete", "fish", "qsar", "diabetes")
QUANTILES = 20


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features and targets of one regression set (train split of the shared files)."""
    if name == "diabetes":
        from sklearn.datasets import load_diabetes

        return load_diabetes(return_X_y=True)
    import pandas as pd

    df = pd.read_csv(DATA / f"{name}.csv.gz")
    df = df[df["split"] == "train"]
    return df.filter(like="x").to_numpy(np.float64), df["target"].to_numpy(np.float64)


def thermometer(X: np.ndarray, k: int = QUANTILES) -> np.ndarray:
    """0/1 columns ``x <= t`` for up to ``k`` distinct quantile thresholds per column (those
    that split the rows), the thresholds of one column side by side in increasing order."""
    cols = []
    for x in X.T:
        ts = np.unique(np.quantile(x, np.linspace(0, 1, k + 2)[1:-1]))
        for t in ts:
            c = x <= t
            if c.any() and not c.all():
                cols.append(c)
    return np.array(cols, np.float64).T.reshape(len(X), len(cols))


def sse(y: np.ndarray, pred: np.ndarray) -> float:
    return float(((y - pred) ** 2).sum())


def ours(X, y, depth, limit):
    from exactree import OptimalTreeRegressor

    model = OptimalTreeRegressor(max_depth=depth, time_limit=limit)
    start = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - start
    if model.status_ != "optimal":
        print(f"    exactree stopped: {model.status_}")
    return sse(y, model.predict(X)), seconds


def streed(X, y, depth, limit):
    from pystreed import STreeDRegressor

    model = STreeDRegressor(optimization_task="regression", max_depth=depth, time_limit=limit)
    start = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - start
    return sse(y, model.predict(X)), seconds


def penalised(y: np.ndarray, pred: np.ndarray, splits: int, alpha: float) -> float:
    """``SSE / SSE_0 + alpha * splits`` of a model's training predictions."""
    sse0 = sse(y, np.full(len(y), y.mean()))
    return sse(y, pred) / (sse0 if sse0 > 0 else 1.0) + alpha * splits


def ours_cc(X, y, depth, limit, alpha):
    from exactree import OptimalTreeRegressor

    model = OptimalTreeRegressor(max_depth=depth, cost_complexity=alpha, time_limit=limit)
    start = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - start
    if model.status_ != "optimal":
        print(f"    exactree stopped: {model.status_}")
    return penalised(y, model.predict(X), model.tree_.n_splits, alpha), seconds


def streed_cc(X, y, depth, limit, alpha):
    from pystreed import STreeDRegressor

    model = STreeDRegressor(optimization_task="cost-complex-regression", max_depth=depth,
                            cost_complexity=alpha, time_limit=limit)
    start = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - start
    return penalised(y, model.predict(X), model.get_n_leaves() - 1, alpha), seconds


def osrt_cc(X, y, depth, limit, alpha):
    """OSRT's fit (its prints silenced), or None where it is not installed."""
    import contextlib
    import io

    try:
        import pandas as pd
        from osrt import OSRT
    except ImportError:
        return None
    model = OSRT({"regularization": alpha, "depth_budget": depth + 1, "time_limit": limit,
                  "metric": "L2", "verbose": False})
    frame = pd.DataFrame(X.astype(np.int64))
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        model.fit(frame, pd.Series(y))
    seconds = time.perf_counter() - start
    if getattr(model, "timeout", False):
        return math.nan, seconds
    return penalised(y, model.predict(frame), model.leaves() - 1, alpha), seconds


def cost_complexity_table(args) -> int:
    """Part (c); returns the number of mismatches."""
    ratios: dict[str, list[float]] = {"STreeD": [], "OSRT": []}
    mismatches = 0
    for alpha in args.cost_complexity:
        for depth in args.depths:
            for name in args.datasets:
                X, y = load(name)
                B = thermometer(X)
                for run in (ours_cc, streed_cc, osrt_cc):  # warm: compile / load
                    run(B[:200], y[:200], depth, args.limit, alpha)
                e_ours, t_ours = best_of(ours_cc, B, y, depth, args.limit, alpha)
                line = (f"{name:10s} d={depth} alpha={alpha:<7g} exactree {e_ours:9.6f} "
                        f"{t_ours:8.4f}s")
                for peer, run in (("STreeD", streed_cc), ("OSRT", osrt_cc)):
                    if run(B[:5], y[:5], depth, args.limit, alpha) is None:
                        continue
                    e_peer, t_peer = best_of(run, B, y, depth, args.limit, alpha)
                    if math.isnan(e_peer):
                        line += f"  {peer} stopped at its time limit ({t_peer:.1f}s)"
                        continue
                    ok = same(e_ours, e_peer)
                    mismatches += not ok
                    ratios[peer].append(t_ours / t_peer)
                    line += (f"  {peer} {e_peer:9.6f} {t_peer:8.4f}s ratio {t_ours / t_peer:6.3f}"
                             f" {'same' if ok else 'MISMATCH'}")
                print(line, flush=True)
    for peer, rs in ratios.items():
        if rs:
            gm = math.exp(sum(math.log(r) for r in rs) / len(rs))
            print(f"cost complexity: {len(rs)} problems, geometric-mean ratio exactree/{peer} "
                  f"{gm:.3f}, worst {max(rs):.3f}")
    return mismatches


def same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--depths", type=int, nargs="+", default=[2, 3])
    parser.add_argument("--limit", type=float, default=600.0, help="seconds per fit")
    parser.add_argument("--datasets", nargs="+", default=list(SETS))
    parser.add_argument("--cost-complexity", type=float, nargs="+", default=[],
                        help="run part (c) with these alphas instead of (a) and (b)")
    args = parser.parse_args()
    if args.cost_complexity:
        if cost_complexity_table(args):
            print("MISMATCHES")
        return
    ratios: dict[int, list[float]] = {d: [] for d in args.depths}
    mismatches = 0
    for depth in args.depths:
        for name in args.datasets:
            X, y = load(name)
            B = thermometer(X)
            for run, data in ((ours, B), (streed, B), (ours, X)):  # warm: compile / load
                run(data[:50], y[:50], depth, args.limit)
            e_ours, t_ours = best_of(ours, B, y, depth, args.limit)
            e_peer, t_peer = best_of(streed, B, y, depth, args.limit)
            e_raw, t_raw = best_of(ours, X, y, depth, args.limit)
            ok = same(e_ours, e_peer)
            mismatches += not ok
            ratio = t_ours / t_peer
            ratios[depth].append(ratio)
            raw_ok = e_raw <= e_ours * (1 + 1e-9)
            mismatches += not raw_ok
            print(f"{name:10s} d={depth} n={len(y):5d} F={X.shape[1]:2d} bin={B.shape[1]:3d}  "
                  f"exactree {e_ours:12.6g} {t_ours:8.4f}s  STreeD {e_peer:12.6g} "
                  f"{t_peer:8.4f}s  ratio {ratio:5.2f}  {'same' if ok else 'MISMATCH'}  |  "
                  f"raw {e_raw:12.6g} {t_raw:8.4f}s{'' if raw_ok else '  WORSE THAN BINARY'}",
                  flush=True)
    for depth, rs in ratios.items():
        if rs:
            gm = math.exp(sum(math.log(r) for r in rs) / len(rs))
            print(f"depth {depth}: {len(rs)} sets, geometric-mean ratio exactree/STreeD "
                  f"{gm:.2f}, worst {max(rs):.2f}")
    if mismatches:
        print(f"{mismatches} MISMATCHES")


if __name__ == "__main__":
    main()
