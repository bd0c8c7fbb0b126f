"""``klea_utils.stores.serve`` exports: each name resolves, from the module the table names."""

from __future__ import annotations

import ast
import importlib
import inspect

import klea_utils.stores.serve as serve
import pytest

TABLE = serve._EXPORTS


@pytest.mark.parametrize("name", serve.__all__)
def test_every_exported_name_resolves_to_its_module_s_object(name: str) -> None:
    module = importlib.import_module(f"klea_utils.stores.serve.{serve._MODULE_OF[name]}")
    assert getattr(serve, name) is getattr(module, name)
    assert name in getattr(module, "__all__", [name])
    assert name in dir(serve)


def test_all_is_the_table_once_each() -> None:
    names = [name for names in TABLE.values() for name in names]
    assert len(names) == len(set(names))
    assert serve.__all__ == sorted(names)


def test_the_type_checking_imports_are_the_table() -> None:
    tree = ast.parse(inspect.getsource(serve))
    block = next(node for node in tree.body if isinstance(node, ast.If))
    imported: dict[str, set[str]] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom)
        assert node.module is not None
        # "X as X" re-exports X to type checkers.
        assert all(alias.asname == alias.name for alias in node.names)
        module = node.module.removeprefix("klea_utils.stores.serve.")
        imported.setdefault(module, set()).update(alias.name for alias in node.names)
    assert imported == {m: set(n) for m, n in TABLE.items()}


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        serve.nope  # noqa: B018
