"""Columns that cannot be what they claim: dates written as text are refused, ID-like text
columns draw a HighCardinalityWarning, and naming a column in ``categorical_features`` keeps it
as categories on purpose (exactree.data.columns, called by FeatureEncoder)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from exactree import OptimalTreeClassifier, OptimalTreeRegressor, SparseTreeClassifier
from exactree.data.columns import HighCardinalityWarning, dates_error, is_high_cardinality
from exactree.data.encoding import FeatureEncoder


def dated(n: int = 300, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """One row a day: a text column of dates, a numeric column, random labels."""
    rng = np.random.default_rng(seed)
    days = pd.date_range("2020-01-01", periods=n).strftime("%Y-%m-%d")
    return pd.DataFrame({"day": days, "x": rng.random(n)}), rng.integers(0, 2, n)


@pytest.mark.parametrize("make", [
    lambda: SparseTreeClassifier(penalty=0.02),  # was one 300-way split, "optimal"
    lambda: OptimalTreeClassifier(max_depth=1),
])
def test_text_dates_are_refused(make):
    X, y = dated()
    with pytest.raises(ValueError) as e:
        make().fit(X, y)
    assert str(e.value) == str(dates_error("day", "2020-01-01"))
    assert "pd.to_datetime(X['day']).astype('int64')" in str(e.value)
    assert "name it in categorical_features" in str(e.value)


def test_text_dates_are_refused_for_regression_too():
    X, y = dated()
    with pytest.raises(ValueError, match="column 'day' holds dates or times"):
        OptimalTreeRegressor(max_depth=1).fit(X, y.astype(float))


def test_categorical_features_keeps_dates_as_categories():
    X, y = dated()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # neither refused nor warned about: asked for
        model = SparseTreeClassifier(penalty=0.02, categorical_features=["day"]).fit(X, y)
    assert model.tree_.categories[0][0] == "2020-01-01"


@pytest.mark.parametrize("value", ["2021-03-04", "2021-3-4", "4/3/2021", "04.03.21",
                                   "2021-03-04T10:30:00Z", "2021-03-04 10:30:15.5",
                                   "2021/03/04 10:30", "10:30", " 10:30:15 "])
def test_written_dates_and_times(value):
    X = pd.DataFrame({"when": [value, value, value]})
    with pytest.raises(ValueError, match=r"column 'when' holds dates or times \(such as"):
        FeatureEncoder().fit_transform(X)


@pytest.mark.parametrize("values", [["2021-03", "2021-04"], ["2021-03-04", "unknown"],
                                    ["a1", "b2"], ["10", "11:30"]])
def test_text_that_is_not_all_dates_stays_categorical(values):
    codes = FeatureEncoder().fit_transform(pd.DataFrame({"c": values}))
    assert codes[:, 0].tolist() == [0.0, 1.0]


def test_datetime_dtypes_say_how_to_convert():
    X = pd.DataFrame({"d": pd.to_datetime(["2020-01-01", "2021-06-30"]), "x": [1.0, 2.0]})
    with pytest.raises(ValueError) as e:
        OptimalTreeClassifier(max_depth=1).fit(X, [0, 1])
    assert "column 'd' holds dates or times; convert it to numbers first" in str(e.value)
    assert "categorical_features" not in str(e.value)  # no opt-in for a datetime dtype


def test_id_like_column_warns_from_the_callers_line():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"id": [f"u{i:03d}" for i in range(300)], "x": rng.random(300)})
    y = rng.integers(0, 2, 300)
    with pytest.warns(HighCardinalityWarning,
                      match=r"column 'id' has 300 distinct values in 300 rows \(an ID\?\): a "
                            "split on it memorises rows") as record:
        OptimalTreeClassifier(max_depth=1).fit(X, y)
    assert issubclass(HighCardinalityWarning, UserWarning)
    assert record[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        OptimalTreeClassifier(max_depth=1, categorical_features=["id"]).fit(X, y)
        X["id"] = X["id"].astype("category")
        with pytest.warns(HighCardinalityWarning):  # a category dtype is checked too
            FeatureEncoder().fit_transform(X)


@pytest.mark.parametrize("n_distinct, n_rows, id_like", [
    (19, 19, False),   # a toy table: one row per value is normal
    (19, 20, True),    # 95% distinct
    (18, 20, False),
    (101, 200, True),  # over 100 categories and over half the rows distinct
    (101, 202, False),
    (150, 1000, False),
    (3, 300, False),
])
def test_the_id_like_rule(n_distinct, n_rows, id_like):
    assert is_high_cardinality(n_distinct, n_rows) is id_like


def test_ordinary_categorical_columns_do_not_warn():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"colour": rng.choice(["red", "green", "blue"], 500),
                      "town": [f"t{i % 40}" for i in range(500)],
                      "few": [f"f{i % 10}" for i in range(500)]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        FeatureEncoder().fit_transform(X)
        FeatureEncoder().fit_transform(pd.DataFrame({"c": list("abcdefghij")}))  # 10 rows
