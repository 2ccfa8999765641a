"""A leaf cost of your own: exactree's ``objective=LeafCost(...)`` next to STreeD's cost-sensitive
classifier, same process.

    python benchmarks/bench_objective.py                 # depths 2 and 3, every set
    python benchmarks/bench_objective.py --depths 3 --datasets wine bank

The objective is a loss matrix (true class ``k``, predicted ``c``): a wrong prediction costs 1,
or 5 when it names a lower class than the true one, so the optimal tree differs from the
misclassification optimum. Both solvers get the same binary features, ``x <= t`` at 10
quantile thresholds per column (``bench_continuous.thermometer``): exactree as a user would
write the loss, a Python ``LeafCost`` compiled with Numba (the ordered search over the merged
thermometer columns), STreeD as ``pystreed.STreeDCostSensitiveClassifier`` with that matrix.
Training costs are recomputed from each model's predictions; a mismatch is flagged; the time
ratio exactree / STreeD is summarised by its geometric mean per depth. exactree on the raw
values (every threshold) is fitted too: its cost can only be lower (a violation is flagged).

Data: the classification sets of ``../shared/data/continuous/`` (train split) and
scikit-learn's iris, wine and breast cancer. Both sides are timed through ``fit``, warm, the
fastest of up to three runs kept (``bench_continuous.best_of``). Needs the bench extra:
``pip install -e ".[bench]"``.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from bench_continuous import SETS, SKLEARN_SETS, best_of, load, summary, thermometer

from exactree import LeafCost, OptimalTreeClassifier


def loss_matrix(K: int) -> np.ndarray:
    """``L[k, c]``: 0 on the diagonal, 5 below it (a lower class named), 1 above."""
    k, c = np.indices((K, K))
    return np.where(k == c, 0.0, np.where(c < k, 5.0, 1.0))


def leaf_cost(L: np.ndarray) -> LeafCost:
    def cost(w, c):
        total = 0.0
        for k in range(w.shape[0]):
            total += w[k] * L[k, c]
        return total

    return LeafCost(cost, row_cost=float(L.max()))


def ours(X, y, depth, objective):
    start = time.perf_counter()
    model = OptimalTreeClassifier(max_depth=depth, objective=objective).fit(X, y)
    return model, time.perf_counter() - start


def streed(X, y, depth, L):
    from pystreed import STreeDCostSensitiveClassifier
    from pystreed.data import CostSpecifier, FeatureCostSpecifier

    # Features cost nothing (an empty list of feature costs crashes it with three classes).
    free = [FeatureCostSpecifier(0.0, 0.0, "", 0, 0) for _ in range(X.shape[1])]
    model = STreeDCostSensitiveClassifier(max_depth=depth, time_limit=600)
    start = time.perf_counter()
    model.fit(X, y, CostSpecifier(L.tolist(), free))
    return model, time.perf_counter() - start


def training_cost(model, X, y, L) -> float:
    return float(L[y, np.asarray(model.predict(X), np.int64)].sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--depths", type=int, nargs="+", default=[2, 3])
    parser.add_argument("--datasets", nargs="+", default=list(SETS + SKLEARN_SETS))
    parser.add_argument("--quantiles", type=int, default=10)
    args = parser.parse_args()
    ratios: dict[int, list[float]] = {}
    for name in args.datasets:
        X, y = load(name)
        y = np.unique(y, return_inverse=True)[1]
        L = loss_matrix(int(y.max()) + 1)
        objective = leaf_cost(L)
        B = thermometer(X, args.quantiles)
        ours(B, y, 1, objective)  # warm: loads the compiled search
        streed(B, y, 1, L)
        for depth in args.depths:
            m1, t1 = best_of(ours, B, y, depth, objective)
            m2, t2 = best_of(streed, B, y, depth, L)
            c1, c2 = training_cost(m1, B, y, L), training_cost(m2, B, y, L)
            raw, t3 = ours(X, y, depth, objective)
            c3 = training_cost(raw, X, y, L)
            same = "same" if math.isclose(c1, c2, abs_tol=1e-9) else "MISMATCH"
            worse = "  RAW WORSE" if c3 > c1 + 1e-9 else ""
            print(f"{name:14s} d={depth} n={len(y):6d} bin={B.shape[1]:4d}  exactree {c1:9.1f} "
                  f"{t1:9.4f}s  STreeD {c2:9.1f} {t2:9.4f}s  ratio {t1 / t2:6.2f}  {same}  |  "
                  f"raw {c3:9.1f} {t3:8.3f}s{worse}", flush=True)
            if same == "same":
                ratios.setdefault(depth, []).append(t1 / t2)
    summary(ratios)


if __name__ == "__main__":
    main()
