"""exactree on raw numeric data next to ConTree (and STreeD on thermometer codes), same process.

    python benchmarks/bench_continuous.py                   # depths 2-3, every continuous set
    python benchmarks/bench_continuous.py --depths 4 --limit 600
    python benchmarks/bench_continuous.py --scaling         # time against rows and depth
    python benchmarks/bench_continuous.py --thermometer     # quantile 0/1 codes vs STreeD, depth 4
    python benchmarks/bench_continuous.py --noisy           # large noisy synthetic data, depth 2
    python benchmarks/bench_continuous.py --peer pytrees    # against pytrees-rs's ConTree

exactree is timed through ``OptimalTreeClassifier.fit`` as a user calls it (input checks,
encoding, thresholds and all); ConTree through ``pycontree.ConTree.fit`` (or pytrees-rs's
``ConTreeClassifier.fit``), STreeD through
``pystreed.STreeDClassifier.fit``. Both sides are warm (compiled / loaded before timing); runs
under a second are repeated (up to three times, millisecond runs up to fifteen) and the fastest
kept. Each row prints both
training errors (a mismatch is flagged), both times and the ratio exactree / peer; the summary
gives the geometric mean of the ratios per depth. Needs the bench extra:
``pip install -e ".[bench]"``.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "continuous"
SETS = ("bank", "raisin", "rice", "wilt", "segment", "page", "occupancy", "bidding")
SKLEARN_SETS = ("iris", "wine", "breast_cancer")


def load(name: str, split: str = "train"):
    """Features and labels of one classification set (train split of the shared files)."""
    if name in SKLEARN_SETS:
        import sklearn.datasets

        return getattr(sklearn.datasets, f"load_{name}")(return_X_y=True)
    import pandas as pd

    df = pd.read_csv(DATA / f"{name}.csv.gz")
    if split != "all":
        df = df[df["split"] == split]
    return df.filter(like="x").to_numpy(np.float64), df["label"].to_numpy()


def best_of(run, *args):
    """``run``'s (errors, seconds) with the least seconds: runs under a second are repeated, up
    to three times, and millisecond runs up to fifteen times within 0.3 s, so that timer and
    scheduler noise does not decide small fits."""
    best = run(*args)
    spent, runs = best[1], 1
    while best[1] < 1.0 and (runs < 3 or (spent < 0.3 and runs < 15)):
        again = run(*args)
        spent, runs = spent + again[1], runs + 1
        if again[1] < best[1]:
            best = again
    return best


def ours(X, y, depth, limit):
    from exactree import OptimalTreeClassifier

    start = time.perf_counter()
    model = OptimalTreeClassifier(max_depth=depth, time_limit=limit).fit(X, y)
    seconds = time.perf_counter() - start
    errors = model.objective_ if model.status_ == "optimal" else math.nan
    return errors, seconds


def contree(X, y, depth, limit):
    from pycontree import ConTree

    model = ConTree(max_depth=depth, time_limit=limit)
    start = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - start
    errors = float((model.predict(X) != y).sum()) if seconds < limit else math.nan
    return errors, seconds


def pytrees_contree(X, y, depth, limit):
    """pytrees-rs's ConTree (its exact mode)."""
    from pytrees import ConTreeClassifier

    model = ConTreeClassifier(max_depth=depth, max_time=float(limit))
    start = time.perf_counter()
    model.fit(np.asarray(X, np.float64), y)
    seconds = time.perf_counter() - start
    errors = float((model.predict(X) != y).sum()) if model.status_ == "optimal" else math.nan
    return errors, seconds


PEERS = {"contree": (contree, "ConTree"), "pytrees": (pytrees_contree, "pytrees-ConTree")}


def streed(X, y, depth, limit):
    from pystreed import STreeDClassifier

    model = STreeDClassifier(max_depth=depth, cost_complexity=0, time_limit=limit)
    start = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - start
    errors = float((model.predict(X) != y).sum()) if seconds < limit else math.nan
    return errors, seconds


def compare(name, X, y, depth, limit, peer, label):
    e1, t1 = best_of(ours, X, y, depth, limit)
    e2, t2 = best_of(peer, X, y, depth, limit)
    same = "same" if e1 == e2 else "MISMATCH" if e1 == e1 and e2 == e2 else "timeout"
    ratio = t1 / t2
    print(f"{name:14s} d={depth} n={len(y):6d} F={X.shape[1]:3d}  exactree {e1:7.0f} "
          f"{t1:9.4f}s  {label} {e2:7.0f} {t2:9.4f}s  ratio {ratio:6.2f}  {same}", flush=True)
    return (ratio, t1, t2) if same == "same" else None


def warm():
    """Compile/load both sides before timing."""
    X, y = load("iris")
    ours(X, y, 3, None)
    contree(X, y, 2, 60)


def summary(ratios):
    for depth, rs in sorted(ratios.items()):
        if rs:
            geo = math.exp(sum(math.log(r) for r in rs) / len(rs))
            print(f"depth {depth}: {len(rs)} sets, geometric-mean ratio {geo:.2f}, "
                  f"worst {max(rs):.2f}")


def run_suite(depths, limit, names, peer="contree"):
    ratios = {}
    for depth in depths:
        for name in names:
            X, y = load(name)
            r = compare(name, X, y, depth, limit, *PEERS[peer])
            if r is not None:
                ratios.setdefault(depth, []).append(r[0])
    summary(ratios)


def run_scaling(limit):
    """Rows 1k, 10k, 100k (bootstrap samples of the largest set) at depth 2 and 3, and depth
    2-4 on one set: times next to ConTree, with the fitted growth exponent in rows."""
    X, y = load("occupancy", "all")
    rng = np.random.default_rng(0)
    for depth in (2, 3):
        sizes, t_ours, t_peer = [], [], []
        for n in (1_000, 10_000, 100_000):
            idx = rng.choice(len(y), n, replace=n > len(y))
            r = compare(f"occupancy-{n}", X[idx], y[idx], depth, limit, contree, "ConTree")
            if r is not None:
                sizes.append(n)
                t_ours.append(r[1])
                t_peer.append(r[2])
        if len(sizes) > 1:
            fit = lambda t: np.polyfit(np.log(sizes), np.log(t), 1)[0]  # noqa: E731
            print(f"depth {depth}: time grows like n^{fit(t_ours):.2f} "
                  f"(ConTree n^{fit(t_peer):.2f})")
    X, y = load("bank")
    for depth in (2, 3, 4):
        compare("bank", X, y, depth, limit, contree, "ConTree")


def run_noisy(limit):
    """Large numeric data whose labels no small tree fits (10 normal columns; two classes:
    ``x0 + x1 * x2 > 0``, three: that sum cut at its tertiles): the bounds prune few depth-two
    root splits, the case the segment trees of the ordered search are for. 10k
    and 50k rows, depth 2, next to ConTree."""
    rng = np.random.default_rng(0)
    ratios = {}
    for classes in (2, 3):
        for n in (10_000, 50_000):
            X = rng.normal(size=(n, 10))
            s = X[:, 0] + X[:, 1] * X[:, 2]
            y = np.digitize(s, np.quantile(s, [1 / 3, 2 / 3]) if classes == 3 else [0.0])
            r = compare(f"noisy{classes}-{n}", X, y, 2, limit, contree, "ConTree")
            if r is not None:
                ratios.setdefault(2, []).append(r[0])
    summary(ratios)


def thermometer(X, k):
    """0/1 columns ``x_j <= t`` at ``k`` quantile thresholds per column (a user's binarisation)."""
    cols = []
    for j in range(X.shape[1]):
        ts = np.unique(np.quantile(X[:, j], np.arange(1, k + 1) / (k + 1)))
        cols += [X[:, j] <= t for t in ts]
    return np.array(cols).T.astype(np.int64)


def run_thermometer(depth, limit, names, k):
    ratios = {}
    for name in names:
        X, y = load(name)
        r = compare(f"{name}-q{k}", thermometer(X, k), y, depth, limit, streed, "STreeD")
        if r is not None:
            ratios.setdefault(depth, []).append(r[0])
    summary(ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--depths", type=int, nargs="+", default=[2, 3])
    parser.add_argument("--limit", type=float, default=300.0, help="seconds per fit")
    parser.add_argument("--datasets", nargs="+", default=list(SETS + SKLEARN_SETS))
    parser.add_argument("--scaling", action="store_true")
    parser.add_argument("--thermometer", action="store_true")
    parser.add_argument("--noisy", action="store_true")
    parser.add_argument("--quantiles", type=int, default=10)
    parser.add_argument("--peer", choices=sorted(PEERS), default="contree",
                        help="the suite's peer: pycontree's ConTree or pytrees-rs's")
    args = parser.parse_args()
    warm()
    if args.scaling:
        run_scaling(args.limit)
    elif args.noisy:
        run_noisy(args.limit)
    elif args.thermometer:
        run_thermometer(max(args.depths), args.limit, args.datasets, args.quantiles)
    else:
        run_suite(args.depths, args.limit, args.datasets, args.peer)


if __name__ == "__main__":
    main()
