"""The code keeps the shape docs/development.md describes: parts on floors, each importing only
the floors below it; no import circles (not even one hidden in a function or in a type-only
block); the engine free of Textual; and the picture of the parts in the docs current."""

from __future__ import annotations

import pytest

from tests.architecture_support import (
    DATA_FLOW, DOC, PARTS, arrows_down, circles, doc_picture, modules, part_of, picture,
)


@pytest.fixture(scope="module")
def graph():
    return modules()


def test_no_two_modules_import_each_other(graph):
    found = circles(graph)
    assert not found, "import circles (break each by moving what both need into a third module):\n" + "\n".join(
        " <-> ".join(c) for c in found)


def test_the_circle_finder_sees_an_import_inside_a_function(tmp_path):
    """The check is only worth its name if a function-level import closes a circle for it."""
    import ast

    from tests.architecture_support import Module, _imported_names

    source = "def later():\n    from store.b import x\n"
    imported = _imported_names(ast.parse(source))
    assert imported == [("store.b", ["x"])]
    type_only = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from store.b import x\n"
    assert ("store.b", ["x"]) in _imported_names(ast.parse(type_only))
    a = Module("store.a", tmp_path / "a.py", 2, frozenset({"store.b"}))
    b = Module("store.b", tmp_path / "b.py", 2, frozenset({"store.a"}))
    assert circles({"store.a": a, "store.b": b}) == [["store.a", "store.b"]]


def test_no_part_imports_a_part_on_a_higher_floor(graph):
    down = arrows_down(graph)
    assert not down, "imports from a lower floor up (move what both need down, or pass it in):\n" + "\n".join(
        f"{a} -> {b}  ({part_of(a)} -> {part_of(b)})" for a, b in down)


def test_the_floor_check_sees_every_kind_of_import(tmp_path):
    """An engine module importing retrieval inside a function or only for its types is still an
    arrow up."""
    from tests.architecture_support import Module

    for imported in ("store.retrieval.ranking",):
        low = Module("store.engine.core", tmp_path / "core.py", 2, frozenset({imported}))
        high = Module(imported, tmp_path / "ranking.py", 2, frozenset({"store.engine.core"}))
        assert arrows_down({low.name: low, high.name: high}) == [("store.engine.core", imported)]


def test_sql_is_written_only_in_the_backends(graph):
    from tests.architecture_support import sql_strings

    holding = {name for name, m in graph.items() if not name.startswith("store.backends") and sql_strings(m)}
    assert not holding, f"SQL outside store/backends: {sorted(holding)}"


def test_the_sql_check_sees_a_query(tmp_path):
    from tests.architecture_support import Module, sql_strings

    path = tmp_path / "m.py"
    path.write_text('p = "?"\nq = f"SELECT id FROM memory WHERE id = {p}"\ndoc = "Select the memories"\n')
    assert sql_strings(Module("store.m", path, 3, frozenset())) == 1


def test_the_engine_and_the_command_line_never_import_textual():
    import ast

    for module in modules().values():
        if not (module.name.startswith("store") or module.name.startswith("tui.cli")):
            continue
        if module.name == "tui.cli.ui":  # `memdeck ui`: the one command that opens the workbench
            continue
        tree = ast.parse(module.path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                assert not node.module.startswith("textual"), f"{module.name} imports {node.module}"
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith("textual") for a in node.names), module.name


def test_every_module_belongs_to_a_part(graph):
    for name in graph:
        assert part_of(name) in PARTS


def test_the_data_flow_is_the_code(graph):
    """Each stage of the drawn flow is a module, and each hands on to the next: one of the two
    imports the other (ingest writes through the Store; injection calls rank, rank the gate...)."""
    names = [module for _, module in DATA_FLOW]
    for name in names:
        assert name in graph, f"{name} is in the picture but not in the code"
    for stage, (a, b) in zip(DATA_FLOW, zip(names, names[1:])):
        linked = b in graph[a].imports or a in graph[b].imports or any(
            a in graph[m].imports and b in graph[m].imports for m in graph)
        assert linked, f"{stage[0]}: {a} and {b} are drawn as one flow but neither uses the other"


def test_the_picture_in_the_docs_is_current():
    shown = doc_picture(DOC.read_text(encoding="utf-8"))
    assert shown is not None, "docs/development.md has lost its picture of the parts"
    assert shown == picture(), "docs/development.md's picture is stale: run `python -m tests.architecture_support`"


def test_the_front_ends_reach_the_store_through_its_facade_alone(graph):
    """The command line, the workbench and the MCP server import `store` and `store.api`, never a
    module behind it: what they use is named in `store.api.EXPORTS`."""
    behind = {name: sorted(d for d in m.imports if d.startswith("store.") and d != "store.api")
              for name, m in graph.items() if name.startswith("tui")}
    assert {name: used for name, used in behind.items() if used} == {}


def test_every_name_the_facade_exports_is_there_and_typed():
    import ast
    import importlib

    import store.api as api

    for name, (module, attribute) in api.EXPORTS.items():
        value = importlib.import_module(module)
        assert attribute is None or hasattr(value, attribute), f"{name}: {module} has no {attribute}"
        assert getattr(api, name) is (value if attribute is None else getattr(value, attribute))
    # The type-only imports name the same things, so type checkers see what `__getattr__` gives:
    # a module given whole is imported from its package, a name from its module.
    tree = ast.parse(open(api.__file__, encoding="utf-8").read())
    typed = {alias.asname or alias.name: (item.module, alias.name)
             for node in ast.walk(tree)
             if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"
             for item in node.body if isinstance(item, ast.ImportFrom) for alias in item.names}
    wanted = {name: tuple(module.rsplit(".", 1)) if attribute is None else (module, attribute)
              for name, (module, attribute) in api.EXPORTS.items()}
    assert typed == wanted
    try:
        api.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("an unknown name is an AttributeError")
