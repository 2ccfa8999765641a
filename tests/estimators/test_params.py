"""Our own declarative parameter validation: no private scikit-learn names, clear messages."""

from __future__ import annotations

import pathlib
from numbers import Integral, Real

import numpy as np
import pytest

import exactree
from exactree.estimators._params import Interval, InvalidParameterError, StrOptions, validate_params

SRC = pathlib.Path(exactree.__file__).parent

CONSTRAINTS = {
    "depth": [Interval(Integral, 0, 16, closed="both")],
    "limit": [Interval(Real, 0, None, closed="neither"), None],
    "mode": [StrOptions({"exact", "boundary"})],
    "flag": ["boolean"],
    "cols": ["array-like", None],
    "opts": [dict, None],
    "cv": ["cv_object"],
    "free": "no_validation",
}


def test_no_module_imports_private_scikit_learn_validation():
    offenders = [str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
                 if "_param_validation" in p.read_text()]
    assert offenders == []


@pytest.mark.parametrize("params", [
    dict(depth=0), dict(depth=16), dict(depth=np.int64(3)), dict(limit=None), dict(limit=2),
    dict(limit=0.5), dict(mode="exact"), dict(flag=True), dict(flag=np.bool_(False)),
    dict(cols=[0, 2]), dict(cols=np.arange(3)), dict(cols=None), dict(opts={}), dict(cv=5),
    dict(cv=None), dict(cv=[([0], [1])]), dict(free=object()),
])
def test_valid_values_pass(params):
    validate_params(CONSTRAINTS, params, "Model")


@pytest.mark.parametrize("params, message", [
    (dict(depth=-1), "The 'depth' parameter of Model must be an int in the range [0, 16]. Got -1"),
    (dict(depth=17), "range [0, 16]. Got 17 instead."),
    (dict(depth=2.0), "Got 2.0 instead."),
    (dict(depth=True), "Got True instead."),
    (dict(depth=np.int64(20)), "Got 20 instead."),  # a plain value, not np.int64(20)
    (dict(limit=0), "a float in the range (0, inf) or None. Got 0 instead."),
    (dict(limit=float("nan")), "Got nan instead."),
    (dict(mode="median"), "a str among {'boundary', 'exact'}. Got 'median' instead."),
    (dict(flag=1), "an instance of 'bool'"),
    (dict(cols="abc"), "an array-like or None"),
    (dict(opts=[1]), "an instance of 'dict' or None"),
    (dict(cv=1), "cross-validation splitter"),
])
def test_invalid_values_name_parameter_and_value(params, message):
    with pytest.raises(InvalidParameterError) as e:
        validate_params(CONSTRAINTS, params, "Model")
    assert message in str(e.value)
    assert isinstance(e.value, ValueError) and isinstance(e.value, TypeError)


@pytest.mark.parametrize("name, params, match", [
    ("OptimalTreeClassifier", dict(max_depth=-2), "'max_depth' parameter of OptimalTreeClassifier"),
    ("OptimalTreeClassifier", dict(thresholds="median"), "'thresholds'"),
    ("SparseTreeClassifier", dict(penalty=1.5), "'penalty'"),
    ("DyadicTreeClassifier", dict(compress="yes"), "'compress'"),
    ("ObliqueTreeClassifier", dict(rules="curvy"), "'rules'"),
])
def test_every_estimator_uses_it(name, params, match):
    model = getattr(exactree, name)(**params)
    with pytest.raises(InvalidParameterError, match=match):
        model.fit([[0.0], [1.0]], [0, 1])


def test_every_constraint_names_a_constructor_parameter():
    for name in ("OptimalTreeClassifier", "SparseTreeClassifier", "DyadicTreeClassifier",
                 "ObliqueTreeClassifier"):
        cls = getattr(exactree, name)
        assert set(cls._parameter_constraints) == set(cls().get_params()), name
