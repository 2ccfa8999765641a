"""Anytime behaviour under a time limit: exactree next to pytrees-rs (DL8.5, ConTree) and STreeD.

    python benchmarks/bench_anytime.py                    # limits 1 10 60, every problem below
    python benchmarks/bench_anytime.py --limits 1 10      # the 1 s and 10 s rounds only
    python benchmarks/bench_anytime.py --quick            # smoke run: two problems, 1 s
    python benchmarks/bench_anytime.py --datasets splice-1 rice --depths 4
    python benchmarks/bench_anytime.py --prove            # prove the unknown optima (long)

Issue #13, "Must show". Every solver is fitted with the same ``time_limit`` on the same problem,
one after another in this process, after a warm-up fit of each (Numba compilation and library
loading are not timed):

- exactree as users call it: ``OptimalTreeClassifier(max_depth=d, time_limit=T).fit(X, y)``;
  ``objective_``, ``lower_bound_``, ``gap_``, ``status_`` and the wall time of ``fit``;
- pytrees-rs ``DL85Classifier`` in its anytime mode LDS-DL8.5 (``heuristic="information_gain"``,
  ``discrepancy=DiscrepancyRule()``: passes of growing discrepancy budget), binary sets only;
- pytrees-rs ``ConTreeClassifier`` in its anytime mode (``use_lds=True``: limited discrepancy
  passes of growing budget), on both kinds of data (0/1 columns as floats);
- STreeD (``pystreed.STreeDClassifier``, ``cost_complexity=0``), binary sets only.

The peers report no proven lower bound: theirs is shown only when they prove optimality (then it
is their objective and the gap 0). Every objective is recounted from ``predict`` on the training
rows (a solver whose own count differs is flagged). ``gap = (objective - bound) / objective``,
exactree's definition.

Problems, by rule (not by how exactree does on them):

- binary, depth 4: every set of ``shared/data/binary/optima.csv`` whose STreeD time at depth 4 is
  at least 1 s (read from that file at run time); optimum from the same file;
- binary, depth 5: the same sets; no optimum is known, so the column shows the best objective any
  solver reached in this run, marked ``<=``, unless ``--prove`` has proven it (cached in
  ``benchmarks/anytime_optima.csv``);
- continuous, depth 4: the classification sets of ``shared/data/continuous`` that ConTree
  (``pycontree`` 1.0.8, 2-core VM) proves optimal at depth 4 in 10-300 s; optimum from that run
  (``CONTINUOUS`` below).

A solver that proved optimality at a shorter limit is not run again at a longer one (its result
is carried, marked ``c``). Limits of ``--long`` seconds and more (default 60) run only the depth-4
problems, whose optima are known, unless ``--all-long`` is given, so that the default run takes
about 45 minutes at most (each fit is bounded by its limit).

The summary gives, per limit, for exactree: the fits whose wall time exceeds
``max(1.1 * limit, limit + 0.2 s)``, the median gap, and on how many problems its incumbent is at
least as good as the best peer's; for every solver, how often it proved optimality and how often
its objective equals the known optimum. Needs the bench extra: ``pip install -e ".[bench]"``.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
BINARY = HERE.parents[1] / "shared" / "data" / "binary"
PROVEN = HERE / "anytime_optima.csv"  # written by --prove

# Classification sets ConTree (pycontree 1.0.8, max_depth=4, time_limit=300, train split) proves
# optimal at depth 4 in 10-300 s on the 2-core VM: name -> (training errors, ConTree seconds).
# Measured once for this benchmark; the others took under 10 s (bank 0.0 s, wilt 1.2 s) or over
# 300 s (rice 168 errors, page 94 errors when stopped).
CONTINUOUS = {
    "raisin": (59, 63),
    "segment": (76, 230),
    "occupancy": (26, 26),
    "bidding": (16, 24),
}
STREED_MIN_SECONDS = 1.0  # binary rule: STreeD's time at depth 4 in optima.csv
QUICK = (("vehicle", "binary", 4), ("raisin", "continuous", 4))


@dataclass
class Problem:
    name: str
    kind: str  # "binary" or "continuous"
    depth: int
    optimum: float | None  # None: not known
    source: str
    X: np.ndarray | None = None
    y: np.ndarray | None = None

    @property
    def key(self) -> tuple[str, int]:
        return self.name, self.depth

    def load(self) -> None:
        if self.X is not None:
            return
        if self.kind == "binary":
            data = np.loadtxt(BINARY / f"{self.name}.txt", dtype=np.int64)
            self.X, self.y = data[:, 1:], data[:, 0]
        else:
            sys.path.insert(0, str(HERE))
            from bench_continuous import load

            self.X, self.y = load(self.name)


@dataclass
class Run:
    """One fit: what the solver returned and how long it took."""

    objective: float | None = None  # training errors of the returned tree (predict)
    lower_bound: float | None = None  # proven; None: the solver reports none
    status: str = ""
    wall: float = math.nan
    carried: bool = False  # proven at a shorter limit, not run again
    note: str = ""
    error: str | None = None

    @property
    def optimal(self) -> bool:
        return self.status == "optimal"

    @property
    def gap(self) -> float | None:
        if self.objective is None or self.lower_bound is None:
            return None
        if self.objective - self.lower_bound <= 1e-9:
            return 0.0
        return (self.objective - self.lower_bound) / self.objective if self.objective else math.inf


def errors(model, X, y) -> float:
    return float(np.count_nonzero(np.asarray(model.predict(X)) != y))


# --- solvers: fit(problem, limit) -> Run; each imports its library lazily ----------------------

def fit_exactree(p: Problem, limit: float) -> Run:
    from exactree import OptimalTreeClassifier

    model = OptimalTreeClassifier(max_depth=p.depth, time_limit=limit)
    start = time.perf_counter()
    model.fit(p.X, p.y)
    wall = time.perf_counter() - start
    obj = errors(model, p.X, p.y)
    note = "" if abs(obj - model.objective_) < 1e-6 else f"objective_={model.objective_:g}"
    return Run(obj, float(model.lower_bound_), model.status_, wall, note=note)


def fit_dl85(p: Problem, limit: float) -> Run:
    from pytrees import DL85Classifier
    from pytrees.rules import DiscrepancyRule

    model = DL85Classifier(max_depth=p.depth, max_time=float(limit),
                           heuristic="information_gain", discrepancy=DiscrepancyRule())
    return _fit_pytrees(model, p.X, p.y)


def fit_contree(p: Problem, limit: float) -> Run:
    from pytrees import ConTreeClassifier

    model = ConTreeClassifier(max_depth=p.depth, max_time=float(limit), use_lds=True)
    return _fit_pytrees(model, p.X.astype(np.float64), p.y)


def _fit_pytrees(model, X, y) -> Run:
    start = time.perf_counter()
    model.fit(X, y)
    wall = time.perf_counter() - start
    if getattr(model, "tree_", None) is None:
        return Run(None, None, model.status_, wall, note="no tree")
    obj = errors(model, X, y)
    note = "" if abs(obj - float(model.train_error_)) < 1e-6 else f"reported {model.train_error_}"
    return Run(obj, obj if model.status_ == "optimal" else None, model.status_, wall, note=note)


def fit_streed(p: Problem, limit: float) -> Run:
    from pystreed import STreeDClassifier

    model = STreeDClassifier(max_depth=p.depth, cost_complexity=0, time_limit=limit)
    start = time.perf_counter()
    model.fit(p.X, p.y)
    wall = time.perf_counter() - start
    if not hasattr(model, "fit_result"):  # pystreed drops it when it found no tree
        return Run(None, None, "no tree", wall)
    status = "optimal" if model.fit_result.is_optimal() else "time_limit"
    obj = errors(model, p.X, p.y)
    return Run(obj, obj if status == "optimal" else None, status, wall)


@dataclass
class Solver:
    name: str
    fit: object
    kinds: tuple[str, ...]
    module: str
    missing: str | None = None
    runs: dict = field(default_factory=dict)  # (limit, (name, depth)) -> Run


SOLVERS = [
    Solver("exactree", fit_exactree, ("binary", "continuous"), "exactree"),
    Solver("DL8.5-LDS", fit_dl85, ("binary",), "pytrees"),
    Solver("ConTree-LDS", fit_contree, ("binary", "continuous"), "pytrees"),
    Solver("STreeD", fit_streed, ("binary",), "pystreed"),
]


# --- problems -----------------------------------------------------------------------------------

def read_proven() -> dict[tuple[str, int], tuple[float, str]]:
    if not PROVEN.exists():
        return {}
    with PROVEN.open() as f:
        return {(r["dataset"], int(r["depth"])): (float(r["optimum"]),
                                                   f"{r['solver']} --prove {r['seconds']} s")
                for r in csv.DictReader(f)}


def problems(names: list[str] | None, depths: list[int] | None, quick: bool) -> list[Problem]:
    proven = read_proven()
    with (BINARY / "optima.csv").open() as f:
        rows = list(csv.DictReader(f))
    optima = {(r["dataset"], int(r["max_depth"])): float(r["optimal_misclassifications"])
              for r in rows}
    hard = [r["dataset"] for r in rows
            if int(r["max_depth"]) == 4 and float(r["streed_seconds"]) >= STREED_MIN_SECONDS]
    out = []
    for depth in (4, 5):
        for name in hard:
            if (name, depth) in optima:
                out.append(Problem(name, "binary", depth, optima[name, depth], "optima.csv"))
            elif (name, depth) in proven:
                out.append(Problem(name, "binary", depth, *proven[name, depth]))
            else:
                out.append(Problem(name, "binary", depth, None, "best in this run"))
    for name, (opt, seconds) in CONTINUOUS.items():
        out.append(Problem(name, "continuous", 4, opt, f"ConTree {seconds:g} s"))
    if quick:
        out = [p for p in out if (p.name, p.kind, p.depth) in QUICK]
    if names:
        out = [p for p in out if p.name in names]
    if depths:
        out = [p for p in out if p.depth in depths]
    return out


# --- running ------------------------------------------------------------------------------------

def available(solvers: list[Solver]) -> list[Solver]:
    for s in solvers:
        try:
            __import__(s.module)
        except Exception as exc:  # noqa: BLE001 - a missing peer is reported, not fatal
            s.missing = f"{type(exc).__name__}: {exc}"
            print(f"# {s.name}: not available ({s.missing})", flush=True)
    return [s for s in solvers if s.missing is None]


def warm(solvers: list[Solver], probs: list[Problem]) -> None:
    """One small fit per solver and kind, then a short cut-off fit on the first hard problem of
    each kind, so that compilation (Numba) and first-call costs are not timed."""
    import sklearn.datasets

    Xc, yc = sklearn.datasets.load_iris(return_X_y=True)
    small = {"continuous": Problem("iris", "continuous", 3, None, "", Xc, yc),
             "binary": Problem("iris-bin", "binary", 3, None, "",
                               (Xc > np.median(Xc, axis=0)).astype(np.int64), yc)}
    kinds = {p.kind: p for p in reversed(probs)}
    for s in solvers:
        for kind, first in kinds.items():
            if kind not in s.kinds:
                continue
            first.load()
            for p, limit in ((small[kind], 10.0), (first, 0.5)):
                try:
                    s.fit(p, limit)
                except Exception as exc:  # noqa: BLE001 - the timed fit reports it again
                    print(f"# warm-up {s.name} on {p.name}: {type(exc).__name__}: {exc}",
                          file=sys.stderr, flush=True)


def run_one(s: Solver, p: Problem, limit: float, done: dict) -> Run:
    proved = done.get((s.name, p.key))
    if proved is not None:
        return Run(proved.objective, proved.lower_bound, proved.status, proved.wall,
                   carried=True, note=proved.note)
    try:
        r = s.fit(p, limit)
    except Exception as exc:  # noqa: BLE001 - a failing peer is reported, not fatal
        tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
        r = Run(error=tb[:120])
    if r.optimal:
        done[s.name, p.key] = r
    return r


def best_known(p: Problem, solvers: list[Solver]) -> tuple[float | None, bool]:
    """(optimum, proven): the known optimum, or the best objective seen in this run, proven when
    some solver's proven lower bound reaches it (or it is 0)."""
    if p.optimum is not None:
        return p.optimum, True
    runs = [r for s in solvers for (_, key), r in s.runs.items()
            if key == p.key and r.objective is not None]
    if not runs:
        return None, False
    best = min(r.objective for r in runs)
    bound = max((r.lower_bound for r in runs if r.lower_bound is not None), default=0.0)
    return best, best <= max(bound, 0.0) + 1e-9


# --- reporting ----------------------------------------------------------------------------------

CELL = 28


def fmt_num(v: float | None, width: int) -> str:
    if v is None:
        return "-".rjust(width)
    return f"{v:{width}.0f}" if float(v).is_integer() else f"{v:{width}.1f}"


def cell(r: Run | None) -> str:
    if r is None:
        return "n/a".center(CELL)
    if r.error is not None:
        return ("FAILED " + r.error)[:CELL].ljust(CELL)
    gap = "-" if r.gap is None else f"{r.gap:.3f}"
    mark = "c" if r.carried else ("*" if r.optimal else " ")
    return (f"{fmt_num(r.objective, 6)} {fmt_num(r.lower_bound, 6)} {gap:>5} "
            f"{r.wall:6.2f}s{mark}")


def allowance(limit: float) -> float:
    return max(1.1 * limit, limit + 0.2)


def flags(p: Problem, opt: float | None, proven: bool, s: Solver, r: Run) -> list[str]:
    out = []
    if r.note:
        out.append(f"{s.name}: {r.note}")
    if r.gap == 0.0 and not r.optimal and not r.carried:
        out.append(f"{s.name}: objective = its lower bound but status {r.status!r}, "
                   f"{r.wall:.2f} s (did not stop when proven)")
    if opt is not None and proven and r.objective is not None and r.objective < opt - 1e-9:
        out.append(f"{s.name}: objective {r.objective:g} below the optimum {opt:g}!")
    if opt is not None and proven and r.lower_bound is not None and r.lower_bound > opt + 1e-9:
        out.append(f"{s.name}: lower bound {r.lower_bound:g} above the optimum {opt:g}!")
    return out


def table(limit: float, probs: list[Problem], solvers: list[Solver]) -> None:
    print(f"\n== time_limit {limit:g} s "
          f"(cell: objective, proven lower bound, gap, wall; * proven optimal, "
          f"c carried from a shorter limit; opt <= : best known, not proven)")
    width = max([7] + [len(p.name) for p in probs])
    head = f"{'dataset':{width}s} {'d':>1s} {'opt':>7s} | "
    print(head + " | ".join(s.name.center(CELL) for s in solvers))
    print(" " * len(head) + " | ".join(
        f"{'obj':>6s} {'lb':>6s} {'gap':>5s} {'wall':>7s} " for _ in solvers))
    notes = []
    for p in probs:
        opt, proven = best_known(p, solvers)
        o = "-" if opt is None else ("" if proven else "<=") + fmt_num(opt, 1).strip()
        row = [cell(s.runs.get((limit, p.key))) for s in solvers]
        print(f"{p.name:{width}s} {p.depth:1d} {o:>7s} | " + " | ".join(row))
        for s in solvers:
            r = s.runs.get((limit, p.key))
            if r is not None:
                notes += [f"  {p.name} d{p.depth}: {f}" for f in flags(p, opt, proven, s, r)]
    for n in notes:
        print(n)


def summary(limits: list[float], probs: list[Problem], solvers: list[Solver]) -> None:
    ours = next((s for s in solvers if s.name == "exactree"), None)
    peers = [s for s in solvers if s.name != "exactree"]
    print("\n== summary")
    for limit in limits:
        print(f"-- time_limit {limit:g} s")
        if ours is not None:
            runs = [(p, ours.runs.get((limit, p.key))) for p in probs]
            runs = [(p, r) for p, r in runs if r is not None and r.error is None]
            fresh = [(p, r) for p, r in runs if not r.carried]
            over = [(p, r) for p, r in fresh if r.wall > allowance(limit)]
            worst = max((r.wall for _, r in fresh), default=0.0)
            print(f"exactree wall over max(1.1 x limit, limit + 0.2 s) = {allowance(limit):.2f} s:"
                  f" {len(over)} of {len(fresh)} fits run (longest {worst:.2f} s)"
                  + "".join(f"; {p.name} d{p.depth} {r.wall:.2f} s" for p, r in over))
            groups = {}
            for p, r in runs:
                if r.gap is not None:
                    groups.setdefault(f"{p.kind} d{p.depth}", []).append(r.gap)
            gaps = [g for gs in groups.values() for g in gs]
            if gaps:
                print(f"exactree median gap {statistics.median(gaps):.3f} over {len(gaps)}"
                      " problems (" + ", ".join(f"{k}: {statistics.median(v):.3f}"
                                               for k, v in groups.items()) + ")")
            ok, total, worse = 0, 0, []
            for p, r in runs:
                best_peer = [q.runs[limit, p.key].objective for q in peers
                             if (limit, p.key) in q.runs
                             and q.runs[limit, p.key].objective is not None]
                if not best_peer or r.objective is None:
                    continue
                total += 1
                if r.objective <= min(best_peer) + 1e-9:
                    ok += 1
                else:
                    worse.append(f"{p.name} d{p.depth} {r.objective:g} > {min(best_peer):g}")
            print(f"exactree incumbent at least as good as the best peer's: {ok} of {total}"
                  + (" (worse: " + "; ".join(worse) + ")" if worse else ""))
        for s in solvers:
            rs = [(p, s.runs.get((limit, p.key))) for p in probs]
            rs = [(p, r) for p, r in rs if r is not None]
            failed = sum(r.error is not None for _, r in rs)
            proved = sum(r.optimal for _, r in rs)
            hits = sum(1 for p, r in rs if p.optimum is not None and r.objective is not None
                       and abs(r.objective - p.optimum) < 1e-9)
            known = sum(1 for p, _ in rs if p.optimum is not None)
            over = sum(1 for _, r in rs if not r.carried and r.error is None
                       and r.wall > allowance(limit))
            print(f"  {s.name:12s} proven optimal {proved:2d} of {len(rs):2d}; "
                  f"objective = known optimum {hits:2d} of {known:2d}; "
                  f"wall over allowance {over:2d}" + (f"; FAILED {failed}" if failed else ""))
    for p in probs:
        opt, proven = best_known(p, solvers)
        if opt is not None and not proven:
            who = sorted({f"{s.name} {limit:g} s" for s in solvers
                          for (limit, key), r in s.runs.items()
                          if key == p.key and r.objective == opt})
            print(f"  {p.name} d{p.depth}: optimum not known; best found {opt:g} ("
                  + ", ".join(who) + ")")
    for s in SOLVERS:
        if s.missing:
            print(f"  {s.name}: not run ({s.missing})")


def prove(probs: list[Problem], limit: float) -> None:
    """Solve every problem without a known optimum with exactree (stopped only by ``limit``)
    and append the optima it proves to ``PROVEN``, which later runs read."""
    for p in probs:
        if p.optimum is not None:
            continue
        p.load()
        r = fit_exactree(p, limit)
        print(f"{p.name} d{p.depth}: {r.status}, objective {r.objective:g}, "
              f"bound {r.lower_bound:g}, {r.wall:.1f} s", flush=True)
        if r.optimal:
            new = not PROVEN.exists()
            with PROVEN.open("a", newline="") as f:
                w = csv.writer(f)
                if new:
                    w.writerow(["dataset", "kind", "depth", "optimum", "solver", "seconds"])
                w.writerow([p.name, p.kind, p.depth, f"{r.objective:g}", "exactree",
                            f"{r.wall:.0f}"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limits", type=float, nargs="+", default=[1.0, 10.0, 60.0])
    parser.add_argument("--datasets", nargs="+", help="only these sets")
    parser.add_argument("--depths", type=int, nargs="+", help="only these depths")
    parser.add_argument("--solvers", nargs="+", help="only these solvers (names as printed)")
    parser.add_argument("--quick", action="store_true", help="smoke run: two problems, 1 s")
    parser.add_argument("--long", type=float, default=60.0,
                        help="limits from this many seconds run the depth-4 problems only")
    parser.add_argument("--all-long", action="store_true",
                        help="run every problem at every limit")
    parser.add_argument("--prove", action="store_true",
                        help=f"prove the unknown optima with exactree, cache in {PROVEN.name}")
    parser.add_argument("--prove-limit", type=float, default=7200.0)
    args = parser.parse_args()
    if args.quick and args.limits == parser.get_default("limits"):
        args.limits = [1.0]
    probs = problems(args.datasets, args.depths, args.quick)
    if args.prove:
        prove(probs, args.prove_limit)
        return
    solvers = [s for s in SOLVERS if not args.solvers or s.name in args.solvers]
    solvers = available(solvers)
    print(f"# {len(probs)} problems: " + ", ".join(
        f"{p.name} d{p.depth}" + ("" if p.optimum is not None else " (opt unknown)")
        for p in probs), flush=True)
    warm(solvers, probs)
    done: dict = {}
    limits = sorted(args.limits)
    for limit in limits:
        todo = [p for p in probs
                if args.all_long or limit < args.long or p.depth == 4]
        for p in todo:
            p.load()
            for s in solvers:
                if p.kind not in s.kinds:
                    continue
                r = run_one(s, p, limit, done)
                s.runs[limit, p.key] = r
                status = r.error or r.status + (" (carried)" if r.carried else f" {r.wall:.2f}s")
                print(f"# {limit:g}s {p.name} d{p.depth} {s.name}: {fmt_num(r.objective, 1)} "
                      f"{status}", file=sys.stderr, flush=True)
        table(limit, todo, solvers)
    summary(limits, probs, solvers)


if __name__ == "__main__":
    main()
