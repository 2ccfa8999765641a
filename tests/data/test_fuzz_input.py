"""Fuzzing the input paths: random bytes, random CSV shapes and random DataFrames with mixed
dtypes go to ``fit``/``predict`` and the command line. Every outcome must be a result or a
one-line error (a ``ValueError`` from the API, exit status 1 from the CLI), never a traceback;
and a valid input must give the provably optimal answer (checked against brute force)."""

from __future__ import annotations

import contextlib
import io
import math
import os
import re
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from oracles import missing_value_splits, optimal_cost

from exactree import OptimalTreeClassifier
from exactree.cli import main

# Kept small for the suite; EXACTREE_FUZZ_EXAMPLES=2000 (and derandomize off) digs deeper.
FUZZ = settings(max_examples=int(os.environ.get("EXACTREE_FUZZ_EXAMPLES", 40)), deadline=None,
                derandomize="EXACTREE_FUZZ_EXAMPLES" not in os.environ,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def oracle(columns: list[list], numeric: list[bool], y: list, depth: int) -> float:
    """Optimal misclassification over every exact test: ``x <= midpoint`` for numeric columns
    (each side for missing values, where a column has some), ``x == category`` for the others."""
    tests = []
    for values, is_number in zip(columns, numeric):
        if is_number and np.isnan(np.asarray(values, float)).any():
            tests += list(missing_value_splits(np.asarray(values, float)[:, None]).T)
        elif is_number:
            v = np.asarray(values, float)
            distinct = np.unique(v)
            tests += [v <= (a + b) / 2 for a, b in zip(distinct[:-1], distinct[1:])]
        else:
            tests += [np.array([x == c for x in values]) for c in sorted(set(values))]
    Z = np.column_stack(tests) if tests else np.zeros((len(y), 0), bool)
    y_index = np.unique(np.asarray(y, dtype=object).astype(str), return_inverse=True)[1]
    return optimal_cost(Z, y_index, int(y_index.max()) + 1, depth)


def run_cli(*args: str) -> tuple[int, str, str]:
    """``main(args)`` with its output captured; an exception here fails the test."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(args))
    return rc, out.getvalue(), err.getvalue()


def assert_one_line_error(rc: int, out: str, err: str) -> None:
    assert rc == 1, (rc, err)
    last = err.strip().splitlines()[-1]
    assert last.startswith("exactree: error:") and "Traceback" not in err
    assert out == ""


GOOD_TREE: dict[str, str] = {}


def good_tree(folder: Path) -> str:
    """A tree saved by ``exactree fit`` on a small valid file (for predict on fuzzed files)."""
    path = folder / "tree.json"
    if "json" not in GOOD_TREE:
        data = folder / "good.csv"
        data.write_text("a,b,label\n1,red,x\n2,blue,y\n3,red,y\n4,blue,x\n")
        assert run_cli("fit", str(data), "--max-depth", "1", "--out", str(path))[0] == 0
        GOOD_TREE["json"] = path.read_text()
    path.write_text(GOOD_TREE["json"])
    return str(path)


# ------------------------------------------------------------------------------ raw bytes
@FUZZ
@given(st.binary(max_size=300) | st.text(max_size=200).map(str.encode))
def test_random_bytes_never_traceback(raw):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "data.csv"
        path.write_bytes(raw)
        for args in (("fit", str(path), "--max-depth", "1"),
                     ("predict", good_tree(Path(d)), str(path)),
                     ("predict", str(path), str(path))):
            rc, out, err = run_cli(*args)
            event(f"bytes: exit {rc}")
            if rc != 0:
                assert_one_line_error(rc, out, err)


# ----------------------------------------------------------------------------- CSV shapes
NUMBERS = st.integers(-3, 3).map(str) | st.sampled_from(["0.5", "1.25", "-2.5", "10"])
WORDS = st.sampled_from(["red", "blue", "x y", "Zürich", "1a"])
SPECIAL = st.sampled_from(["", "NA", "2024-01-02"])


@st.composite
def csv_tables(draw):
    n_cols = draw(st.integers(1, 4))
    n_rows = draw(st.integers(1, 9))
    header = draw(st.lists(st.sampled_from(["a", "b", "c", "d", "label"]), min_size=n_cols,
                           max_size=n_cols))
    kinds = draw(st.lists(st.sampled_from(["num", "num", "word", "mixed", "date"]),
                          min_size=n_cols, max_size=n_cols))
    cells = []
    for _ in range(n_rows):
        row = []
        for kind in kinds:
            if kind == "date":
                row.append(draw(st.sampled_from(["2024-01-02", "2023-12-31", "1999-07-04"])))
            else:
                pool = {"num": NUMBERS, "word": WORDS, "mixed": NUMBERS | WORDS}[kind]
                row.append(draw(SPECIAL) if draw(st.integers(0, 29)) == 0 else draw(pool))
        cells.append(row)
    labels = draw(st.sampled_from([["x", "y"], ["1", "2", "3"], ["x", "y"], ["0.5", "1.5"],
                                   ["only"]]))
    for row in cells:
        row[-1] = draw(st.sampled_from(labels + ([""] if draw(st.integers(0, 19)) == 0 else [])))
    ragged = draw(st.integers(0, 9)) == 0 and n_rows > 1
    if ragged:
        cells[-1] = cells[-1][:-1] if n_cols > 1 else cells[-1] + ["extra"]
    return header, cells, ragged, draw(st.sampled_from([",", ";", "\t"])), draw(st.booleans()), \
        draw(st.sampled_from(["\n", "\r\n"]))


def expected_valid(header, cells, ragged) -> bool:
    if ragged or len(set(header)) < len(header) or len(header) < 2:
        return False
    columns = list(zip(*cells))
    if any(c in ("", "NA") for col in columns for c in col):
        return False
    if any(all(re.fullmatch(r"\d{4}-\d\d-\d\d", c) for c in col) for col in columns[:-1]):
        return False
    labels = columns[-1]
    if len(set(labels)) < 2:
        return False
    try:
        values = [float(v) for v in labels]
    except ValueError:
        return True
    return all(v == int(v) for v in values)


def is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


@FUZZ
@given(csv_tables(), st.integers(1, 2))
def test_random_csv_shapes_give_the_optimum_or_one_line(table, depth):
    header, cells, ragged, delimiter, bom, newline = table
    text = newline.join(delimiter.join(r) for r in [header] + cells) + newline
    with tempfile.TemporaryDirectory() as d:
        path, tree = Path(d) / "data.csv", Path(d) / "tree.json"
        path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
        rc, out, err = run_cli("fit", str(path), "--max-depth", str(depth), "--out", str(tree))
        event("csv: valid" if expected_valid(header, cells, ragged) else "csv: refused")
        if not expected_valid(header, cells, ragged):
            assert_one_line_error(rc, out, err)
            return
        assert rc == 0, err
        columns = [list(c) for c in zip(*cells)]
        numeric = [all(is_number(v) for v in col) for col in columns[:-1]]
        features = [[float(v) for v in col] if num else col
                    for col, num in zip(columns[:-1], numeric)]
        best = oracle(features, numeric, columns[-1], depth)
        assert f"objective: {best:g} " in out, (out, best)
        rc, predicted, err = run_cli("predict", str(tree), str(path))
        assert rc == 0, err
        wrong = sum(p != t for p, t in zip(predicted.split("\n"), columns[-1]))
        assert wrong == best


# ---------------------------------------------------------------------- mixed DataFrames
COLUMN_KINDS = ["float", "int", "bool", "category", "str", "float_nan", "float_inf", "datetime",
                "str_none", "mixed_object"]


@st.composite
def frames(draw):
    n = draw(st.integers(2, 10))
    n_cols = draw(st.integers(1, 3))
    data, numeric, valid = {}, [], True
    for j in range(n_cols):
        kind = draw(st.sampled_from(COLUMN_KINDS[:5] if draw(st.integers(0, 4)) else COLUMN_KINDS))
        floats = draw(st.lists(st.sampled_from([-1.5, 0.0, 0.25, 2.0, 3.0]), min_size=n, max_size=n))
        words = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n))
        name = f"c{j}"
        if kind == "float":
            data[name] = floats
        elif kind == "int":
            data[name] = [int(v * 4) for v in floats]
        elif kind == "bool":
            data[name] = [v > 0.1 for v in floats]
        elif kind == "category":
            data[name] = pd.Categorical(words)
        elif kind == "str":
            data[name] = words
        elif kind in ("float_nan", "float_inf"):
            floats[draw(st.integers(0, n - 1))] = math.nan if kind == "float_nan" else math.inf
            data[name] = floats
        elif kind == "datetime":
            data[name] = pd.to_datetime([f"2020-01-{1 + int(v * 2 + 3):02d}" for v in floats])
        elif kind == "str_none":
            words[draw(st.integers(0, n - 1))] = None
            data[name] = words
        else:  # numbers and strings in one object column: no order between them
            data[name] = pd.Series([1.0] + words[1:], dtype=object)
        numeric.append(kind in ("float", "int", "bool", "float_nan"))
        valid &= kind in ("float", "int", "bool", "category", "str", "float_nan")
    pool = draw(st.sampled_from([["p", "q"], [0, 1, 2], [True, False], ["p", 7]]))
    y = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    if draw(st.integers(0, 9)) == 0:
        y[0] = None
    return pd.DataFrame(data), numeric, y, valid


@FUZZ
@given(frames(), st.integers(1, 2))
def test_random_dataframes_give_the_optimum_or_a_clear_error(frame_case, depth):
    X, numeric, y, valid = frame_case
    labels = pd.Series(y, dtype=object)
    mixed_labels = len({type(v) for v in y if v is not None}) > 1
    valid &= None not in y and not mixed_labels and len(set(y)) >= 2
    model = OptimalTreeClassifier(max_depth=depth)
    event("frame: valid" if valid else "frame: refused")
    if not valid:
        with pytest.raises(ValueError) as e:
            model.fit(X, labels)
        assert "\n" not in str(e.value).strip()
        return
    model.fit(X, labels)
    columns = [X[c].astype(float).tolist() if num else X[c].astype(str).tolist()
               for c, num in zip(X.columns, numeric)]
    best = oracle(columns, numeric, y, depth)
    assert model.objective_ == best
    assert (model.predict(X) != labels.to_numpy()).sum() == best
    assert np.array_equal(model.apply(X), model.tree_.apply(model.encoder_.transform(X)))
