"""The exactree command line: output, JSON round trip through predict, exit codes, and every
kind of bad input ending in one line on stderr (files in tests/data/csv, see its README)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import exactree
from exactree import OptimalTreeClassifier
from exactree.cli import main

DATA = Path(__file__).resolve().parent / "data" / "csv"


@pytest.fixture
def csv_file(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "data.csv"
    rows = ["age,colour,label"]
    for _ in range(40):
        age, colour = rng.integers(20, 70), rng.choice(["red", "blue"])
        label = "yes" if (age > 45) != (colour == "red") else "no"
        rows.append(f"{age},{colour},{label}")
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.fixture
def good_tree(tmp_path):
    """A tree fitted on tests/data/csv/good.csv, saved as JSON."""
    out = tmp_path / "tree.json"
    assert main(["fit", str(DATA / "good.csv"), "--max-depth", "2", "--out", str(out)]) == 0
    return out


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert err, "no error printed"
    assert err[-1].startswith("exactree: error:")
    assert "Traceback" not in "\n".join(err)
    return err[-1]


def test_fit_bundled_data(capsys):
    assert main(["fit", "--max-depth", "2"]) == 0
    out, err = capsys.readouterr()
    assert "training accuracy" in out and "status: optimal" in out and "objective: 137" in out
    assert "bundled anneal" in err


def test_fit_shows_progress_unless_quiet(capsys):
    assert main(["fit", str(DATA / "good.csv"), "--max-depth", "2"]) == 0
    err = capsys.readouterr().err
    assert "Ctrl-C stops the search" in err and "[exactree] optimal: OptimalTreeClassifier:" in err
    assert main(["fit", str(DATA / "good.csv"), "--max-depth", "2", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "status: optimal" in out


def test_fit_csv_then_predict(csv_file, tmp_path, capsys):
    out_json = tmp_path / "tree.json"
    assert main(["fit", str(csv_file), "--target", "label", "--max-depth", "2",
                 "--out", str(out_json)]) == 0
    out, _ = capsys.readouterr()
    assert "training accuracy: 1.0000" in out and "colour = " in out and "age <= " in out
    assert json.loads(out_json.read_text())["feature_names"] == ["age", "colour"]
    assert main(["predict", str(out_json), str(csv_file)]) == 0
    predicted = capsys.readouterr().out.split()
    expected = [line.split(",")[2] for line in csv_file.read_text().split()[1:]]
    assert predicted == expected


def test_cli_answer_equals_the_python_api(good_tree, capsys):
    """Same data through pandas + the estimator gives the same tree and predictions."""
    capsys.readouterr()
    frame = pd.read_csv(DATA / "good.csv")
    X, y = frame.drop(columns="label"), frame["label"]
    model = OptimalTreeClassifier(max_depth=2).fit(X, y)
    assert exactree.Tree.from_dict(json.loads(good_tree.read_text())) == model.tree_
    assert main(["predict", str(good_tree), str(DATA / "good.csv")]) == 0
    assert capsys.readouterr().out.split() == list(model.predict(X))


@pytest.mark.parametrize("name", ["semicolon_bom.csv", "tab.tsv"])
def test_delimiters_and_bom_read_like_the_plain_file(name, good_tree, capsys):
    capsys.readouterr()
    assert main(["predict", str(good_tree), str(DATA / "good.csv")]) == 0
    expected = capsys.readouterr().out
    assert main(["predict", str(good_tree), str(DATA / name)]) == 0
    assert capsys.readouterr().out == expected
    # the BOM is not part of the first column's name: --target finds it
    assert main(["fit", str(DATA / name), "--target", "size", "--max-depth", "1"]) == 1
    assert "continuous numbers" in one_line_error(capsys)
    assert main(["fit", str(DATA / name), "--max-depth", "2"]) == 0
    assert "training accuracy" in capsys.readouterr().out


@pytest.mark.parametrize("command, name, message", [
    ("fit", "duplicate_header.csv", "names column 'size' twice (columns 1 and 3)"),
    ("predict", "duplicate_header.csv", "names column 'size' twice"),
    ("fit", "empty_label.csv", "target column 'label', data row 5: empty label"),
    ("fit", "dates.csv", "column 'day' in"),
    ("fit", "continuous_target.csv", "target column 'bill_length_mm' holds continuous numbers"),
    ("fit", "binary.csv", "is not a text CSV file (it holds binary data)"),
    ("predict", "binary.csv", "is not a text CSV file"),
    ("fit", "utf16.csv", "UTF-16"),
    ("fit", "ragged.csv", "line 7: 2 fields, the header has 4"),
])
def test_bad_csv_is_one_line_error(command, name, message, good_tree, capsys):
    args = ["fit", str(DATA / name), "--max-depth", "1"] if command == "fit" else \
        ["predict", str(good_tree), str(DATA / name)]
    capsys.readouterr()
    assert main(args) == 1
    err = one_line_error(capsys)
    assert message in err
    assert capsys.readouterr().out == ""  # no partial result


def test_text_that_is_not_utf8(tmp_path, capsys):
    path = tmp_path / "latin1.csv"
    path.write_bytes("ville,label\nZürich,a\nGenève,b\n".encode("latin-1"))
    assert main(["fit", str(path)]) == 1
    assert "is not UTF-8 text (byte 13 cannot be decoded); save it as UTF-8" in one_line_error(capsys)


def test_dates_say_what_to_do(capsys):
    assert main(["fit", str(DATA / "dates.csv")]) == 1
    assert "dates or times; convert it to numbers" in one_line_error(capsys)


def test_missing_numbers_are_routed_by_the_tree(good_tree, capsys):
    # na_token.csv: an NA in the numeric column 'size'.
    assert main(["fit", str(DATA / "na_token.csv"), "--max-depth", "2", "--quiet"]) == 0
    assert "status: optimal" in capsys.readouterr().out
    assert main(["predict", str(good_tree), str(DATA / "na_token.csv")]) == 0
    assert len(capsys.readouterr().out.split()) == 30


def test_missing_text_values_say_what_to_do(tmp_path, capsys):
    path = tmp_path / "gap.csv"
    path.write_text("colour,label\nred,a\n,b\nblue,a\nred,b\n")
    assert main(["fit", str(path), "--max-depth", "1"]) == 1
    message = one_line_error(capsys)
    assert "column 'colour', data row 2: missing value" in message and "its own category" in message


@pytest.mark.parametrize("name, message", [
    ("not_a_tree.json", "not an exactree tree description"),
    ("incomplete_tree.json", "not a valid exactree tree description: no feature"),
    ("binary.csv", "it is not a JSON file"),
    ("good.csv", "it is not a JSON file"),
    ("missing.json", "No such file"),
])
def test_json_that_is_not_a_tree(name, message, capsys):
    assert main(["predict", str(DATA / name), str(DATA / "good.csv")]) == 1
    assert message in one_line_error(capsys)


def test_out_path_is_checked_before_fitting(tmp_path, capsys):
    target = tmp_path / "no" / "such" / "dir" / "tree.json"
    assert main(["fit", str(DATA / "good.csv"), "--out", str(target)]) == 1
    err = capsys.readouterr().err
    assert "does not exist" in err and "fitting" not in err  # refused before any work
    assert main(["fit", str(DATA / "good.csv"), "--out", str(tmp_path)]) == 1
    assert "is a directory" in one_line_error(capsys)


def test_max_thresholds_option(tmp_path, capsys):
    path = tmp_path / "line.csv"
    path.write_text("x,label\n" + "".join(f"{i},{i % 3 == 0}\n" for i in range(50)))
    assert main(["fit", str(path), "--max-depth", "2", "--max-thresholds", "4"]) == 0
    assert "status: optimal_on_binarized" in capsys.readouterr().out
    assert main(["fit", str(path), "--max-thresholds", "0"]) == 1
    err = capsys.readouterr().err
    assert "'max_thresholds' parameter" in err and "fitting" not in err


def test_subset_splits_option(tmp_path, capsys):
    path = tmp_path / "colours.csv"
    path.write_text("colour,label\n" + "".join(f"{c},{c in 'ac'}\n" for c in "abcd" * 5))
    assert main(["fit", str(path), "--max-depth", "1", "--quiet"]) == 0
    assert "objective: 5 " in capsys.readouterr().out  # equality tests: one category a side
    assert main(["fit", str(path), "--max-depth", "1", "--quiet", "--subset-splits"]) == 0
    out = capsys.readouterr().out
    assert "objective: 0 " in out and "colour in {" in out
    many = tmp_path / "many.csv"
    many.write_text("code,label\n" + "".join(f"v{i},{i % 2}\n" for i in range(12)))
    assert main(["fit", str(many), "--quiet", "--subset-splits"]) == 1
    assert "12 categories" in one_line_error(capsys)


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"exactree {exactree.__version__}"


@pytest.mark.parametrize("args, message", [
    (["fit", "missing.csv"], "cannot read"),
    (["fit", "{csv}", "--target", "nope"], "target column 'nope'"),
    (["fit", "--max-depth", "-2"], "max_depth"),
    (["predict", "{csv}", "{csv}"], "cannot load tree"),
])
def test_errors_are_one_line_with_exit_status_1(args, message, csv_file, capsys):
    args = [a.replace("{csv}", str(csv_file)) for a in args]
    assert main(args) == 1
    assert message in one_line_error(capsys)


def test_empty_cell_is_missing_not_a_category(tmp_path, capsys):
    path = tmp_path / "gap.csv"
    path.write_text("age,label\n30,a\n,b\n50,a\n60,b\n")
    assert main(["fit", str(path), "--max-depth", "1", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "status: optimal" in out and "training accuracy: 1.0000" in out


def test_predict_checks_columns_and_categories(good_tree, tmp_path, capsys):
    frame = pd.read_csv(DATA / "good.csv")
    frame.drop(columns="colour").to_csv(tmp_path / "a.csv", index=False)
    assert main(["predict", str(good_tree), str(tmp_path / "a.csv")]) == 1
    assert "lacks the columns 'colour'" in one_line_error(capsys)
    frame.assign(colour="purple").to_csv(tmp_path / "b.csv", index=False)
    assert main(["predict", str(good_tree), str(tmp_path / "b.csv")]) == 1
    assert "categories not seen in fit: 'purple'" in one_line_error(capsys)
    frame.assign(size=["1.5", "big"] + ["2"] * (len(frame) - 2)).to_csv(tmp_path / "c.csv",
                                                                       index=False)
    assert main(["predict", str(good_tree), str(tmp_path / "c.csv")]) == 1
    assert "column 'size' must be numeric (it was in fit), but data row 2 holds 'big'" in \
        one_line_error(capsys)
    frame.to_csv(tmp_path / "d.csv")  # with pandas' unnamed index column
    assert main(["predict", str(good_tree), str(tmp_path / "d.csv")]) == 1
    assert "column 1 has no name in the header" in one_line_error(capsys)


def test_bad_usage_exits_2():
    with pytest.raises(SystemExit) as e:
        main(["fit", "--max-depth", "three"])
    assert e.value.code == 2


def test_installed_command_runs():
    out = subprocess.run([sys.executable, "-m", "exactree.cli", "--version"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("exactree ")


def test_plot_draws_a_saved_tree(csv_file, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    tree = tmp_path / "tree.json"
    assert main(["fit", str(csv_file), "--target", "label", "--max-depth", "2",
                 "--out", str(tree)]) == 0
    png = tmp_path / "tree.png"
    assert main(["plot", str(tree), "--out", str(png), "--dpi", "60"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "drawn to" in capsys.readouterr().err
    assert main(["plot", str(tree), "--out", str(tmp_path / "no" / "t.png")]) == 1
    assert "does not exist" in one_line_error(capsys)
    assert main(["plot", str(tree), "--out", str(tmp_path / "t.unknown")]) == 1
    assert "not supported" in one_line_error(capsys)


def test_plot_without_matplotlib_says_how_to_install(good_tree, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["plot", str(good_tree), "--out", str(tmp_path / "t.png")]) == 1
    assert "exactree[plot]" in one_line_error(capsys)
