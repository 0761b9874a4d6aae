"""The layering contract (DESIGN.md "Allowed package dependencies"), held against every import.

`LAYERS` lists the units of tilewise from the bottom up; a unit may import its own modules and
any unit on a lower row, never one on its own row (siblings) or above. Every `.py` file under
tilewise/ is parsed (AST) and every reference to a tilewise module counts as an import:
- `import` / `from … import` anywhere — module level, inside functions (lazy imports), under
  `if TYPE_CHECKING:`, inside a module `__getattr__` (PEP 562);
- `importlib.import_module(...)` / `__import__(...)` with a constant name (relative names resolved);
  one with a computed name must be in `DYNAMIC` with the place its names are spelled out;
- a string constant that is a dotted tilewise module path (`"tilewise.schedule.model:tile"`:
  registries that import by name).

The table refines DESIGN.md's `ir < golden < frontend, passes < bindings < targets < partition,
schedule, memory < pipeline < codegen < validate < report, explore < cli` where the code shows
the order:
- a base row of helpers every stage may use (errors, progress, temporary directories, the jinja2
  environment of the C templates, the version, the bundled example);
- quantize (a float model → a quantized model file, for a target's requantization) beside codegen
  (a schedule → a C project): both write what the stages below decided, and validate reads both
  (the float model's per-layer errors);
- platforms (HAL, firmware, toolchain, runners; the values targets name) between bindings and
  targets;
- memory < schedule < partition: the L3 tiler plans L2 buffers, partition calls the per-layer
  tiler, and neither knows the network driver (pipeline.py);
- report < explore: a sweep's rows use the report's per-module counts; the demo beside explore.

`KNOWN` is a shrinking allow-list of inversions that other issue-26 work removes: each edge
names who removes it; an edge that no longer occurs must be deleted from the list (the test
says so), so the list cannot go stale.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "tilewise"

#: bottom to top; a row's units are siblings (none imports another)
LAYERS: tuple[tuple[str, ...], ...] = (
    ("base",),
    ("ir",),
    ("golden",),
    ("frontend", "passes"),
    ("bindings",),
    ("platforms",),
    ("targets",),
    ("memory",),
    ("schedule",),
    ("partition",),
    ("pipeline",),
    ("codegen", "quantize"),
    ("validate",),
    ("report",),
    ("explore", "demo"),
    ("cli",),
)

#: module (dotted, without the leading `tilewise.`) -> unit; the longest matching prefix wins
UNITS: dict[str, str] = {
    "": "base",            # tilewise/__init__.py: __version__
    "errors": "base", "progress": "base", "tempdirs": "base", "examples": "base",
    "templating": "base",  # the jinja2 environment bindings and codegen render C with
    "ir": "ir", "golden": "golden", "frontend": "frontend", "passes": "passes",
    "bindings": "bindings", "targets": "targets", "memory": "memory", "schedule": "schedule",
    "partition": "partition", "pipeline": "pipeline", "codegen": "codegen",
    "validate": "validate", "report": "report", "explore": "explore", "demo": "demo",
    "quantize": "quantize",
    "platforms": "platforms",   # the platform values (Sdk / runners) the i26-platform branch adds
    "cli": "cli",          # the command line: the driver and one module per command
}

#: (importing module, imported module) inversions another branch is removing -> who removes it.
#: Empty: the bindings -> targets edges went with i26-cost (bindings/cost_terms.py) and
#: codegen.host -> validate.gvsoc with i26-platform (tilewise/platforms). An entry added here must
#: name its remover, and fails once the edge is gone (the list only shrinks).
KNOWN: dict[tuple[str, str], str] = {}

#: modules whose `importlib.import_module` takes a computed name, and where the names are spelled
DYNAMIC: dict[str, str] = {
    "schedule.api": "TILERS: 'tilewise.schedule.<tiler>:tile' strings (checked as constants)",
    "frontend.tflite": "the tflite flatbuffer package's generated classes (not tilewise)",
    "quantize.tflite_build": "the tflite flatbuffer package's generated classes (not tilewise)",
    "targets.registry": "the chip modules beside it (targets.<chip>, each checked as a source itself)",
}

LEVEL = {unit: i for i, row in enumerate(LAYERS) for unit in row}


@dataclass(frozen=True)
class Edge:
    """One reference from module `src` to tilewise module `dst` (both dotted, no `tilewise.`)."""

    src: str
    dst: str
    line: int


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def unit_of(module: str) -> str | None:
    parts = module.split(".") if module else []
    for k in range(len(parts), -1, -1):
        unit = UNITS.get(".".join(parts[:k]))
        if unit is not None:
            return unit
    return None


def _absolute(name: str, level: int, module: str, is_package: bool) -> str:
    """`from <level dots><name> import …` in `module` as a dotted path under tilewise."""
    if level == 0:
        return name
    base = ["tilewise", *module.split(".")] if module else ["tilewise"]
    if not is_package:
        base = base[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _tilewise(name: str) -> str | None:
    """`name` without its `tilewise.` prefix when it names a tilewise module, else None."""
    name = name.split(":")[0]
    if name == "tilewise":
        return ""
    return name.removeprefix("tilewise.") if name.startswith("tilewise.") else None


def edges_of(source: str, module: str, is_package: bool = False) -> tuple[list[Edge], list[int]]:
    """The tilewise modules `source` (module `module`) refers to, and the lines of imports whose
    name is computed (module docstring)."""
    found: list[Edge] = []
    dynamic: list[int] = []

    def add(name: str | None, line: int) -> None:
        if name is not None and (dst := _tilewise(name)) is not None:
            found.append(Edge(module, dst, line))

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for a in node.names:
                add(a.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node.module or "", node.level, module, is_package)
            for a in node.names:   # `from . import x`, `from .pkg import mod`: the submodule
                add(f"{base}.{a.name}" if not node.module or _is_module(f"{base}.{a.name}")
                    else base, node.lineno)
        elif isinstance(node, ast.Call) and _is_import_call(node.func):
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                name = arg.value
                if name.startswith("."):
                    dots = len(name) - len(name.lstrip("."))
                    name = _absolute(name.lstrip("."), dots, module, is_package)
                add(name, node.lineno)
            else:
                dynamic.append(node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            v = node.value
            if v.startswith("tilewise.") and " " not in v and _is_module(v.split(":")[0]):
                add(v, node.lineno)
    return found, dynamic


def _is_import_call(func: ast.expr) -> bool:
    return ((isinstance(func, ast.Attribute) and func.attr == "import_module")
            or (isinstance(func, ast.Name) and func.id in ("import_module", "__import__")))


def _is_module(dotted: str) -> bool:
    """Whether `tilewise.a.b` is a module or package file under ROOT."""
    rel = dotted.removeprefix("tilewise").lstrip(".")
    p = ROOT.joinpath(*rel.split(".")) if rel else ROOT
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def all_edges() -> tuple[list[Edge], list[tuple[str, int]]]:
    edges: list[Edge] = []
    dynamic: list[tuple[str, int]] = []
    for path in sorted(ROOT.rglob("*.py")):
        m = module_name(path)
        e, d = edges_of(path.read_text(encoding="utf-8"), m, path.name == "__init__.py")
        edges += e
        dynamic += [(m, line) for line in d]
    return edges, dynamic


def forbidden(edge: Edge) -> str | None:
    """Why `edge` breaks the table (None when it is allowed)."""
    a, b = unit_of(edge.src), unit_of(edge.dst)
    if a is None or b is None:
        return f"{edge.src if a is None else edge.dst} is in no unit: add it to UNITS / LAYERS"
    if a == b or LEVEL[a] > LEVEL[b]:
        return None
    how = "its sibling" if LEVEL[a] == LEVEL[b] else "a higher layer"
    return f"{a} imports {how} {b}"


def violations(edges: list[Edge]) -> list[str]:
    return sorted({f"tilewise.{e.src}:{e.line} -> tilewise.{e.dst}: {why}"
                   for e in edges if (why := forbidden(e)) and (e.src, e.dst) not in KNOWN})


def test_every_unit_is_in_the_table():
    assert set(UNITS.values()) == set(LEVEL), "a unit in UNITS without a row in LAYERS, or back"
    for path in ROOT.rglob("*.py"):
        assert unit_of(module_name(path)) is not None, f"{path}: in no unit of the table"


def test_imports_follow_the_layers():
    edges, _ = all_edges()
    bad = violations(edges)
    assert not bad, ("imports against the layering table (tests/test_layering.py):\n"
                     + "\n".join(bad))


def test_known_inversions_still_exist():
    """KNOWN only shrinks: an inversion that is gone must leave the list."""
    edges, _ = all_edges()
    seen = {(e.src, e.dst) for e in edges}
    gone = sorted(f"{s} -> {d}" for s, d in KNOWN if (s, d) not in seen)
    assert not gone, "fixed, remove from KNOWN: " + ", ".join(gone)
    for (s, d), who in KNOWN.items():
        assert forbidden(Edge(s, d, 0)) is not None, f"{s} -> {d} is allowed: remove from KNOWN"
        assert who.strip(), f"{s} -> {d}: KNOWN must name who removes it"


def test_dynamic_imports_are_listed():
    _, dynamic = all_edges()
    unlisted = sorted({m for m, _ in dynamic} - set(DYNAMIC))
    assert not unlisted, ("import_module with a computed name (the test cannot see what it "
                          "imports; list the module in DYNAMIC with where its names are): "
                          + ", ".join(unlisted))


@pytest.mark.parametrize("source, module, is_package, expected", [
    ("from ...codegen.templates import render", "bindings.pulp.common", False,
     ["codegen.templates"]),
    ("def f():\n    from ...schedule import space\n", "bindings.pulp.subbyte", False,
     ["schedule.space"]),
    ("def __getattr__(name):\n    from . import project\n    return project", "codegen", True,
     ["codegen.project"]),
    ("import importlib\nm = importlib.import_module('tilewise.validate.check')", "codegen.x",
     False, ["validate.check"]),
    ("import importlib\nm = importlib.import_module('..validate', __package__)", "codegen.x",
     False, ["validate"]),
    ("T = {'x': 'tilewise.schedule.model:tile'}", "schedule.api", False, ["schedule.model"]),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..pipeline import N\n",
     "schedule.tiled", False, ["pipeline"]),
])
def test_the_walk_sees_every_kind_of_import(source, module, is_package, expected):
    edges, _ = edges_of(source, module, is_package)
    assert sorted({e.dst for e in edges}) == expected


@pytest.mark.parametrize("src, dst, ok", [
    ("bindings.pulp.common", "codegen.templates", False),   # upward
    ("frontend.onnx", "passes.lower", False),                # sibling
    ("codegen.project", "validate.check", False),            # upward
    ("pipeline", "partition.choose", True),
    ("schedule.l3", "memory.network", True),
    ("partition.choose", "schedule.api", True),
    ("schedule.tiled", "pipeline", False),
    ("cli.quantize", "cli.options", True),                   # within the cli unit
    ("cli.quantize", "quantize.pipeline", True),
    ("quantize.pipeline", "cli.options", False),
    ("golden.layers", "golden.acc_bounds", True),            # within a unit
])
def test_the_table_allows_and_forbids(src, dst, ok):
    assert (forbidden(Edge(src, dst, 1)) is None) is ok


def test_computed_import_is_reported():
    _, dynamic = edges_of("import importlib\nname = 'x'\nimportlib.import_module(name)\n",
                          "codegen.x")
    assert dynamic == [3]
