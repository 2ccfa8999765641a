"""exactree's ordered search on multi-class numeric data next to ConTree, same process (issue 45).

    python benchmarks/bench_multiclass.py                    # depths 2-3, every set
    python benchmarks/bench_multiclass.py --depths 4 --limit 60
    python benchmarks/bench_multiclass.py --sets gen4 segment --depths 3
    python benchmarks/bench_multiclass.py --ours-only        # exactree's times alone (A/B runs)

Sets: generated 8,000 x 16 normal columns with 3, 4, 6 and 10 classes (labels from a planted
tree with 10% flipped, ``bench_planner.make_problem``), the multi-class sets of
``../shared/data/continuous`` (segment: 7 classes, page: 5) and scikit-learn's wine and iris (3).
exactree is timed through ``OptimalTreeClassifier(max_depth=d).fit`` as a user calls it (search
``auto``; the row says when the planner did not pick the ordered search), ConTree through
``pycontree.ConTree(max_depth=d).fit``; both warm, runs under a second repeated and the fastest
kept (``bench_continuous.best_of``). Each row prints both training errors (a mismatch is
flagged), both times and the ratio exactree / ConTree; the summary gives the geometric mean and
the worst ratio per depth.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from bench_continuous import best_of, contree, load  # noqa: E402

GENERATED = {"gen3": 3, "gen4": 4, "gen6": 6, "gen10": 10}
FILES = ("segment", "page")
SKLEARN = ("wine", "iris")
SETS = (*GENERATED, *FILES, *SKLEARN)


def data(name):
    if name in GENERATED:
        from bench_planner import make_problem

        return make_problem(8_000, 16, "continuous", GENERATED[name], seed=0)
    return load(name)


def ours(X, y, depth, limit, searches):
    from exactree import OptimalTreeClassifier

    start = time.perf_counter()
    model = OptimalTreeClassifier(max_depth=depth, time_limit=limit).fit(X, y)
    seconds = time.perf_counter() - start
    searches.add(model.search_)
    errors = model.objective_ if model.status_ == "optimal" else math.nan
    return errors, seconds


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depths", type=int, nargs="+", default=[2, 3])
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    ap.add_argument("--limit", type=float, default=120.0)
    ap.add_argument("--ours-only", action="store_true", help="time exactree alone")
    args = ap.parse_args(argv)
    X, y = load("iris")  # warm both sides
    ours(X, y, 3, None, set())
    if not args.ours_only:
        contree(X, y, 2, 60)
    ratios = {}
    for depth in args.depths:
        for name in args.sets:
            X, y = data(name)
            searches = set()
            e1, t1 = best_of(ours, X, y, depth, args.limit, searches)
            note = "" if searches == {"ordered"} else f"  search={'/'.join(sorted(searches))}"
            head = (f"{name:8s} d={depth} n={len(y):5d} F={X.shape[1]:2d} "
                    f"K={len(np.unique(y)):2d}  exactree {e1:6.0f} {t1:8.4f}s")
            if args.ours_only:
                print(head + note, flush=True)
                continue
            e2, t2 = best_of(contree, X, y, depth, args.limit)
            same = "same" if e1 == e2 else "MISMATCH" if e1 == e1 and e2 == e2 else "timeout"
            print(f"{head}  ConTree {e2:6.0f} {t2:8.4f}s  ratio {t1 / t2:5.2f}  {same}{note}",
                  flush=True)
            if same == "same":
                ratios.setdefault(depth, []).append(t1 / t2)
    for depth, rs in sorted(ratios.items()):
        geo = math.exp(sum(math.log(r) for r in rs) / len(rs))
        print(f"depth {depth}: {len(rs)} sets, geometric-mean ratio {geo:.2f}, worst {max(rs):.2f}")


if __name__ == "__main__":
    main()
