"""Deeploy-style integer attention MatMuls for the tests and bench/ (issue 28): a MatMul of two
activations followed by QuantLab's RequantShift, as Deeploy's integer transformers write them
(float32 containers of integer codes, the custom `RequantShift` node in the default domain:
y = clip(floor((x·mul + add + div/2) / div)) — tests/quantlab_models.py's semantics).

`matmul_net(heads, m, k, n)`: inputs a [1, heads, m, k] and b [1, heads, k, n] (or, with
`b_from_t`, b the Transpose of an input [1, heads, n, k], as attention's Kᵀ), one MatMul, and
with `requant` a RequantShift of one mul / add for the tensor (`per_column`: one per column of
the output) and a div that spreads int8 codes over the levels (random int8 / uint8 codes of the
operands: k·|a|·|b| ~ k·64²). Code types come with the inputs (`--input-dtype a=uint8` ...).

`attention_suite(shapes)`: several independent attentions in one graph — per (heads, m, d, L, dv,
row) q [1, heads, m, d] · k [1, heads, d, L] → RequantShift → the row op (`row`: "iSoftmax" with
the Attention kernel's coefficients, "ITAMax", or None) → · v [1, heads, L, dv] → RequantShift:
what passes/fuse_attention.py makes one depth-first layer (bench/calibrate_attention.py).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


def matmul_net(heads: int, m: int, k: int, n: int, *, requant: bool = True, per_column: bool = False,
               b_from_t: bool = False, a_unsigned: bool = False, seed: int = 0) -> onnx.ModelProto:
    """The model of the module docstring."""
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    b_in = [1, heads, n, k] if b_from_t else [1, heads, k, n]
    if b_from_t:
        nodes.append(helper.make_node("Transpose", ["b"], ["bt"], perm=[0, 1, 3, 2], name="kt"))
    nodes.append(helper.make_node("MatMul", ["a", "bt" if b_from_t else "b"], ["mm"], name="matmul"))
    out = "mm"
    if requant:
        shape = (n,) if per_column else ()
        mul = rng.integers(1, 256, shape)
        add = rng.integers(-2**12, 2**12, shape)
        spread = np.sqrt(k) * (100 if a_unsigned else 64) * 64 * float(np.max(mul))
        div = 1 << max(0, int(np.ceil(np.log2(spread / 64))))
        inits += [numpy_helper.from_array(np.asarray(mul, np.float32), "mul"),
                  numpy_helper.from_array(np.asarray(add, np.float32), "add")]
        nodes.append(helper.make_node("RequantShift", ["mm", "mul", "add"], ["y"], div=div, n_levels_out=256,
                                      signed=1, name="rq"))
        out = "y"
    g = helper.make_graph(nodes, f"matmul_{heads}x{m}x{k}x{n}",
                          [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, heads, m, k]),
                           helper.make_tensor_value_info("b", TensorProto.FLOAT, b_in)],
                          [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 9
    return model


def matmul_suite(shapes, seed: int = 0) -> tuple[onnx.ModelProto, dict[str, str]]:
    """Several independent MatMul → RequantShift pairs in one graph (one firmware measures them
    all): per (heads, m, k, n, a_unsigned) of `shapes` inputs a{i}, b{i} and output y{i}; and the
    inputs' code types."""
    rng = np.random.default_rng(seed)
    nodes, inits, ins, outs, types = [], [], [], [], {}
    for i, (heads, m, k, n, unsigned) in enumerate(shapes):
        mul, add = int(rng.integers(1, 256)), int(rng.integers(-2**12, 2**12))
        spread = np.sqrt(k) * (100 if unsigned else 64) * 64 * mul
        div = 1 << max(0, int(np.ceil(np.log2(spread / 64))))
        inits += [numpy_helper.from_array(np.asarray(mul, np.float32), f"mul{i}"),
                  numpy_helper.from_array(np.asarray(add, np.float32), f"add{i}")]
        nodes += [helper.make_node("MatMul", [f"a{i}", f"b{i}"], [f"mm{i}"], name=f"matmul{i}"),
                  helper.make_node("RequantShift", [f"mm{i}", f"mul{i}", f"add{i}"], [f"y{i}"], div=div,
                                   n_levels_out=256, signed=1, name=f"rq{i}")]
        ins += [helper.make_tensor_value_info(f"a{i}", TensorProto.FLOAT, [1, heads, m, k]),
                helper.make_tensor_value_info(f"b{i}", TensorProto.FLOAT, [1, heads, k, n])]
        outs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None))
        types.update({f"a{i}": "uint8" if unsigned else "int8", f"b{i}": "int8"})
    g = helper.make_graph(nodes, "matmul_suite", ins, outs, inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 9
    return model, types


def _requant(rng, name: str, x: str, y: str, k: int, a_max: int) -> tuple[list, list]:
    """A RequantShift of `x` into int8 `y` whose div spreads k products of codes up to a_max · 64."""
    mul, add = int(rng.integers(1, 256)), int(rng.integers(-2**12, 2**12))
    div = 1 << max(0, int(np.ceil(np.log2(np.sqrt(k) * a_max * 64 * mul / 64))))
    inits = [numpy_helper.from_array(np.asarray(mul, np.float32), f"{name}_mul"),
             numpy_helper.from_array(np.asarray(add, np.float32), f"{name}_add")]
    node = helper.make_node("RequantShift", [x, f"{name}_mul", f"{name}_add"], [y], div=div, n_levels_out=256,
                            signed=1, name=name)
    return [node], inits


def _scalar_attr(name: str, v: float):
    return helper.make_attribute(name, numpy_helper.from_array(np.asarray([v], np.float32)))


def attention_suite(shapes, seed: int = 0) -> tuple[onnx.ModelProto, dict[str, str]]:
    """The attentions of the module docstring in one graph, and the inputs' code types."""
    rng = np.random.default_rng(seed)
    nodes, inits, ins, outs, types = [], [], [], [], {}
    for i, (heads, m, d, keys, dv, row) in enumerate(shapes):
        nodes.append(helper.make_node("MatMul", [f"q{i}", f"k{i}"], [f"qk{i}"], name=f"scores{i}"))
        n, init = _requant(rng, f"rq_s{i}", f"qk{i}", f"s{i}", d, 64)
        nodes += n
        inits += init
        a = f"s{i}"
        if row is not None:
            r = helper.make_node(row, [a], [f"p{i}"], name=f"{row}{i}")
            if row == "iSoftmax":   # the Deeploy Attention kernel's coefficients
                r.attribute.extend([_scalar_attr("coeffA", 1.0), _scalar_attr("coeffB", 173.0),
                                    _scalar_attr("coeffC", 15599.0), _scalar_attr("log2", 127.0)])
            r.attribute.append(_scalar_attr("n_levels", 256.0))
            nodes.append(r)
            a = f"p{i}"
        nodes.append(helper.make_node("MatMul", [a, f"v{i}"], [f"pv{i}"], name=f"context{i}"))
        n, init = _requant(rng, f"rq_o{i}", f"pv{i}", f"y{i}", keys, 255 if row else 64)
        nodes += n
        inits += init
        ins += [helper.make_tensor_value_info(f"q{i}", TensorProto.FLOAT, [1, heads, m, d]),
                helper.make_tensor_value_info(f"k{i}", TensorProto.FLOAT, [1, heads, d, keys]),
                helper.make_tensor_value_info(f"v{i}", TensorProto.FLOAT, [1, heads, keys, dv])]
        outs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None))
        types.update({f"q{i}": "int8", f"k{i}": "int8", f"v{i}": "int8"})
    g = helper.make_graph(nodes, "attention_suite", ins, outs, inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 9
    return model, types


def dtypes(a_unsigned: bool = False) -> dict[str, str]:
    """The inputs' code types of matmul_net."""
    return {"a": "uint8" if a_unsigned else "int8", "b": "int8"}
