"""The exactree command line: output, JSON round trip through predict, exit codes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from exactree.cli import main


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


def test_fit_bundled_data(capsys):
    assert main(["fit", "--max-depth", "2"]) == 0
    out, err = capsys.readouterr()
    assert "training accuracy" in out and "status: optimal" in out and "objective: 137" in out
    assert "bundled anneal" in err


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


@pytest.mark.parametrize("args, message", [
    (["fit", "missing.csv"], "cannot read"),
    (["fit", "{csv}", "--target", "nope"], "target column 'nope'"),
    (["fit", "--max-depth", "-2"], "max_depth"),
    (["predict", "{csv}", "{csv}"], "cannot load tree"),
])
def test_errors_are_one_line_with_exit_status_1(args, message, csv_file, capsys):
    args = [a.replace("{csv}", str(csv_file)) for a in args]
    assert main(args) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("exactree: error:") and message in err


def test_empty_cell_is_an_error_not_a_category(tmp_path, capsys):
    path = tmp_path / "gap.csv"
    path.write_text("age,label\n30,a\n,b\n50,a\n60,b\n")
    assert main(["fit", str(path), "--max-depth", "1"]) == 1
    assert "empty value" in capsys.readouterr().err


def test_bad_usage_exits_2():
    with pytest.raises(SystemExit) as e:
        main(["fit", "--max-depth", "three"])
    assert e.value.code == 2
