"""The portable family's bindings (bindings/portable/): one emit function per kernel, rendering
the family's templates; what a check refuses never reaches emission (an assertion there).

The generated C itself is covered end to end by the codegen tests (bit-exact with golden and the
reference runtimes); here: the wiring, the refusals checks.py owns, and the assertions."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest

from tilewise.bindings.portable import bindings, checks
from tilewise.bindings.portable.common import TEMPLATES
from tilewise.frontend import load_model
from tilewise.ir.ops import Op
from tilewise.passes import lower

from .tflite_builder import ACT, ModelBuilder

PORTABLE = Path(checks.__file__).resolve().parent
EMITTING = ("weighted", "elementwise", "pool", "untiled", "s16")


def _add_model(tmp: Path, op: str = "ADD"):
    b = ModelBuilder()
    x = b.input("x", (1, 4, 4, 8), "int8", scale=0.01, zero_point=3)
    x2 = b.input("x2", (1, 4, 4, 8), "int8", scale=0.02, zero_point=-5)
    y = b.tensor("y", (1, 4, 4, 8), "int8", scale=0.03, zero_point=1)
    b.op(op, [x, x2], [y], f"{op.capitalize()}Options", FusedActivationFunction=ACT["NONE"])
    b.output(y)
    return lower(load_model(str(b.save(tmp / "add.tflite"))))


def _kernel(b) -> str:
    """A binding's name without its mode suffix (bindings of several modes are named with it)."""
    return b.name.removesuffix(f"_{b.key.mode}") if b.key.mode else b.name


def test_every_binding_has_its_own_emit_function_in_an_emission_module():
    """An emit function serves one kernel: shared only across the semantics modes of that kernel
    (the requant mode is data of its template), by the precisions of the byte copy, by the
    output widths of the integer exports' 16x8 kernels, by the two table functions (logistic,
    tanh: one LUT kernel, its table the data) and by the add / sub / mul by a one-value constant
    (the same LUT kernel, the golden op's table the data)."""
    by_fn: dict = {}
    for b in bindings(None):
        assert b.emit.__module__.rsplit(".", 1)[-1] in EMITTING, b.name
        by_fn.setdefault(b.emit, set()).add(_kernel(b))
    shared = [names for names in by_fn.values() if len(names) > 1]
    expected = [{"reshape", "reshape_s16", "reshape_s32"}, {"logistic_s8", "tanh_s8"},
                {"add_const_lut_s8", "sub_const_lut_s8", "mul_const_lut_s8"}] + [
        {f"{k}_s16_int", f"{k}_s16_int_y8"} for k in ("conv2d", "depthwise", "fully_connected")]
    assert sorted(map(sorted, shared)) == sorted(map(sorted, expected)), shared


def _docstrings(tree: ast.AST) -> set[int]:
    return {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}


def _op_places(tree: ast.AST):
    """The expressions that name an op: comparisons (`layer.op == ...`, `op in (...)`) and the
    op argument of the family's `add(name, op, ...)`."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Compare):
            yield from (n.left, *n.comparators)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "add" \
                and len(n.args) > 1:
            yield n.args[1]


def test_emission_writes_no_c_and_names_no_op_in_python():
    """C lives in templates/*.j2 (no string holding C syntax in the emission modules); an op is
    named by its Op member, never by a string literal."""
    ops = {str(o) for o in Op}
    for path in PORTABLE.glob("*.py"):
        tree = ast.parse(path.read_text())
        if path.stem == "cost":   # the cost models compare loop-nest kinds (LoopNest.kind: "add" ...)
            continue
        for place in _op_places(tree):
            for node in ast.walk(place):
                assert not (isinstance(node, ast.Constant) and node.value in ops), \
                    f"{path.name}:{node.lineno}: op literal {node.value!r}"
        if path.stem not in EMITTING:
            continue
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and id(node) not in docs):
                assert not any(c in node.value for c in "{};"), \
                    f"{path.name}:{node.lineno}: C text {node.value!r}"
    assert not (PORTABLE / "calls.py").exists()
    assert {p.name for p in TEMPLATES.glob("*.j2")} >= {"compute.c.j2", "whole_function.c.j2"}


def test_an_int16_operand_of_an_8bit_elementwise_kernel_is_refused(tmp_path):
    """The binding key names the first input and the output; checks.py refuses the other operand
    when it is int16 (the int8 kernels would read it as bytes)."""
    lg = _add_model(tmp_path)
    (layer,) = lg.layers
    assert checks.elementwise_s8(layer, lg) is None
    other = layer.inputs[1]
    wide = replace(lg, tensors={**lg.tensors, other: replace(lg.tensors[other], dtype="int16")})
    assert checks.elementwise_s8(layer, wide) == "an int16 operand of an 8-bit add"
    assert checks.broadcast_s8(layer, wide) == "an int16 operand of an 8-bit add"


def test_what_a_check_refuses_is_an_assertion_in_emission(tmp_path):
    """A layer refused by its check reaching emission is a bug: an AssertionError, not C."""
    lg = _add_model(tmp_path)
    (layer,) = lg.layers
    (add_s8,) = [b for b in bindings(None) if b.name == "add_s8_tflite"]
    assert "tw_add_s8(&PARAMS, m->x, m->x2, m->y" in add_s8.emit(layer, lg, None)
    other = layer.inputs[1]
    mixed = replace(lg, tensors={**lg.tensors, other: replace(lg.tensors[other], dtype="uint8")})
    assert checks.elementwise_s8(layer, mixed) == "add mixing int8 and uint8 tensors"
    with pytest.raises(AssertionError, match="passed its check"):
        add_s8.emit(layer, mixed, None)
