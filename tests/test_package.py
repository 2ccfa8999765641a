"""The package's public names load on first use, and importing it stays cheap."""

from __future__ import annotations

import subprocess
import sys

import pytest

import exactree
import exactree.data
import exactree.estimators


@pytest.mark.parametrize("package", [exactree, exactree.data, exactree.estimators])
def test_every_public_name_resolves(package):
    for name in package.__all__:
        value = getattr(package, name)
        assert getattr(value, "__name__", name) == name
        assert name in dir(package)


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        exactree.nope  # noqa: B018


def test_solver_and_data_imports_load_no_scikit_learn_and_no_other_family():
    code = ("import sys, exactree, exactree.data.datasets, exactree.solvers.dp.solver; "
            "print('sklearn' in sys.modules, 'exactree.estimators.dyadic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
