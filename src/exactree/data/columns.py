"""Checks on what a categorical column holds: dates written as text, and ID-like columns.

Both are shared by the estimators (through :class:`~exactree.data.encoding.FeatureEncoder`) and
the ``exactree`` command line, so the two refuse and warn alike, with the same words.

* A text column whose every value is a date or a time of day (``2021-03-04``, ``4/3/2021``,
  ``2021-03-04T10:30:00Z``, ``10:30``) is refused: as categories, each date would be a value of
  its own, a tree could only memorise the training dates, and any new date fails at predict.
* A categorical column whose values are nearly all distinct (an ID, a name, a timestamp)
  draws a :class:`HighCardinalityWarning`: a split on it memorises rows.

Naming the column explicitly as categorical (``categorical_features`` in Python, ``--categorical``
on the command line) is the opt-in: such a column is neither refused nor warned about.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable
from typing import Any

__all__ = ["DATE_PATTERN", "HighCardinalityWarning", "check_categorical", "date_example",
           "dates_error", "is_high_cardinality"]

#: A value that is a date or a time of day, in the usual written forms.
DATE_PATTERN = re.compile(
    r"\d{4}-\d{1,2}-\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?"
    r"|\d{1,2}[/.]\d{1,2}[/.]\d{2,4}( \d{1,2}:\d{2}(:\d{2})?)?"
    r"|\d{4}/\d{1,2}/\d{1,2}( \d{1,2}:\d{2}(:\d{2})?)?"
    r"|\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?")

#: Below this many rows nothing is called ID-like (a toy table may hold one row per value).
MIN_ROWS = 20
#: Share of distinct values (among the rows) that makes any column of ``MIN_ROWS`` rows ID-like.
DISTINCT_SHARE = 0.95
#: More categories than this, on more than half the rows distinct, is ID-like too.
MANY_CATEGORIES = 100

#: How the messages say to name a column as categorical on purpose, in Python (``{name}``: the
#: column; the command line says ``pass --categorical {name}``).
PYTHON_OPT_IN = "name it in categorical_features"


class HighCardinalityWarning(UserWarning):
    """A categorical column whose values are nearly all distinct (an ID, a name, a timestamp).

    A split on such a column memorises rows rather than learning a rule: with one branch per
    category (``SparseTreeClassifier``'s multiway splits) a single split can put every row in a
    leaf of its own, and it costs one ``penalty`` whatever the number of categories ``k``, so
    the penalised objective prices a 300-way split like a 2-way one and such a tree can be
    "optimal" while predicting nothing for new values. Equality tests (``column == value``)
    isolate one row per split instead. Either way, predict refuses categories not seen in fit.

    Raised (as a warning) for a column the encoder made categorical by itself, with at least
    ``MIN_ROWS`` (20) rows, when at least 95% of the rows hold distinct values, or when it has
    more than 100 categories and more than half the rows are distinct. Drop the column, or
    name it in ``categorical_features`` to say the categories are meant (that silences it).
    """


def date_example(values: Iterable[Any]) -> str | None:
    """The least of ``values`` (the distinct values of a column; the least, so that messages do
    not depend on set order) if every one is a string written as a date or time of day, else
    None. Stops at the first value that is not one."""
    example = None
    for v in values:
        if not isinstance(v, str) or not DATE_PATTERN.fullmatch(v.strip()):
            return None
        example = v if example is None or v < example else example
    return example


def dates_error(name: str, example: Any = None, opt_in: str | None = PYTHON_OPT_IN) -> ValueError:
    """The error for a column of dates, times or durations (no silent one-category-per-date).

    ``example`` is a value shown in the message; ``opt_in`` says how to keep a text column as
    categories anyway (a phrase such as :data:`PYTHON_OPT_IN`, ``{name}`` replaced by the
    column's name; None: there is no such way, as for a datetime dtype).
    """
    shown = "" if example is None else f" (such as {example!r})"
    keep = ("" if opt_in is None else
            f"; to split it as categories anyway, {opt_in.format(name=name)}")
    return ValueError(
        f"column {name!r} holds dates or times{shown}; convert it to numbers first (e.g. "
        f"pd.to_datetime(X[{name!r}]).astype('int64'), or columns for the year, month or day "
        f"of the week) or drop it{keep}")


def is_high_cardinality(n_distinct: int, n_rows: int) -> bool:
    """Whether a categorical column of ``n_distinct`` values over ``n_rows`` rows is ID-like
    (see :class:`HighCardinalityWarning` for the rule)."""
    if n_rows < MIN_ROWS:
        return False
    return (n_distinct >= DISTINCT_SHARE * n_rows
            or (n_distinct > MANY_CATEGORIES and 2 * n_distinct > n_rows))


def check_categorical(name: str, distinct: Iterable[Any], n_rows: int,
                      opt_in: str = PYTHON_OPT_IN, stacklevel: int = 2) -> None:
    """Refuse a column of date strings, warn for an ID-like one.

    ``distinct`` holds the column's distinct values; ``opt_in`` says how the caller's user names
    a column as categorical on purpose (as in :func:`dates_error`; such columns are not checked
    at all).

    Raises
    ------
    ValueError
        When every value is a date or time written as text.

    Warns
    -----
    HighCardinalityWarning
        When the values are nearly all distinct.
    """
    distinct = list(distinct)
    example = date_example(distinct)
    if example is not None:
        raise dates_error(name, example, opt_in)
    if is_high_cardinality(len(distinct), n_rows):
        warnings.warn(
            f"column {name!r} has {len(distinct)} distinct values in {n_rows} rows (an ID?): "
            "a split on it memorises rows rather than learning a rule, and new values fail at "
            f"predict; drop it, or {opt_in.format(name=name)} if the categories are meant",
            HighCardinalityWarning, stacklevel=stacklevel + 1)
