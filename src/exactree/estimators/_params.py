"""Declarative checks of estimator parameters (our own, so no private scikit-learn names).

An estimator lists, for each constructor parameter, the values it accepts::

    _parameter_constraints = {
        "max_depth": [Interval(Integral, 0, 16, closed="both")],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "thresholds": [StrOptions({"exact", "boundary"})],
        "techniques": [dict, None],
    }

A value is valid when it satisfies any one entry. Entries: an :class:`Interval`, a
:class:`StrOptions`, ``None`` (the value ``None``), a type (``isinstance``), or one of the strings
``"array-like"``, ``"boolean"``, ``"callable"``, ``"cv_object"``; ``"no_validation"`` instead of a
list skips the parameter. :func:`validate_params` raises :class:`InvalidParameterError` (both a
``ValueError`` and a ``TypeError``, as scikit-learn's own error is) with a message of the form
``The 'max_depth' parameter of OptimalTreeClassifier must be an int in the range [0, 16]. Got -2
instead.``
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np

__all__ = ["Interval", "InvalidParameterError", "StrOptions", "validate_params"]


class InvalidParameterError(ValueError, TypeError):
    """A constructor parameter has a value outside its declared constraints."""


@dataclass(frozen=True)
class Interval:
    """Numbers of ``type`` (``Integral`` or ``Real``) between ``left`` and ``right``.

    ``None`` for a bound means unbounded; ``closed`` is ``"both"``, ``"left"``, ``"right"`` or
    ``"neither"``. Booleans are never numbers here, and ``Real`` accepts integers but not NaN.
    """

    type: type
    left: float | None
    right: float | None
    closed: str = "both"

    def __post_init__(self) -> None:
        if self.type not in (Integral, Real):
            raise TypeError("Interval type must be numbers.Integral or numbers.Real")
        if self.closed not in ("both", "left", "right", "neither"):
            raise ValueError("closed must be 'both', 'left', 'right' or 'neither', got "
                             f"{self.closed!r}")

    def accepts(self, value: Any) -> bool:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, self.type):
            return False
        if isinstance(value, Real) and math.isnan(value):
            return False
        lo_ok = self.left is None or (value >= self.left if self.closed in ("both", "left")
                                      else value > self.left)
        hi_ok = self.right is None or (value <= self.right if self.closed in ("both", "right")
                                       else value < self.right)
        return bool(lo_ok and hi_ok)

    def __str__(self) -> str:
        kind = "an int" if self.type is Integral else "a float"
        lo = "-inf" if self.left is None else self.left
        hi = "inf" if self.right is None else self.right
        left = "[" if self.closed in ("both", "left") and self.left is not None else "("
        right = "]" if self.closed in ("both", "right") and self.right is not None else ")"
        return f"{kind} in the range {left}{lo}, {hi}{right}"


@dataclass(frozen=True)
class StrOptions:
    """One of the strings in ``options``."""

    options: frozenset[str]

    def __init__(self, options: Iterable[str]) -> None:
        object.__setattr__(self, "options", frozenset(options))

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.options

    def __str__(self) -> str:
        return "a str among {" + ", ".join(repr(o) for o in sorted(self.options)) + "}"


def _is_array_like(value: Any) -> bool:
    if isinstance(value, (str, bytes)) or np.isscalar(value):
        return False
    return hasattr(value, "__len__") or hasattr(value, "shape") or hasattr(value, "__array__")


def _is_cv_object(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, Integral) and not isinstance(value, (bool, np.bool_)):
        return value >= 2
    if hasattr(value, "split") and hasattr(value, "get_n_splits"):
        return True
    return isinstance(value, Iterable) and not isinstance(value, (str, bytes))


_NAMED = {
    "array-like": (_is_array_like, "an array-like"),
    "boolean": (lambda v: isinstance(v, (bool, np.bool_)), "an instance of 'bool'"),
    "callable": (callable, "a callable"),
    "cv_object": (_is_cv_object, "an int >= 2, a cross-validation splitter or an iterable"),
}


def _accepts(constraint: Any, value: Any) -> bool:
    if constraint is None:
        return value is None
    if isinstance(constraint, (Interval, StrOptions)):
        return constraint.accepts(value)
    if isinstance(constraint, str):
        return _NAMED[constraint][0](value)
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    raise TypeError(f"unknown parameter constraint {constraint!r}")


def _describe(constraint: Any) -> str:
    if constraint is None:
        return "None"
    if isinstance(constraint, str):
        return _NAMED[constraint][1]
    if isinstance(constraint, type):
        return f"an instance of {constraint.__name__!r}"
    return str(constraint)


# Values of these exact types are immutable, and whether a constraint list accepts one depends
# only on its type and value: accepted ones are remembered per list (checking every parameter
# afresh costs tens of microseconds, much of a millisecond fit). Keyed by the list's id, with
# the list itself held so that the id is never reused; at most _MEMO_SIZE values per list.
_MEMO_TYPES = (int, float, str, bool, type(None))
_MEMO_TYPE_SET = frozenset(_MEMO_TYPES)
_MEMO_SIZE = 256
_memo: dict[int, tuple[Any, set[tuple[type, Any]]]] = {}
# Whole parameter sets of such values found valid, per constraints mapping (held, as above):
# one lookup instead of one per parameter (an estimator refitted with the same parameters).
_memo_sets: dict[int, tuple[Any, set[tuple]]] = {}


def validate_params(constraints: Mapping[str, Any], params: Mapping[str, Any],
                    caller: str) -> None:
    """Raise :class:`InvalidParameterError` for the first parameter no constraint accepts.

    Parameters missing from ``constraints`` are not checked.
    """
    values = tuple(params.values())
    types = tuple(map(type, values))
    known = None
    if _MEMO_TYPE_SET.issuperset(types):
        known = _memo_sets.get(id(constraints))
        if known is None or known[0] is not constraints:
            known = _memo_sets[id(constraints)] = (constraints, set())
        key = (tuple(params), types, values)
        if key in known[1]:
            return
    _validate_each(constraints, params, caller)
    if known is not None and len(known[1]) < _MEMO_SIZE:
        known[1].add(key)


def _validate_each(constraints: Mapping[str, Any], params: Mapping[str, Any],
                   caller: str) -> None:
    for name, value in params.items():
        allowed = constraints.get(name, "no_validation")
        if type(allowed) is list and type(value) in _MEMO_TYPES:
            entry = _memo.get(id(allowed))
            if entry is None or entry[0] is not allowed:
                entry = _memo[id(allowed)] = (allowed, set())
            key = (type(value), value)
            if key in entry[1]:
                continue
            if any(_accepts(c, value) for c in allowed):
                if len(entry[1]) < _MEMO_SIZE:
                    entry[1].add(key)
                continue
        elif allowed == "no_validation" or any(_accepts(c, value) for c in allowed):
            continue
        shown = [_describe(c) for c in allowed]
        expected = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be {expected}. "
            f"Got {_shown(value)} instead.")


def _shown(value: Any) -> str:
    """``repr`` with NumPy scalars shown as plain Python values (``5``, not ``np.int64(5)``)."""
    return repr(value.item() if isinstance(value, np.generic) else value)
