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


def test_readme_examples_need_only_the_runtime_dependencies():
    """The first set-up command (`pip install .`) must cover the README's own examples."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text()
    pyproject = (root / "pyproject.toml").read_text()  # (tomllib is Python >= 3.11 only)
    deps = re.findall(r'^\s+"([^"]+)",', re.search(r"^dependencies = \[(.*?)^\]", pyproject,
                                                     re.S | re.M).group(1), re.M)
    installed = {re.split(r"[<>=!~ ;\[]", d)[0].lower() for d in deps}
    distribution = {"sklearn": "scikit-learn"}
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    imported = {m for block in blocks
                for m in re.findall(r"^(?:from|import) (\w+)", block, re.M)}
    needed = {distribution.get(m, m) for m in imported} - {"exactree"} - set(sys.stdlib_module_names)
    assert needed and needed <= installed, needed - installed
    assert "pip install . &&" in readme  # the first set-up command is still the plain install
