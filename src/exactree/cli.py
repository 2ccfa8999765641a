"""The ``exactree`` command: fit an optimal tree on a CSV file and predict with a saved tree.

    exactree fit [DATA.csv] [--target COL] [--max-depth 3] [--time-limit S] [--out tree.json]
    exactree predict tree.json DATA.csv

Without a data file, ``fit`` runs on the bundled *anneal* data. Results go to stdout, progress
to stderr; bad input ends with a one-line error and exit status 1 (2 for bad usage).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections.abc import Sequence

import numpy as np

from .data import load_anneal
from .tree import Tree, export_text


class CLIError(Exception):
    """A user-facing error: printed as one line, exit status 1."""


def _read_csv(path: str) -> tuple[list[str], list[list[str]]]:
    try:
        with open(path, newline="") as f:
            rows = [r for r in csv.reader(f) if r]
    except OSError as e:
        raise CLIError(f"cannot read {path}: {e.strerror}") from None
    if len(rows) < 2:
        raise CLIError(f"{path} needs a header line and at least one data row")
    header, data = rows[0], rows[1:]
    for i, r in enumerate(data, start=2):
        if len(r) != len(header):
            raise CLIError(f"{path}, line {i}: {len(r)} fields, the header has {len(header)}")
    return header, data


def _column(values: list[str], name: str) -> np.ndarray:
    """Numbers when every value parses as one, else the strings (a categorical column)."""
    for i, v in enumerate(values, start=2):
        if not v.strip():
            raise CLIError(f"column {name!r}, line {i}: empty value (missing values are not "
                           "supported)")
    try:
        return np.array([float(v) for v in values])
    except ValueError:
        return np.array(values, dtype=object)


def _matrix(columns: list[np.ndarray]) -> np.ndarray:
    if all(c.dtype != object for c in columns):
        return np.column_stack(columns)
    return np.column_stack([c.astype(object) for c in columns])


def _fit(args: argparse.Namespace) -> int:
    from .estimators.optimal import OptimalTreeClassifier

    if args.data is None:
        X, y, names = load_anneal()
        print("exactree: no data file given, using the bundled anneal data", file=sys.stderr)
    else:
        header, rows = _read_csv(args.data)
        target = args.target if args.target is not None else header[-1]
        if target not in header:
            raise CLIError(f"target column {target!r} is not in {args.data}")
        t = header.index(target)
        y = np.array([r[t] for r in rows], dtype=object)
        names = [h for j, h in enumerate(header) if j != t]
        X = _matrix([_column([r[j] for r in rows], header[j]) for j in range(len(header))
                     if j != t])
    model = OptimalTreeClassifier(max_depth=args.max_depth, max_nodes=args.max_nodes,
                                  min_samples_leaf=args.min_samples_leaf,
                                  cost_complexity=args.cost_complexity,
                                  time_limit=args.time_limit)
    print(f"exactree: fitting depth {args.max_depth} on {X.shape[0]} rows x {X.shape[1]} "
          "columns ...", file=sys.stderr)
    start = time.perf_counter()
    try:
        model.fit(X, y)
    except ValueError as e:
        raise CLIError(str(e)) from None
    model.tree_.feature_names = tuple(names)
    print(f"exactree: done in {time.perf_counter() - start:.2f} s", file=sys.stderr)
    print(export_text(model.tree_), end="")
    print(f"training accuracy: {model.score(X, y):.4f}")
    print(f"objective: {model.objective_:g}   lower bound: {model.lower_bound_:g}   "
          f"gap: {model.gap_:.4g}   status: {model.status_}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(model.tree_.to_dict(), f)
        print(f"exactree: tree written to {args.out}", file=sys.stderr)
    return 0


def _predict(args: argparse.Namespace) -> int:
    try:
        with open(args.tree) as f:
            tree = Tree.from_dict(json.load(f))
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise CLIError(f"cannot load tree from {args.tree}: {e}") from None
    header, rows = _read_csv(args.data)
    names = tree.feature_names or [f"x{j}" for j in range(tree.n_features)]
    missing = [n for n in names if n not in header]
    if missing:
        raise CLIError(f"{args.data} lacks the columns {', '.join(missing)}")
    X = np.empty((len(rows), len(names)))
    for j, name in enumerate(names):
        values = [r[header.index(name)] for r in rows]
        cats = tree.categories[j] if tree.categories else None
        if cats is None:
            try:
                X[:, j] = [float(v) for v in values]
            except ValueError:
                raise CLIError(f"column {name!r} must be numeric") from None
        else:
            index = {str(c): i for i, c in enumerate(cats)}
            unknown = sorted(set(values) - set(index))
            if unknown:
                raise CLIError(f"column {name!r} holds categories not seen in fit: {unknown[:5]}")
            X[:, j] = [index[v] for v in values]
    try:
        labels = tree.predict(X)
    except ValueError as e:
        raise CLIError(str(e)) from None
    classes = tree.class_names or list(range(tree.n_classes))
    sys.stdout.write("".join(f"{classes[k]}\n" for k in labels))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="exactree", description="Provably optimal decision trees.")
    sub = parser.add_subparsers(dest="command", required=True)
    fit = sub.add_parser("fit", help="fit an optimal tree and print it")
    fit.add_argument("data", nargs="?", help="CSV file with a header (default: bundled anneal)")
    fit.add_argument("--target", help="label column (default: the last column)")
    fit.add_argument("--max-depth", type=int, default=3)
    fit.add_argument("--max-nodes", type=int, default=None)
    fit.add_argument("--min-samples-leaf", type=int, default=1)
    fit.add_argument("--cost-complexity", type=float, default=0.0)
    fit.add_argument("--time-limit", type=float, default=None, help="seconds")
    fit.add_argument("--out", help="write the fitted tree as JSON")
    fit.set_defaults(run=_fit)
    pred = sub.add_parser("predict", help="predict labels with a saved tree")
    pred.add_argument("tree", help="tree JSON written by 'exactree fit --out'")
    pred.add_argument("data", help="CSV file with the tree's feature columns")
    pred.set_defaults(run=_predict)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except CLIError as e:
        print(f"exactree: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
