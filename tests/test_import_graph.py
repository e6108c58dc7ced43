"""The package's modules import each other without cycles.

Every import inside the package counts, also those inside functions (an import
moved into a function hides a cycle from Python, not from the design): the
graph is read from the source with `ast`, so the test sees what a reader sees.
"""
import ast
import re
from pathlib import Path

import aucforest

# the source the tests sit beside (an installed package holds no .pyx to read)
SOURCE = Path(__file__).resolve().parents[1] / "aucforest"
PACKAGE = SOURCE if SOURCE.is_dir() else Path(aucforest.__file__).resolve().parent


def module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def sources():
    """Module name -> (path, is_package) of every .py and .pyx module of the package."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py*")):
        if path.suffix in (".py", ".pyx") and "__pycache__" not in path.parts:
            found[module_name(path)] = (path, path.stem == "__init__")
    return found


def imported_modules(name, path, is_package, known):
    """Package modules that module `name` imports, anywhere in its source."""
    text = path.read_text()
    if path.suffix == ".pyx":  # Cython: its (c)import statements, read as Python imports
        statements = re.findall(r"^(?:from\s+[.\w]+\s+)?c?import\s+(?:\([^)]*\)|[^\n]*)",
                                text, re.MULTILINE)
        text = "\n".join(re.sub(r"\bcimport\b", "import", s) for s in statements)
    package = name if is_package else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            for alias in node.names:  # `from . import _dask` names a module
                candidate = f"{stem}.{alias.name}"
                targets.add(candidate if candidate in known else stem)
        elif isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
    return {t for t in targets if t in known and t != name}


def import_graph():
    known = sources()
    return {name: imported_modules(name, path, is_package, known)
            for name, (path, is_package) in known.items()}


def cycles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_imports_inside_functions():
    graph = import_graph()
    assert "aucforest._dask" in graph["aucforest._forest"]  # imported inside fit
    assert "aucforest._tree" in graph["aucforest._base"]


def test_no_import_cycles():
    assert cycles(import_graph()) == []
