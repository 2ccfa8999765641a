"""Lazy package attributes (PEP 562): a package lists where each public name lives and imports
that module on first use, so ``import exactree`` stays cheap and a program pays only for the
parts it touches (scikit-learn alone takes most of a second to import)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable


def attach(package: str, where: dict[str, str]) -> tuple[Callable, Callable, list[str]]:
    """``(__getattr__, __dir__, __all__)`` for ``package`` whose public names are the keys of
    ``where`` (name -> submodule, relative to the package)."""

    def __getattr__(name: str):
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[name], package), name)
        setattr(sys.modules[package], name, value)  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__, sorted(where)
