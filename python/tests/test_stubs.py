"""The type stubs (``contactbench/_native.pyi``, shipped with ``py.typed``) describe the
extension module as built: every public class and function of ``contactbench._native``
is in the stubs and nothing else; each function's and method's parameters (names, order,
kind, which have defaults) are those the extension reports; a stub ``@property`` is a
data descriptor of the class and a stub method a method. Editors read the stubs; this
test keeps them true."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import contactbench as cb
from contactbench import _native

PACKAGE = Path(cb.__file__).resolve().parent
STUB = PACKAGE / "_native.pyi"
TREE = ast.parse(STUB.read_text(encoding="utf-8"))
FUNCTIONS = {n.name: n for n in TREE.body if isinstance(n, ast.FunctionDef)}
CLASSES = {n.name: n for n in TREE.body if isinstance(n, ast.ClassDef)}


def public(names) -> set:
    return {n for n in names if not n.startswith("_")}


def stub_parameters(node: ast.FunctionDef, drop_first: bool) -> list:
    """(name, kind, has a default) of a stub's parameters, in order."""
    a = node.args
    positional = a.posonlyargs + a.args
    first_default = len(positional) - len(a.defaults)
    out = [
        (p.arg, "positional", k >= first_default) for k, p in enumerate(positional)
    ]
    if drop_first:
        out = out[1:]
    if a.vararg is not None:
        out.append((a.vararg.arg, "*", False))
    out += [
        (p.arg, "keyword", d is not None) for p, d in zip(a.kwonlyargs, a.kw_defaults)
    ]
    if a.kwarg is not None:
        out.append((a.kwarg.arg, "**", False))
    return out


KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "positional",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
    inspect.Parameter.VAR_POSITIONAL: "*",
    inspect.Parameter.KEYWORD_ONLY: "keyword",
    inspect.Parameter.VAR_KEYWORD: "**",
}


def native_parameters(obj, drop_first: bool) -> list:
    params = list(inspect.signature(obj).parameters.values())
    if drop_first and params and params[0].name in ("self", "$self"):
        params = params[1:]
    return [
        (p.name, KINDS[p.kind], p.default is not inspect.Parameter.empty) for p in params
    ]


def test_the_stubs_ship_with_the_package():
    assert STUB.is_file() and (PACKAGE / "py.typed").is_file()


def test_the_stubs_name_every_public_class_and_function_and_nothing_else():
    assert set(FUNCTIONS) | set(CLASSES) == public(dir(_native))
    # The package re-exports them all.
    assert public(dir(_native)) <= set(cb.__all__)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_function_parameters_match(name):
    native = getattr(_native, name)
    assert native_parameters(native, False) == stub_parameters(FUNCTIONS[name], False)


def stub_members(cls: ast.ClassDef) -> dict:
    members = {}
    for n in cls.body:
        if isinstance(n, ast.FunctionDef):
            decorators = {d.id for d in n.decorator_list if isinstance(d, ast.Name)}
            members[n.name] = (n, decorators)
    return members


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_class_members_match(name):
    cls = getattr(_native, name)
    members = stub_members(CLASSES[name])
    assert public(members) == public(vars(cls)), name
    for member, (node, decorators) in members.items():
        if member == "__init__":
            continue
        attribute = vars(cls)[member]
        if "property" in decorators:
            assert inspect.isdatadescriptor(attribute), f"{name}.{member} is a property"
            continue
        if "staticmethod" in decorators:
            function = getattr(cls, member)
            drop = False
        else:
            assert callable(attribute), f"{name}.{member} is a method"
            function = attribute
            drop = True
        assert native_parameters(function, drop) == stub_parameters(node, drop), (
            f"{name}.{member}"
        )


def test_constructors_match_where_the_extension_reports_them():
    checked = 0
    for name, node in CLASSES.items():
        init = stub_members(node).get("__init__")
        cls = getattr(_native, name)
        if init is None:
            # No constructor in the stubs: the class is made by the package only.
            with pytest.raises(TypeError):
                cls()
            continue
        signature = getattr(cls, "__text_signature__", None)
        if signature is None:
            continue
        assert native_parameters(cls, False) == stub_parameters(init[0], True), name
        checked += 1
    assert checked >= 2, "ContactProblem and PythonSolver report their constructors"
