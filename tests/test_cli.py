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
    ("fit", "dates.csv", "dates.csv: column 'day' holds dates or times"),
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
    message = one_line_error(capsys)
    assert "dates or times (such as '2024-01-01'); convert it to numbers" in message
    assert "pd.to_datetime(X['day']).astype('int64')" in message
    assert "to split it as categories anyway, pass --categorical day" in message


def test_dates_refused_with_the_data_layers_message(capsys):
    """The command line and Python refuse a text column of dates with one message (the way
    to keep it as categories spelled for each)."""
    from exactree.data.columns import dates_error

    frame = pd.read_csv(DATA / "dates.csv")
    with pytest.raises(ValueError) as python:
        OptimalTreeClassifier(max_depth=1).fit(frame.drop(columns="label"), frame["label"])
    assert str(python.value) == str(dates_error("day", "2024-01-01"))
    assert main(["fit", str(DATA / "dates.csv"), "--quiet"]) == 1
    expected = str(dates_error("day", "2024-01-01", opt_in="pass --categorical {name}"))
    assert one_line_error(capsys) == f"exactree: error: {DATA / 'dates.csv'}: {expected}"


def test_categorical_flag_keeps_dates_as_categories(tmp_path, capsys):
    assert main(["fit", str(DATA / "dates.csv"), "--categorical", "day", "--max-depth", "1",
                 "--quiet", "--out", str(tmp_path / "t.json")]) == 0
    assert "status: optimal" in capsys.readouterr().out
    tree = json.loads((tmp_path / "t.json").read_text())
    assert "2024-01-01" in tree["categories"][0]
    assert main(["predict", str(tmp_path / "t.json"), str(DATA / "dates.csv")]) == 0
    assert len(capsys.readouterr().out.split()) == len(pd.read_csv(DATA / "dates.csv"))
    assert main(["fit", str(DATA / "dates.csv"), "--categorical", "nope"]) == 1
    assert "--categorical nope: " in one_line_error(capsys)
    assert main(["fit", str(DATA / "dates.csv"), "--categorical", "label"]) == 1
    assert "that is the target column" in one_line_error(capsys)


def test_id_like_text_column_warns_in_one_line(tmp_path, capsys):
    path = tmp_path / "ids.csv"
    path.write_text("id,x,label\n" + "".join(f"u{i},{i % 7},{i % 2}\n" for i in range(40)))
    assert main(["fit", str(path), "--max-depth", "1", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "status: optimal" in out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "exactree: warning: column 'id' has 40 distinct values in 40 rows (an ID?)")
    assert "pass --categorical id" in lines[0]
    assert main(["fit", str(path), "--max-depth", "1", "--quiet", "--categorical", "id"]) == 0
    assert capsys.readouterr().err == ""  # named on purpose: no warning


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
    assert "--max-thresholds must be a whole number >= 1 (got 0)" in err and "fitting" not in err


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
    (["fit", "--max-depth", "-2"], "--max-depth must be a whole number between 0 and 16"),
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


# ------------------------------------------------------------------------ --task, targets
@pytest.fixture
def scores(tmp_path):
    """A CSV whose target is a score: 97 distinct whole numbers in 200 rows (as scikit-learn's
    diabetes target, 214 in 442), a step in x plus noise."""
    rng = np.random.default_rng(1)
    x = rng.integers(0, 100, 200)
    y = np.where(x > 50, 200, 100) + rng.integers(0, 60, 200)
    path = tmp_path / "scores.csv"
    pd.DataFrame({"x": x, "z": rng.integers(0, 5, 200), "score": y}).to_csv(path, index=False)
    return path


def test_whole_number_continuous_target_is_refused(scores, capsys):
    assert main(["fit", str(scores), "--max-depth", "1"]) == 1
    message = one_line_error(capsys)
    assert "target column 'score' looks continuous (97 distinct whole numbers in 200 rows)" in \
        message and "use --task regression" in message
    assert capsys.readouterr().out == ""
    # said explicitly, the numbers are classes
    assert main(["fit", str(scores), "--max-depth", "1", "--quiet",
                 "--task", "classification"]) == 0
    assert "training accuracy" in capsys.readouterr().out


def test_non_integer_target_names_the_regression_flag(capsys):
    assert main(["fit", str(DATA / "continuous_target.csv"), "--target", "bill_length_mm"]) == 1
    assert "continuous numbers" in (message := one_line_error(capsys))
    assert "use --task regression" in message


def test_regression_task_fits_and_predicts_like_python(scores, tmp_path, capsys):
    from exactree import OptimalTreeRegressor

    tree = tmp_path / "reg.json"
    assert main(["fit", str(scores), "--task", "regression", "--max-depth", "2", "--quiet",
                 "--min-samples-leaf", "5", "--out", str(tree)]) == 0
    out = capsys.readouterr().out
    frame = pd.read_csv(scores)
    X, y = frame.drop(columns="score"), frame["score"].astype(float)
    model = OptimalTreeRegressor(max_depth=2, min_samples_leaf=5).fit(X, y)
    mse = float(np.mean((model.predict(X) - y) ** 2))
    assert f"training R²: {model.score(X, y):.4f}   training MSE: {mse:.6g}" in out
    assert "training accuracy" not in out and "status: optimal" in out and "gap: 0.0%" in out
    assert exactree.Tree.from_dict(json.loads(tree.read_text())) == model.tree_
    assert main(["predict", str(tree), str(scores)]) == 0
    predicted = [float(v) for v in capsys.readouterr().out.split()]
    assert predicted == list(model.predict(X))


def test_regression_task_needs_a_numeric_target(csv_file, capsys):
    assert main(["fit", str(csv_file), "--task", "regression"]) == 1
    assert "--task regression needs a numeric target" in one_line_error(capsys)
    assert main(["fit", "--task", "regression"]) == 1  # the bundled data has classes
    assert "--task regression needs a data file" in one_line_error(capsys)


# ------------------------------------------------------------------- flags, help, summary
@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("flag, value, message", [
    ("--time-limit", "0", "--time-limit must be > 0 (got 0.0)"),
    ("--max-depth", "17", "--max-depth must be a whole number between 0 and 16 (got 17)"),
    ("--min-samples-leaf", "0", "--min-samples-leaf must be a whole number >= 1 (got 0)"),
    ("--cost-complexity", "-1", "--cost-complexity must be >= 0 (got -1.0)"),
    ("--max-nodes", "-1", "--max-nodes must be a whole number >= 0 (got -1)"),
])
def test_parameter_errors_name_the_flag(task, flag, value, message, csv_file, capsys):
    assert main(["fit", str(csv_file), "--task", task, flag, value]) == 1
    assert one_line_error(capsys) == f"exactree: error: {message}"


def test_help_shows_defaults(capsys):
    with pytest.raises(SystemExit) as e:
        main(["fit", "--help"])
    assert e.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    for default in ["most levels of splits (default: 3)", "leaf (default: 1)",
                    "(default: 0)", "(default: classification", "(default: none, run until "
                    "proven optimal)", "(default: no cap, every threshold)"]:
        assert default in text
    with pytest.raises(SystemExit):
        main(["plot", "--help"])
    assert "resolution (default: 100)" in " ".join(capsys.readouterr().out.split())


def test_summary_gap_is_a_percent_like_the_progress_lines(capsys):
    assert main(["fit", str(DATA / "good.csv"), "--max-depth", "2"]) == 0
    out, err = capsys.readouterr()
    assert "gap: 0.0%   status: optimal" in out and "gap 0.0%" in err


def test_interrupted_fit_prints_its_tree_and_exits_130(tmp_path, capsys, monkeypatch):
    """A fit that Ctrl-C stopped (status interrupted): the best tree and its summary are
    printed and written, and the exit status is 130, as for a shell's interrupted command."""
    fit = OptimalTreeClassifier.fit

    def interrupted(self, X, y, sample_weight=None):
        fit(self, X, y, sample_weight)
        self.status_, self.lower_bound_, self.gap_ = "interrupted", 0.0, 1.0
        return self

    monkeypatch.setattr(OptimalTreeClassifier, "fit", interrupted)
    out_json = tmp_path / "tree.json"
    assert main(["fit", str(DATA / "good.csv"), "--max-depth", "2", "--quiet",
                 "--out", str(out_json)]) == 130
    out, err = capsys.readouterr()
    assert "gap: 100.0%   status: interrupted" in out and "interrupted" in err
    assert out_json.exists()


def test_ctrl_c_during_a_fit_exits_130(tmp_path):
    """The real thing: SIGINT to ``exactree fit`` once its first progress line is out."""
    import signal

    if sys.platform == "win32":
        pytest.skip("SIGINT to a child process is POSIX")
    rng = np.random.default_rng(0)
    X = rng.random((3000, 6)).round(3)  # depth 5 on this runs far longer than a second
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(0, 0.3, 3000) > 1).astype(int)
    path = tmp_path / "slow.csv"
    pd.DataFrame(X, columns=list("abcdef")).assign(label=y).to_csv(path, index=False)
    child = subprocess.Popen([sys.executable, "-m", "exactree.cli", "fit", str(path),
                              "--max-depth", "5", "--time-limit", "30"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for line in child.stderr:
            if line.startswith("[exactree] OptimalTreeClassifier:") and "nodes " in line:
                # (a line while searching: not the first line, which names the search)
                child.send_signal(signal.SIGINT)
                break
        else:
            pytest.fail("the fit ended without a progress line")
        out, err = child.communicate(timeout=120)  # a hang guard, not a speed check
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 130, err
    assert "status: interrupted" in out and "gap: " in out and "%" in out.splitlines()[-1]
