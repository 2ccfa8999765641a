"""The ``exactree`` command: fit an optimal tree on a CSV file and predict with a saved tree.

    exactree fit [DATA.csv] [--target COL] [--task classification|regression] [--max-depth 3]
                 [--max-thresholds K] [--subset-splits] [--categorical COL] [--time-limit S]
                 [--out tree.json]
    exactree predict tree.json DATA.csv
    exactree plot tree.json --out tree.png [--max-depth D] [--dpi 100]
    exactree --version

Without a data file, ``fit`` runs on the bundled *anneal* data. Results go to stdout, progress
to stderr; bad input ends with a one-line error and exit status 1 (2 for bad usage); a fit
stopped by Ctrl-C prints the best tree found and ends with exit status 130.

CSV files are read with ``pandas.read_csv``: UTF-8 (a byte-order mark is dropped), the
delimiter (comma, semicolon, tab or bar) taken from the header line, the usual missing-value
markers (an empty cell, ``NA``, ``NaN``, ``null``, ...) read as missing. Nothing is guessed
silently: missing values, duplicate column names, dates, a continuous target (for
classification) or a file that is not UTF-8 text are each refused with a message naming the
column (and row) and what to do, and an ID-like text column draws a one-line warning.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import re
import sys
import time
import warnings
from collections.abc import Sequence
from numbers import Integral
from typing import Any

import numpy as np

from . import __version__
from .data.columns import HighCardinalityWarning, check_categorical

#: Delimiters tried on the header line, most common first (ties go to the earlier one).
DELIMITERS = (",", ";", "\t", "|")
_MISSING_HINT = ("missing values are allowed in numeric columns only: fill this text column "
                 "(e.g. with 'missing', its own category) or drop those rows")
#: How the data layer's messages say to keep a column as categories on purpose, here.
_OPT_IN = "pass --categorical {name}"
#: A numeric target with more distinct whole numbers than max(this, CLASS_SHARE * rows) looks
#: continuous (a count, a score) rather than like class labels.
MAX_CLASSES = 20
CLASS_SHARE = 0.05
#: Exit status of a fit stopped by Ctrl-C (128 + SIGINT, the shell's convention).
EXIT_INTERRUPTED = 130


class CLIError(Exception):
    """A user-facing error: printed as one line, exit status 1."""


def _one_line(message: str) -> str:
    return " ".join(str(message).split())


# ------------------------------------------------------------------------------ reading CSV
def _decode(path: str) -> str:
    """The file's text, or a CLIError for an unreadable, empty, binary or non-UTF-8 file."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise CLIError(f"cannot read {path}: {e.strerror or e}") from None
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise CLIError(f"{path} is UTF-16 text; save it as UTF-8 (CSV UTF-8)")
    if b"\x00" in raw:
        raise CLIError(f"{path} is not a text CSV file (it holds binary data)")
    try:
        text = raw.decode("utf-8-sig")  # drops a byte-order mark
    except UnicodeDecodeError as e:
        raise CLIError(f"{path} is not UTF-8 text (byte {e.start} cannot be decoded); save it "
                       "as UTF-8 CSV") from None
    bad = re.search(r"[\x00-\x08\x0b\x0e-\x1f\x7f]", text)
    if bad:
        raise CLIError(f"{path} is not a text CSV file (control character {bad.group()!r} at "
                       f"character {bad.start()})")
    if not text.strip():
        raise CLIError(f"{path} is empty; it needs a header line and at least one data row")
    return text


def _header(path: str, text: str) -> tuple[str, list[str]]:
    """``(delimiter, column names)`` from the first non-blank line; duplicate names refused."""
    first = next(line for line in text.splitlines() if line.strip())
    best, names = DELIMITERS[0], [first]
    for delimiter in DELIMITERS:
        try:
            fields = next(csv.reader([first], delimiter=delimiter, skipinitialspace=True))
        except (csv.Error, StopIteration):
            continue
        if len(fields) > len(names):
            best, names = delimiter, fields
    seen: dict[str, int] = {}
    for j, name in enumerate(names):
        if not name.strip():
            raise CLIError(f"{path}: column {j + 1} has no name in the header (a saved index? "
                           "drop it or name it)")
        if name in seen:
            raise CLIError(f"{path}: the header names column {name!r} twice (columns "
                           f"{seen[name] + 1} and {j + 1}); column names must be unique")
        seen[name] = j
    return best, names


def _check_field_counts(path: str, text: str, delimiter: str, n_fields: int) -> None:
    """Every non-blank line holds as many fields as the header (pandas would pad short lines
    with missing values and could take an extra leading field for an index)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter,
                        skipinitialspace=True)
    try:
        for row in reader:
            if len(row) != n_fields and row and not (len(row) == 1 and not row[0].strip()):
                raise CLIError(f"{path}, line {reader.line_num}: {len(row)} fields, the header "
                               f"has {n_fields}")
    except csv.Error as e:
        raise CLIError(f"cannot parse {path}, line {reader.line_num}: {e}") from None


def _read_csv(path: str, text_columns: Sequence[str] | None = None,
              target: str | None = None, *, with_target: bool = True) -> tuple[Any, str | None]:
    """The file as a pandas DataFrame, and the target column name (``target`` or the last;
    None without ``with_target``, as for predict).

    ``text_columns`` and the target are read as text exactly as written; the other columns get
    pandas' type inference (numbers, booleans, text).
    """
    import pandas as pd

    text = _decode(path)
    delimiter, names = _header(path, text)
    if target is None and with_target:
        target = names[-1]
    if target is not None and target not in names:
        shown = ", ".join(repr(n) for n in names[:8]) + (", ..." if len(names) > 8 else "")
        raise CLIError(f"target column {target!r} is not in {path} (its columns: {shown})")
    _check_field_counts(path, text, delimiter, len(names))
    as_text = list(text_columns or ()) + ([target] if target is not None else [])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(io.StringIO(text), sep=delimiter, skipinitialspace=True,
                                index_col=False,
                                dtype={c: str for c in as_text if c in names}, low_memory=False)
    except (pd.errors.ParserError, pd.errors.ParserWarning, pd.errors.EmptyDataError,
            ValueError, csv.Error) as e:
        raise CLIError(f"cannot parse {path}: {_parser_message(e)}") from None
    if len(frame) == 0:
        raise CLIError(f"{path} needs a header line and at least one data row")
    if frame.shape[1] != len(names):
        raise CLIError(f"cannot parse {path}: found {frame.shape[1]} columns, the header "
                       f"names {len(names)}")
    frame.columns = names  # exactly as written (pandas would rename duplicates or blanks)
    return frame, target


def _parser_message(e: Exception) -> str:
    m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(e))
    if m:
        return f"line {m.group(2)} has {m.group(3)} fields, the header has {m.group(1)}"
    return _one_line(str(e)) or type(e).__name__


def _missing_error(column: str, row: int) -> CLIError:
    return CLIError(f"column {column!r}, data row {row + 1}: missing value (an empty cell or a "
                    f"marker such as NA); {_MISSING_HINT}")


def _first_missing(series: Any) -> int | None:
    missing = np.flatnonzero(series.isna().to_numpy())
    return int(missing[0]) if len(missing) else None


def _features(frame: Any, path: str, categorical: Sequence[str] = ()) -> Any:
    """Check the feature columns: missing values in numeric columns only (the tree routes
    them); text columns stay categorical, but those not named in ``categorical`` (--categorical)
    are checked by the data layer as in Python: dates refused, an ID-like column warned about
    (one line on stderr)."""
    from pandas.api.types import is_numeric_dtype

    for name in categorical:
        if name not in frame.columns:
            raise CLIError(f"--categorical {name}: {path} has no feature column {name!r}")
    for name in frame.columns:
        column = frame[name]
        row = _first_missing(column)
        if row is not None and not is_numeric_dtype(column.dtype):
            raise _missing_error(name, row)  # numeric columns keep NaN: the tree routes them
        if is_numeric_dtype(column.dtype) or name in categorical:
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", HighCardinalityWarning)
            try:
                check_categorical(name, column.unique().tolist(), len(column), opt_in=_OPT_IN)
            except ValueError as e:
                raise CLIError(f"{path}: {e}") from None
        for w in caught:
            print(f"exactree: warning: {_one_line(str(w.message))}", file=sys.stderr)
    return frame


def _numbers(labels: np.ndarray) -> list[float] | None:
    """The distinct values of a text column as numbers, or None if one is not a number."""
    numbers = []
    for v in set(labels.tolist()):
        try:
            numbers.append(float(v))
        except ValueError:
            return None
    return numbers


def _labels(frame: Any, target: str, explicit: bool = False) -> np.ndarray:
    """The target column as text labels; empty labels and continuous numbers refused.

    Numbers look continuous when one is not whole, or when there are more distinct whole
    numbers than ``max(MAX_CLASSES, CLASS_SHARE * rows)`` (a count or a score, such as
    scikit-learn's diabetes target: 214 values in 442 rows). ``explicit`` (``--task
    classification`` given) lifts the second rule: the user says the numbers are classes.
    """
    y = frame[target]
    row = _first_missing(y)
    if row is not None:
        raise CLIError(f"target column {target!r}, data row {row + 1}: empty label (every row "
                       "needs a class label)")
    labels = y.to_numpy(dtype=object)
    numbers = _numbers(labels)
    if numbers is None:
        return labels
    if not all(math.isfinite(x) and x == int(x) for x in numbers):
        example = sorted(numbers)[len(numbers) // 2]
        raise CLIError(
            f"target column {target!r} holds continuous numbers ({len(numbers)} distinct "
            f"values such as {example:g}); use --task regression to fit a regression tree, or "
            "choose a column of class labels or bin this one into classes first")
    if not explicit and len(numbers) > max(MAX_CLASSES, CLASS_SHARE * len(labels)):
        raise CLIError(
            f"target column {target!r} looks continuous ({len(numbers)} distinct whole numbers "
            f"in {len(labels)} rows); use --task regression to fit a regression tree, or give "
            "--task classification explicitly to fit its values as classes anyway")
    return labels


def _targets(frame: Any, target: str) -> np.ndarray:
    """The target column as finite floats, for ``--task regression``."""
    y = frame[target]
    row = _first_missing(y)
    if row is not None:
        raise CLIError(f"target column {target!r}, data row {row + 1}: empty value (every row "
                       "needs a target value)")
    values = y.tolist()
    out = np.empty(len(values))
    for i, v in enumerate(values):
        try:
            out[i] = float(v)
        except ValueError:
            raise CLIError(f"target column {target!r}, data row {i + 1} holds {v!r}, not a "
                           "number; --task regression needs a numeric target (use --task "
                           "classification for class labels)") from None
        if not math.isfinite(out[i]):
            raise CLIError(f"target column {target!r}, data row {i + 1}: {v!r} is not a "
                           "finite number")
    return out


# ------------------------------------------------------------------------------- commands
def _check_out(path: str | None) -> None:
    """Refuse an output path that cannot be written, before any work is done."""
    if not path:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise CLIError(f"--out {path} is a directory; give a file name")
    if not os.path.isdir(folder):
        raise CLIError(f"--out {path}: the directory {folder} does not exist")
    target = path if os.path.exists(path) else folder
    if not os.access(target, os.W_OK):
        raise CLIError(f"--out {path}: no permission to write there")


def _flag_error(error: Exception, model: Any) -> CLIError:
    """A parameter's error (``The 'time_limit' parameter of ... must be ...``) in terms of its
    flag: ``--time-limit must be > 0 (got 0.0)``, read from the estimator's constraints."""
    from .estimators._params import Interval

    m = re.match(r"The '(\w+)' parameter of \w+ must be .*Got (.*) instead\.", str(error), re.S)
    if not m:
        return CLIError(_one_line(str(error)))
    name, got = m.groups()
    flag = "--" + name.replace("_", "-")
    bounds = [c for c in type(model)._parameter_constraints.get(name, ())
              if isinstance(c, Interval)]
    if not bounds:
        return CLIError(f"{flag}: {_one_line(str(error))}")
    iv = bounds[0]
    low = {"both": ">=", "left": ">="}.get(iv.closed, ">")
    high = {"both": "<=", "right": "<="}.get(iv.closed, "<")
    kind = "a whole number " if iv.type is Integral else ""
    if iv.closed == "both" and iv.left is not None and iv.right is not None:
        rule = f"between {iv.left:g} and {iv.right:g}"
    else:
        rule = " and ".join(([] if iv.left is None else [f"{low} {iv.left:g}"])
                            + ([] if iv.right is None else [f"{high} {iv.right:g}"]))
    return CLIError(f"{flag} must be {kind}{rule} (got {got})")


def _gap_text(gap: float) -> str:
    """A gap as the progress lines write it (see exactree.progress): percent, '-' if unknown."""
    return "-" if not math.isfinite(gap) else f"{100 * gap:.1f}%"


def _model(args: argparse.Namespace) -> Any:
    """The estimator the flags describe (``--task``), its parameters checked."""
    from .estimators.optimal import OptimalTreeClassifier
    from .estimators.regressor import OptimalTreeRegressor

    kind = OptimalTreeRegressor if args.task == "regression" else OptimalTreeClassifier
    model = kind(max_depth=args.max_depth, max_nodes=args.max_nodes,
                 min_samples_leaf=args.min_samples_leaf, cost_complexity=args.cost_complexity,
                 time_limit=args.time_limit, max_thresholds=args.max_thresholds,
                 categorical_features=args.categorical,
                 categorical_splits="subset" if args.subset_splits else "equality",
                 verbose=0 if args.quiet else 1)
    try:
        model._validate_params()  # bad options fail before any reading
    except ValueError as e:
        raise _flag_error(e, model) from None
    return model


def _fit(args: argparse.Namespace) -> int:
    regression = args.task == "regression"
    model = _model(args)
    _check_out(args.out)
    if args.data is None:
        if regression:
            raise CLIError("the bundled anneal data has class labels: --task regression needs "
                           "a data file with a numeric target")
        from .data import load_anneal

        X, y, names = load_anneal()
        print("exactree: no data file given, using the bundled anneal data", file=sys.stderr)
    else:
        frame, target = _read_csv(args.data, text_columns=args.categorical, target=args.target)
        if target in (args.categorical or ()):
            raise CLIError(f"--categorical {target}: that is the target column")
        y = _targets(frame, target) if regression else \
            _labels(frame, target, explicit=args.task is not None)
        X = _features(frame.drop(columns=[target]), args.data, args.categorical or ())
        if X.shape[1] == 0:
            raise CLIError(f"{args.data} has no feature columns besides the target {target!r}")
    if not args.quiet:
        print(f"exactree: fitting depth {args.max_depth} on {X.shape[0]} rows x {X.shape[1]} "
              "columns (Ctrl-C stops the search and keeps the best tree so far) ...",
              file=sys.stderr)
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            # _features has said it in one line already
            warnings.simplefilter("ignore", HighCardinalityWarning)
            model.fit(X, y)
    except ValueError as e:
        raise CLIError(_one_line(str(e))) from None
    if args.data is None:
        model.tree_.feature_names = tuple(names)
    if not args.quiet:
        print(f"exactree: done in {time.perf_counter() - start:.2f} s", file=sys.stderr)
    from .tree import export_text

    print(export_text(model.tree_), end="")
    if regression:
        mse = float(np.mean((model.predict(X) - y) ** 2))
        print(f"training R²: {model.score(X, y):.4f}   training MSE: {mse:.6g}")
    else:
        print(f"training accuracy: {model.score(X, y):.4f}")
    print(f"objective: {model.objective_:g}   lower bound: {model.lower_bound_:g}   "
          f"gap: {_gap_text(model.gap_)}   status: {model.status_}")
    if args.out:
        try:
            with open(args.out, "w") as f:
                json.dump(model.tree_.to_dict(), f)
        except OSError as e:
            raise CLIError(f"cannot write {args.out}: {e.strerror or e}") from None
        print(f"exactree: tree written to {args.out}", file=sys.stderr)
    if model.status_ == "interrupted":
        print("exactree: interrupted: the tree above is the best found, not proven optimal",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0


def _load_tree(path: str) -> Any:
    from .tree import Tree

    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise CLIError(f"cannot load tree from {path}: {e.strerror or e}") from None
    try:
        description = json.loads(raw)
    except (ValueError, RecursionError):
        raise CLIError(f"cannot load tree from {path}: it is not a JSON file (write one with "
                       "'exactree fit --out')") from None
    try:
        return Tree.from_dict(description)
    except ValueError as e:
        raise CLIError(f"cannot load tree from {path}: {_one_line(str(e))}") from None


def _predict(args: argparse.Namespace) -> int:
    tree = _load_tree(args.tree)
    names = list(tree.feature_names or [f"x{j}" for j in range(tree.n_features)])
    categories = list(tree.categories or [None] * tree.n_features)
    text = [n for n, c in zip(names, categories) if c is not None]
    frame, _ = _read_csv(args.data, text_columns=text, with_target=False)
    missing = [n for n in names if n not in frame.columns]
    if missing:
        raise CLIError(f"{args.data} lacks the columns {', '.join(repr(m) for m in missing)}")
    X = np.empty((len(frame), len(names)))
    for j, (name, cats) in enumerate(zip(names, categories)):
        column = frame[name]
        row = _first_missing(column)
        if row is not None and cats is not None:
            raise _missing_error(name, row)
        if cats is None:
            if column.dtype.kind not in "biuf":
                from .data.validation import is_number

                values = column.tolist()
                bad = next(i for i, v in enumerate(values) if not is_number(v))
                raise CLIError(f"column {name!r} must be numeric (it was in fit), but data row "
                               f"{bad + 1} holds {values[bad]!r}")
            X[:, j] = column.to_numpy(dtype=np.float64)
            if np.isinf(X[:, j]).any():  # NaN (missing) is routed by the tree
                bad = int(np.flatnonzero(np.isinf(X[:, j]))[0])
                raise CLIError(f"column {name!r}, data row {bad + 1}: infinity is not a value "
                               "a tree can split")
        else:
            index = {str(c): i for i, c in enumerate(cats)}
            values = column.tolist()
            unknown = sorted(set(values) - set(index))
            if unknown:
                raise CLIError(f"column {name!r} holds categories not seen in fit: "
                               f"{', '.join(repr(u) for u in unknown[:5])}")
            X[:, j] = [index[v] for v in values]
    from .tree.tree import prefer_compiled

    try:
        if prefer_compiled(tree, len(X)):
            from ._compile_note import note_compiling
            from .tree.compiled import predict_leaves

            note_compiling()
            leaves = predict_leaves(tree, X, method="compiled")
        else:
            leaves = tree.apply(X)
    except ValueError as e:
        raise CLIError(_one_line(str(e))) from None
    if tree.is_regression:  # the leaf means, each written to round-trip exactly
        sys.stdout.write("".join(f"{float(v)!r}\n" for v in tree.value[leaves, 0]))
        return 0
    classes = tree.class_names or list(range(tree.n_classes))
    sys.stdout.write("".join(f"{classes[k]}\n" for k in tree.label[leaves]))
    return 0


def _plot(args: argparse.Namespace) -> int:
    """Draw a saved tree to an image file (the format follows the file name: png, svg, pdf)."""
    _check_out(args.out)
    tree = _load_tree(args.tree)
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: no window, no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        raise CLIError("plotting needs matplotlib: pip install \"exactree[plot]\" (or pip "
                       "install matplotlib)") from None
    from .plotting import plot_tree

    ax = plot_tree(tree, max_depth=args.max_depth)
    try:
        ax.figure.savefig(args.out, dpi=args.dpi, bbox_inches="tight")
    except (OSError, ValueError) as e:
        raise CLIError(f"cannot write {args.out}: {_one_line(str(e))}") from None
    finally:
        plt.close(ax.figure)
    print(f"exactree: tree drawn to {args.out}", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``exactree`` parser; every option's help says its default."""
    parser = argparse.ArgumentParser(prog="exactree", description="Provably optimal decision trees.")
    parser.add_argument("--version", action="version", version=f"exactree {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    fit = sub.add_parser("fit", help="fit an optimal tree and print it")
    fit.add_argument("data", nargs="?", help="CSV file with a header (default: the bundled "
                                             "anneal data)")
    fit.add_argument("--target", help="target column (default: the last column)")
    fit.add_argument("--task", choices=("classification", "regression"), default=None,
                     help="classification (OptimalTreeClassifier) or regression "
                          "(OptimalTreeRegressor, least squares) (default: classification, "
                          "which refuses a target that looks continuous; give it explicitly "
                          "to fit many whole numbers as classes anyway)")
    fit.add_argument("--max-depth", type=int, default=3, help="most levels of splits "
                                                              "(default: 3)")
    fit.add_argument("--max-nodes", type=int, default=None,
                     help="most splits in the tree (default: any number within --max-depth)")
    fit.add_argument("--min-samples-leaf", type=int, default=1,
                     help="least training rows in every leaf (default: 1)")
    fit.add_argument("--cost-complexity", type=float, default=0.0,
                     help="alpha: the objective adds alpha per split to the training error "
                          "rate (regression: to SSE / SSE of one leaf) (default: 0)")
    fit.add_argument("--max-thresholds", type=int, default=None,
                     help="cap candidate thresholds per numeric column (quantiles); the status "
                          "then says optimal_on_binarized (default: no cap, every threshold)")
    fit.add_argument("--subset-splits", action="store_true",
                     help="also split text columns into any two groups of their values "
                          "('colour in {red, blue}'; at most 10 values per column) (default: "
                          "equality tests 'colour = red' only)")
    fit.add_argument("--categorical", action="append", metavar="COL",
                     help="a column to split as categories on purpose, read as text; repeat "
                          "for several (default: text columns only; a text column of dates is "
                          "refused and an ID-like one warned about unless named here)")
    fit.add_argument("--time-limit", type=float, default=None,
                     help="seconds for the whole fit; then the best tree found is kept "
                          "(default: none, run until proven optimal)")
    fit.add_argument("--out", help="write the fitted tree as JSON, checked before fitting "
                                   "(default: not written)")
    fit.add_argument("--quiet", action="store_true",
                     help="no progress on stderr (default: a fit over a second shows a line "
                          "about once a second)")
    fit.set_defaults(run=_fit)
    pred = sub.add_parser("predict", help="predict labels (or values) with a saved tree")
    pred.add_argument("tree", help="tree JSON written by 'exactree fit --out'")
    pred.add_argument("data", help="CSV file with the tree's feature columns")
    pred.set_defaults(run=_predict)
    plot = sub.add_parser("plot", help="draw a saved tree to an image (needs matplotlib)")
    plot.add_argument("tree", help="tree JSON written by 'exactree fit --out'")
    plot.add_argument("--out", required=True,
                      help="image file; the format follows its extension (png, svg, pdf)")
    plot.add_argument("--max-depth", type=int, default=None,
                      help="levels to draw (default: all)")
    plot.add_argument("--dpi", type=int, default=100, help="resolution (default: 100)")
    plot.set_defaults(run=_plot)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except CLIError as e:
        print(f"exactree: error: {e}", file=sys.stderr)
        return 1
    except MemoryError:
        print("exactree: error: out of memory (try a smaller --max-depth, --max-thresholds or "
              "less data)", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("exactree: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
