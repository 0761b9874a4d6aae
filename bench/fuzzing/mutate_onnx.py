"""Field-level mutations of an ONNX model: the parsed ModelProto is changed the way a broken
exporter, a hand edit or a wrong tool would change it, then serialized again (so the protobuf is
well formed and the importer's own checks are what is exercised).

Each mutation takes the model (changed in place) and a `random.Random`, and returns a short
description, or None when the model has nothing it applies to. `mutate` applies one to three.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import onnx
from onnx import helper, numpy_helper

#: dimension values that break shape arithmetic: zero, negative, one, huge
BAD_DIMS = (0, -1, 1, 2, 3, 7, 1000, 65536, 2 ** 31 - 1, 2 ** 31, 2 ** 40)
#: integer attribute values
BAD_INTS = (0, -1, 1, 2, 3, 8, 16, 31, 32, 33, 64, 255, -128, 2 ** 31 - 1, -2 ** 31, 2 ** 62)
BAD_FLOATS = (0.0, -0.0, -1.0, 1e-45, 1e38, float("inf"), float("-inf"), float("nan"), 0.5, 3.0)
#: element types, including ones the frontend does not take
ELEM_TYPES = tuple(range(0, 24))
OPS = ("Conv", "Gemm", "MatMul", "Add", "Mul", "Div", "Sub", "Relu", "Clip", "Floor", "Cast", "Pad",
       "MaxPool", "AveragePool", "GlobalAveragePool", "Reshape", "Flatten", "Transpose", "Concat",
       "Slice", "Gather", "Softmax", "QuantizeLinear", "DequantizeLinear", "QLinearConv",
       "RequantShift", "Squeeze", "Unsqueeze", "ReduceMean", "ReduceSum", "Identity", "Shape",
       "NotAnOp", "ConvTranspose", "BatchNormalization", "Sigmoid", "Max", "Min", "Where", "Expand")


def _node(model: onnx.ModelProto, rng: random.Random) -> onnx.NodeProto | None:
    nodes = model.graph.node
    return nodes[rng.randrange(len(nodes))] if len(nodes) else None


def _tensor_names(model: onnx.ModelProto) -> list[str]:
    g = model.graph
    names = [i.name for i in g.input] + [t.name for t in g.initializer]
    names += [o for n in g.node for o in n.output]
    return [n for n in names if n]


def input_dims(model: onnx.ModelProto, rng: random.Random) -> str | None:
    """A graph input's dimension set to a bad value, removed, added or made symbolic."""
    vis = [vi for vi in model.graph.input if vi.type.HasField("tensor_type")]
    if not vis:
        return None
    vi = rng.choice(vis)
    dims = vi.type.tensor_type.shape.dim
    what = rng.randrange(4)
    if what == 0 and len(dims):
        d = dims[rng.randrange(len(dims))]
        v = rng.choice(BAD_DIMS)
        d.Clear()
        d.dim_value = v
        return f"input '{vi.name}' dim set to {v}"
    if what == 1 and len(dims):
        del dims[rng.randrange(len(dims))]
        return f"input '{vi.name}' lost a dim"
    if what == 2:
        dims.add().dim_value = rng.choice(BAD_DIMS)
        return f"input '{vi.name}' gained a dim"
    if len(dims):
        d = dims[rng.randrange(len(dims))]
        d.Clear()
        d.dim_param = "N"
        return f"input '{vi.name}' dim made symbolic"
    vi.type.tensor_type.ClearField("shape")
    return f"input '{vi.name}' shape removed"


def elem_types(model: onnx.ModelProto, rng: random.Random) -> str | None:
    """A graph input's, output's or initializer's element type changed."""
    g = model.graph
    t = rng.choice(ELEM_TYPES)
    choice = rng.randrange(3)
    if choice == 0 and len(g.input):
        vi = rng.choice(list(g.input))
        vi.type.tensor_type.elem_type = t
        return f"input '{vi.name}' elem_type {t}"
    if choice == 1 and len(g.output):
        vi = rng.choice(list(g.output))
        vi.type.tensor_type.elem_type = t
        return f"output '{vi.name}' elem_type {t}"
    if len(g.initializer):
        init = rng.choice(list(g.initializer))
        init.data_type = t
        return f"initializer '{init.name}' data_type {t}"
    return None


def initializer_size(model: onnx.ModelProto, rng: random.Random) -> str | None:
    """An initializer whose dims and data disagree: dims changed, data cut or grown."""
    inits = list(model.graph.initializer)
    if not inits:
        return None
    t = rng.choice(inits)
    what = rng.randrange(4)
    if what == 0 and len(t.dims):
        i = rng.randrange(len(t.dims))
        t.dims[i] = rng.choice(BAD_DIMS[:8])
        return f"initializer '{t.name}' dim {i} = {t.dims[i]}"
    if what == 1 and t.raw_data:
        t.raw_data = t.raw_data[:rng.randrange(len(t.raw_data))]
        return f"initializer '{t.name}' raw data cut"
    if what == 2:
        t.dims.append(rng.choice((0, 1, 2, 3)))
        return f"initializer '{t.name}' gained a dim"
    del t.dims[:]
    return f"initializer '{t.name}' made a scalar"


def initializer_values(model: onnx.ModelProto, rng: random.Random) -> str | None:
    """An initializer's values set to zero, negative, extreme or non-finite ones (divisors,
    scales, shifts, zero points, shapes and axes are all initializers)."""
    inits = list(model.graph.initializer)
    consts = [(n, a) for n in model.graph.node if n.op_type == "Constant" for a in n.attribute if a.name == "value"]
    pick = rng.randrange(len(inits) + len(consts)) if inits or consts else None
    if pick is None:
        return None
    if pick < len(inits):
        t, label = inits[pick], f"initializer '{inits[pick].name}'"
    else:
        t, label = consts[pick - len(inits)][1].t, f"constant '{consts[pick - len(inits)][0].name}'"
    try:
        arr = numpy_helper.to_array(t).copy()
    except Exception:   # noqa: BLE001 — already broken by an earlier mutation
        return None
    if arr.size == 0 or arr.dtype.kind not in "iuf":
        return None
    if arr.dtype.kind == "f":
        v = rng.choice(BAD_FLOATS)
    else:
        info = np.iinfo(arr.dtype)
        v = rng.choice((0, -1, 1, info.min, info.max, 31, 32, 64, -8))
        v = int(np.clip(v, info.min, info.max))
    if rng.random() < 0.5:
        arr.flat[rng.randrange(arr.size)] = v
        what = "one value"
    else:
        arr[...] = v
        what = "all values"
    new = numpy_helper.from_array(arr, t.name)
    t.CopyFrom(new)
    return f"{label}: {what} = {v}"


def attributes(model: onnx.ModelProto, rng: random.Random) -> str | None:
    """A node attribute's value changed, its type changed, the attribute dropped or a list
    attribute given another length."""
    cands = [(n, a) for n in model.graph.node for a in n.attribute if a.name != "value"]
    if not cands:
        return None
    n, a = rng.choice(cands)
    what = rng.randrange(5)
    if what == 0:
        n.attribute.remove(a)
        return f"node '{n.name}' attribute '{a.name}' dropped"
    if what == 1:   # another type
        v = rng.choice((1, 2.5, "x", [1, 2], [0.5], b"abc", [-1]))
        new = helper.make_attribute(a.name, v)
        a.CopyFrom(new)
        return f"node '{n.name}' attribute '{a.name}' became {v!r}"
    if a.type == onnx.AttributeProto.INT:
        a.i = rng.choice(BAD_INTS)
        return f"node '{n.name}' attribute '{a.name}' = {a.i}"
    if a.type == onnx.AttributeProto.FLOAT:
        a.f = rng.choice(BAD_FLOATS)
        return f"node '{n.name}' attribute '{a.name}' = {a.f}"
    if a.type == onnx.AttributeProto.INTS:
        if what == 2 and len(a.ints):
            a.ints[rng.randrange(len(a.ints))] = rng.choice(BAD_INTS)
        elif what == 3 and len(a.ints):
            del a.ints[rng.randrange(len(a.ints))]
        else:
            a.ints.append(rng.choice(BAD_INTS[:6]))
        return f"node '{n.name}' attribute '{a.name}' = {list(a.ints)}"
    if a.type == onnx.AttributeProto.FLOATS and len(a.floats):
        a.floats[rng.randrange(len(a.floats))] = rng.choice(BAD_FLOATS)
        return f"node '{n.name}' attribute '{a.name}' = {list(a.floats)}"
    if a.type == onnx.AttributeProto.STRING:
        a.s = rng.choice((b"", b"NOTSET", b"SAME_UPPER", b"VALID", b"\xff\xfe"))
        return f"node '{n.name}' attribute '{a.name}' = {a.s!r}"
    return None


def add_attribute(model: onnx.ModelProto, rng: random.Random) -> str | None:
    """An attribute the op may read given to a node that did not have it."""
    n = _node(model, rng)
    if n is None:
        return None
    name = rng.choice(("axis", "group", "pads", "strides", "kernel_shape", "dilations", "to", "perm",
                       "transA", "transB", "alpha", "beta", "keepdims", "axes", "auto_pad", "mode",
                       "div", "n_levels", "signed", "D", "mul", "add", "shift", "ceil_mode"))
    v = rng.choice((0, 1, -1, 2, 7, [1, 1], [0, 0, 0, 0], [2, 2, 2], [-1, 5], 0.5, "SAME_UPPER", "VALID"))
    for a in list(n.attribute):
        if a.name == name:
            n.attribute.remove(a)
    n.attribute.append(helper.make_attribute(name, v))
    return f"node '{n.name}' attribute '{name}' = {v!r}"


def edges(model: onnx.ModelProto, rng: random.Random) -> str | None:
    """A node input dropped, renamed to nothing (dangling), to another tensor, to '' (absent
    optional), or one added."""
    n = _node(model, rng)
    if n is None:
        return None
    names = _tensor_names(model)
    what = rng.randrange(5)
    if what == 0 and len(n.input):
        i = rng.randrange(len(n.input))
        del n.input[i]
        return f"node '{n.name}' lost input {i}"
    if what == 1 and len(n.input):
        i = rng.randrange(len(n.input))
        n.input[i] = "dangling_tensor"
        return f"node '{n.name}' input {i} dangles"
    if what == 2 and len(n.input) and names:
        i = rng.randrange(len(n.input))
        n.input[i] = rng.choice(names)
        return f"node '{n.name}' input {i} = '{n.input[i]}'"
    if what == 3 and len(n.input):
        i = rng.randrange(len(n.input))
        n.input[i] = ""
        return f"node '{n.name}' input {i} absent"
    if names:
        n.input.append(rng.choice(names))
        return f"node '{n.name}' gained input '{n.input[-1]}'"
    return None


def outputs(model: onnx.ModelProto, rng: random.Random) -> str | None:
    """A node's output renamed, duplicated with another node's, or dropped."""
    n = _node(model, rng)
    if n is None or not len(n.output):
        return None
    names = _tensor_names(model)
    what = rng.randrange(3)
    i = rng.randrange(len(n.output))
    if what == 0:
        n.output[i] = "renamed_output"
        return f"node '{n.name}' output {i} renamed"
    if what == 1:
        n.output[i] = rng.choice(names)
        return f"node '{n.name}' output {i} = '{n.output[i]}'"
    del n.output[i]
    return f"node '{n.name}' lost output {i}"


def cycle(model: onnx.ModelProto, rng: random.Random) -> str | None:
    """A node made to read a later node's output (or its own): a cycle."""
    nodes = model.graph.node
    if not len(nodes):
        return None
    i = rng.randrange(len(nodes))
    j = rng.randrange(i, len(nodes))
    if not len(nodes[j].output):
        return None
    src = nodes[j].output[0]
    if len(nodes[i].input):
        nodes[i].input[rng.randrange(len(nodes[i].input))] = src
    else:
        nodes[i].input.append(src)
    return f"node '{nodes[i].name}' reads '{src}' of node '{nodes[j].name}'"


def op_types(model: onnx.ModelProto, rng: random.Random) -> str | None:
    """A node's op_type (or domain) replaced."""
    n = _node(model, rng)
    if n is None:
        return None
    if rng.random() < 0.2:
        n.domain = rng.choice(("", "com.microsoft", "tilewise", "ai.onnx", "x"))
        return f"node '{n.name}' domain '{n.domain}'"
    ops = list({m.op_type for m in model.graph.node}) + list(OPS)
    n.op_type = rng.choice(ops)
    return f"node '{n.name}' op_type {n.op_type}"


def nodes(model: onnx.ModelProto, rng: random.Random) -> str | None:
    """A node dropped, duplicated, or two nodes swapped."""
    g = model.graph
    if not len(g.node):
        return None
    i = rng.randrange(len(g.node))
    what = rng.randrange(3)
    if what == 0 and len(g.node) > 1:
        name = g.node[i].name
        del g.node[i]
        return f"node '{name}' dropped"
    if what == 1:
        g.node.append(onnx.NodeProto())
        g.node[-1].CopyFrom(g.node[i])
        return f"node '{g.node[i].name}' duplicated"
    j = rng.randrange(len(g.node))
    a, b = onnx.NodeProto(), onnx.NodeProto()
    a.CopyFrom(g.node[i])
    b.CopyFrom(g.node[j])
    g.node[i].CopyFrom(b)
    g.node[j].CopyFrom(a)
    return f"nodes {i} and {j} swapped"


def graph_io(model: onnx.ModelProto, rng: random.Random) -> str | None:
    """Graph outputs or inputs dropped, renamed, pointed at an input or an initializer."""
    g = model.graph
    names = _tensor_names(model)
    what = rng.randrange(5)
    if what == 0 and len(g.output):
        del g.output[rng.randrange(len(g.output))]
        return "a graph output dropped"
    if what == 1 and len(g.output):
        vi = rng.choice(list(g.output))
        vi.name = rng.choice(names + ["no_such_tensor"])
        return f"graph output renamed '{vi.name}'"
    if what == 2 and len(g.input):
        vi = rng.choice(list(g.input))
        vi.name = rng.choice(names + ["no_such_input"])
        return f"graph input renamed '{vi.name}'"
    if what == 3 and len(g.input):
        del g.input[rng.randrange(len(g.input))]
        return "a graph input dropped"
    if len(g.input):
        g.output.add().CopyFrom(rng.choice(list(g.input)))
        return "a graph input listed as an output"
    return None


def model_fields(model: onnx.ModelProto, rng: random.Random) -> str | None:
    """The opset, the IR version or tilewise's metadata entries changed."""
    what = rng.randrange(3)
    if what == 0:
        v = rng.choice((1, 7, 9, 11, 13, 17, 21, 99, 0))
        for imp in model.opset_import:
            if imp.domain in ("", "ai.onnx"):
                imp.version = v
        return f"opset {v}"
    if what == 1:
        model.ir_version = rng.choice((1, 3, 7, 10, 99))
        return f"ir_version {model.ir_version}"
    n = _node(model, rng)
    e = model.metadata_props.add()
    e.key = "tilewise.w_bits." + (n.name if n is not None else "x")
    e.value = rng.choice(("4", "2", "8", "3", "", "x", "-1", "1e9"))
    return f"metadata {e.key} = {e.value!r}"


MUTATIONS: tuple[Callable[[onnx.ModelProto, random.Random], str | None], ...] = (
    input_dims, elem_types, initializer_size, initializer_values, initializer_values, attributes,
    attributes, add_attribute, edges, outputs, cycle, op_types, nodes, graph_io, model_fields)


def mutate(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """One to three field-level mutations of the ONNX model `data`."""
    model = onnx.load_model_from_string(data)
    notes = []
    want = rng.choice((1, 1, 2, 3))
    for _ in range(want * 8):
        if len(notes) == want:
            break
        note = rng.choice(MUTATIONS)(model, rng)
        if note:
            notes.append(note)
    return model.SerializeToString(), "onnx: " + "; ".join(notes)
