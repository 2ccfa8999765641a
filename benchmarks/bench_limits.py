"""Do memory_limit and time_limit hold in every estimator? (issue 46)

Every fit runs in its own subprocess, after a warm-up fit on 300 rows of the same kind in the
same process (so the Numba kernels are loaded and compile time is excluded), with the RSS
baseline read after the warm-up and after the input is built. The child reports its peak RSS
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``) less that baseline: the fit's own peak.

Goals, per fit:

* no raw allocation error (a ``MemoryError`` that is not ``exactree.MemoryLimitError``) and no
  kill (a signal, e.g. the OOM killer) or timeout of the child;
* every refusal has a message;
* peak memory <= (memory_limit + the input's size) * 1.1;
* wall time of the fit <= time_limit + max(0.1 * time_limit, 0.2 s) (estimators without a
  ``time_limit`` parameter are held to the same bound).

Examples::

    python benchmarks/bench_limits.py --quick
    python benchmarks/bench_limits.py --rows 1000,10000 --estimators optimal,sparse \\
        --limits 200,2000 --times 0.5,5
    python benchmarks/bench_limits.py            # the full grid (long)

Results go to ``benchmarks/results/limits.csv``. Fits use ``n_jobs=1`` where the estimator
has it, so that the peak RSS of this process is the whole fit's.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ESTIMATORS = {
    # name: (class name, extra parameters, task, has time_limit, has memory_limit)
    "optimal": ("OptimalTreeClassifier", {"max_depth": 3, "n_jobs": 1}, "clf", True, True),
    "optimal_binary": ("OptimalTreeClassifier", {"max_depth": 3, "search": "binary",
                                                 "n_jobs": 1}, "clf", True, True),
    "regressor": ("OptimalTreeRegressor", {"max_depth": 3, "n_jobs": 1}, "reg", True, True),
    "dyadic": ("DyadicTreeClassifier", {}, "clf", False, True),
    "oblique": ("ObliqueTreeClassifier", {"n_splits": 2, "n_jobs": 1}, "clf", True, True),
    "oblique_regressor": ("ObliqueTreeRegressor", {"n_splits": 2, "n_jobs": 1}, "reg", True,
                          True),
    "sparse": ("SparseTreeClassifier", {}, "clf", True, True),
}
FULL_ROWS = (1_000, 10_000, 100_000, 1_000_000)
FULL_LIMITS = (200, 2000)  # MB (passed as MiB to memory_limit)
FULL_TIMES = (0.5, 5.0, 30.0)
N_COLUMNS = 20
RESULTS = Path(__file__).parent / "results" / "limits.csv"
FIELDS = ("estimator", "data", "rows", "memory_limit", "time_limit", "outcome", "message",
          "wall", "peak_mb", "input_mb", "goal_met", "why")


# ---------------------------------------------------------------------------- the child
def make_data(kind: str, task: str, rows: int):
    import numpy as np
    from sklearn.datasets import make_classification, make_regression

    if task == "clf":
        X, y = make_classification(rows, N_COLUMNS, n_informative=10, random_state=0)
    else:
        X, y = make_regression(rows, N_COLUMNS, n_informative=10, noise=10.0, random_state=0)
    if kind == "numeric":
        return X, y
    import pandas as pd

    rng = np.random.default_rng(0)
    df = pd.DataFrame(X[:, :N_COLUMNS - 3], columns=[f"x{i}" for i in range(N_COLUMNS - 3)])
    for j, size in enumerate((3, 8, 20)):  # a few string columns
        codes = (np.abs(X[:, N_COLUMNS - 3 + j]) * size).astype(int) % size
        df[f"c{j}"] = np.array([f"v{k}" for k in range(size)], dtype=object)[codes]
    return df, y


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _input_bytes(X, y) -> int:
    if hasattr(X, "memory_usage"):
        return int(X.memory_usage(deep=True).sum()) + y.nbytes
    return X.nbytes + y.nbytes


def child(spec: dict) -> dict:
    import resource

    import exactree

    cls_name, params, task, has_time, has_memory = ESTIMATORS[spec["estimator"]]
    cls = getattr(exactree, cls_name)
    params = dict(params)
    if has_memory:
        m = spec["memory_limit"]
        params["memory_limit"] = int(m) if float(m).is_integer() else m  # Sparse takes ints
    if has_time:
        params["time_limit"] = spec["time_limit"]
    # Warm-up: the same estimator on 300 rows of the same kind (kernels load or compile).
    Xw, yw = make_data(spec["data"], task, 300)
    try:
        cls(**params).fit(Xw, yw)
    except Exception:  # noqa: BLE001 - a refused warm-up still loaded what it could
        pass
    del Xw, yw
    X, y = make_data(spec["data"], task, spec["rows"])
    base = _rss_bytes()
    out = {"input_mb": _input_bytes(X, y) / 1e6}
    est = cls(**params)
    t0 = time.perf_counter()
    try:
        est.fit(X, y)
        out.update(outcome=str(getattr(est, "status_", "fitted")), message="")
    except exactree.MemoryLimitError as e:
        out.update(outcome="MemoryLimitError", message=str(e))
    except MemoryError as e:  # a raw allocation error: a failed goal
        out.update(outcome="MemoryError(raw)", message=str(e))
    except Exception as e:  # noqa: BLE001 - any other refusal (e.g. categorical columns)
        out.update(outcome=type(e).__name__, message=str(e))
    out["wall"] = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kB on Linux
    out["peak_mb"] = max(peak - base, 0) / 1e6
    return out


# ---------------------------------------------------------------------------- the parent
def run_one(spec: dict) -> dict:
    limit = 3 * spec["time_limit"] + 60
    row = dict(spec)
    try:
        proc = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)],
                              capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        row.update(outcome="timeout", message=f"child killed after {limit:.0f} s", wall=limit,
                   peak_mb=float("nan"), input_mb=float("nan"))
        return judge(row)
    if proc.returncode != 0:
        sig = -proc.returncode if proc.returncode < 0 else None
        name = signal.Signals(sig).name if sig else f"exit {proc.returncode}"
        row.update(outcome=f"killed ({name})", message=proc.stderr.strip()[-300:],
                   wall=float("nan"), peak_mb=float("nan"), input_mb=float("nan"))
        return judge(row)
    line = [s for s in proc.stdout.splitlines() if s.startswith("RESULT ")][-1]
    row.update(json.loads(line[len("RESULT "):]))
    return judge(row)


def judge(row: dict) -> dict:
    why = []
    outcome = row["outcome"]
    if outcome == "timeout" or outcome.startswith("killed") or outcome == "MemoryError(raw)":
        why.append(outcome)
    refused = outcome[:1].isupper() and outcome.endswith("Error")
    if refused and not row.get("message"):
        why.append("refusal without a message")
    if row.get("peak_mb") == row.get("peak_mb") and row.get("input_mb") == row.get("input_mb"):
        allowed = 1.1 * (row["memory_limit"] * 2**20 / 1e6 + row["input_mb"])
        if row["peak_mb"] > allowed:
            why.append(f"peak {row['peak_mb']:.0f} MB > {allowed:.0f} MB")
    t = row["time_limit"]
    if row.get("wall") == row.get("wall") and row["wall"] > t + max(0.1 * t, 0.2):
        why.append(f"wall {row['wall']:.2f} s > {t + max(0.1 * t, 0.2):.2f} s")
    row["goal_met"] = "yes" if not why else "no"
    row["why"] = "; ".join(why)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--rows", help="comma-separated row counts (default 1e3,1e4,1e5,1e6)")
    ap.add_argument("--estimators", help=f"comma-separated, of {','.join(ESTIMATORS)}")
    ap.add_argument("--limits", help="memory limits in MB (default 200,2000)")
    ap.add_argument("--times", help="time limits in s (default 0.5,5,30)")
    ap.add_argument("--data", default="numeric,categorical",
                    help="numeric and/or categorical (17 numeric + 3 string columns)")
    ap.add_argument("--categorical-rows", help="row counts of the categorical mix (default: "
                    "those of --rows)")
    ap.add_argument("--quick", action="store_true",
                    help="1k and 100k rows, 200 MB and 2 GB, 0.5 and 5 s; categorical at 1k")
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()
    if args.child:
        res = child(json.loads(args.child))
        print("RESULT " + json.dumps(res), flush=True)
        return
    rows = [int(float(r)) for r in args.rows.split(",")] if args.rows else (
        [1_000, 100_000] if args.quick else list(FULL_ROWS))
    limits = [float(m) for m in args.limits.split(",")] if args.limits else list(FULL_LIMITS)
    times = [float(t) for t in args.times.split(",")] if args.times else (
        [0.5, 5.0] if args.quick else list(FULL_TIMES))
    names = args.estimators.split(",") if args.estimators else list(ESTIMATORS)
    cat_rows = ([int(float(r)) for r in args.categorical_rows.split(",")]
                if args.categorical_rows else ([1_000] if args.quick else rows))
    kinds = args.data.split(",")
    specs = []
    for name in names:
        if name not in ESTIMATORS:
            raise SystemExit(f"unknown estimator {name!r}; known: {', '.join(ESTIMATORS)}")
        for kind in kinds:
            for n in (rows if kind == "numeric" else cat_rows):
                for m in limits:
                    for t in times:
                        specs.append({"estimator": name, "data": kind, "rows": n,
                                      "memory_limit": m, "time_limit": t})
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    head = (f"{'estimator':<18} {'data':<5} {'rows':>9} {'mem MB':>6} {'time':>5}  "
            f"{'outcome':<40} {'wall':>7} {'peak MB':>8} goal")
    print(head)
    print("-" * len(head))
    results = []
    with open(out, "w", newline="") as f:
        writer = csv.DictWriter(f, FIELDS, extrasaction="ignore")
        writer.writeheader()
        for spec in specs:
            row = run_one(spec)
            results.append(row)
            writer.writerow(row)
            f.flush()
            outcome = row["outcome"]
            if row.get("message"):
                outcome = f"{outcome}: {row['message'][:60]}"
            outcome = outcome.replace("\n", " ")[:40]
            print(f"{row['estimator']:<18} {row['data'][:5]:<5} {row['rows']:>9,} "
                  f"{row['memory_limit']:>6.0f} {row['time_limit']:>5g}  {outcome:<40} "
                  f"{row['wall']:>7.2f} {row['peak_mb']:>8.1f} {row['goal_met']}"
                  + (f"  ({row['why']})" if row["why"] else ""), flush=True)
    met = sum(r["goal_met"] == "yes" for r in results)
    print(f"\n{met}/{len(results)} fits met every goal; results in {out}")


if __name__ == "__main__":
    main()
