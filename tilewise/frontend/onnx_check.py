"""Structural checks of an ONNX graph's nodes before the frontend reads them, each failure one
ModelFormatError sentence naming the file and the node (issue 25's fuzzing found each of these
reaching the lowering as an IndexError, a TypeError or a KeyError):

- a model using ONNX's operators imports a version of their operator set;
- every node produces at least one named tensor, and no tensor is produced twice or is both a
  node's output and a graph input or initializer;
- a standard operator (one the ONNX schema knows at the model's opset) has an input and output
  count its schema allows (Pad's opset-2 form, pads as an attribute, keeps one input), its
  required attributes, and each attribute it defines of the type the schema gives;
- an attribute of an exporter's own operator or attribute (QuantLab's RequantShift, Deeploy's
  iHardswish, a DORY adder's in1_mul, ...) is a number: an int, a float, their lists, or a
  non-empty numeric tensor of finite values;
- a window's attributes agree: kernel_shape, strides and dilations of one length k, pads of 2k,
  kernel, strides and dilations at least 1, pads not negative.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import defs, helper, numpy_helper

from ..errors import ModelFormatError

#: ops whose kernel_shape / strides / dilations / pads describe a sliding window
WINDOW_OPS = ("Conv", "ConvTranspose", "MaxPool", "AveragePool", "QLinearConv", "LpPool",
              "QLinearAveragePool", "ConvInteger")
_NUMERIC_ATTRS = (onnx.AttributeProto.INT, onnx.AttributeProto.INTS, onnx.AttributeProto.FLOAT,
                  onnx.AttributeProto.FLOATS, onnx.AttributeProto.TENSOR)


def _type_name(t: int) -> str:
    try:
        return onnx.AttributeProto.AttributeType.Name(t)
    except ValueError:
        return f"type {t}"


def _schema(node: onnx.NodeProto, opset: int) -> defs.OpSchema | None:
    """The ONNX schema of a standard operator; an operator of another domain with a standard
    name is read as the standard one (the frontend dispatches on the op type), unless that
    domain has its own schema."""
    if opset < 1:
        return None
    if node.domain not in ("", "ai.onnx"):
        try:
            defs.get_schema(node.op_type, opset, node.domain)
            return None
        except Exception:  # noqa: BLE001 — SchemaError: the domain has no such operator
            pass
    try:
        return defs.get_schema(node.op_type, opset, "")
    except Exception:  # noqa: BLE001 — SchemaError: not a standard operator (an exporter's own)
        return None


def _where(source: str, node: onnx.NodeProto, i: int) -> str:
    return f"{source}: node '{node.name or f'{node.op_type}_{i}'}' ({node.op_type})"


def _check_arity(source: str, node: onnx.NodeProto, i: int, schema: defs.OpSchema) -> None:
    n_in = len(node.input)
    while n_in and not node.input[n_in - 1]:   # trailing absent optional inputs
        n_in -= 1
    old_pad = node.op_type == "Pad" and any(a.name == "pads" for a in node.attribute)
    lo = 1 if old_pad else schema.min_input
    if not lo <= n_in <= schema.max_input:
        want = f"{lo}" if lo == schema.max_input else f"{lo} to {schema.max_input}"
        raise ModelFormatError(f"{_where(source, node, i)} has {n_in} inputs where ONNX's {node.op_type} takes "
                               f"{want}; the model is malformed, re-export it")
    n_out = len(node.output)
    if not schema.min_output <= n_out <= schema.max_output:
        raise ModelFormatError(f"{_where(source, node, i)} has {n_out} outputs where ONNX's {node.op_type} gives "
                               f"{schema.min_output} to {schema.max_output}; the model is malformed, re-export it")


def _check_attr_types(source: str, node: onnx.NodeProto, i: int, schema: defs.OpSchema) -> None:
    have = {a.name: a for a in node.attribute}
    for name, spec in schema.attributes.items():
        a = have.get(name)
        if a is None:
            if spec.required and not (node.op_type == "Pad" and name == "pads"):
                raise ModelFormatError(f"{_where(source, node, i)} lacks its required attribute '{name}'; the "
                                       "model is malformed, re-export it")
            continue
        if a.type != int(spec.type):
            raise ModelFormatError(f"{_where(source, node, i)} has attribute '{name}' of type {_type_name(a.type)} "
                                   f"where ONNX defines {_type_name(int(spec.type))}; the model is malformed, "
                                   "re-export it")


def _check_numeric(source: str, node: onnx.NodeProto, i: int, a: onnx.AttributeProto) -> None:
    bad = ""
    if a.type not in _NUMERIC_ATTRS:
        bad = f"of type {_type_name(a.type)}, not a number"
    else:
        try:
            v = helper.get_attribute_value(a)
            arr = numpy_helper.to_array(v) if isinstance(v, onnx.TensorProto) else np.asarray(v)
        except Exception:  # noqa: BLE001 — an undecodable tensor
            arr = None
        if arr is None or arr.dtype.kind not in "biuf":
            bad = "that is not a numeric value"
        elif arr.size == 0:
            bad = "with no value"
        elif arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
            bad = "with a non-finite value"
    if bad:
        raise ModelFormatError(f"{_where(source, node, i)} has attribute '{a.name}' {bad}; the model is malformed, "
                               "re-export it")


def _check_window(source: str, node: onnx.NodeProto, i: int) -> None:
    attrs = {a.name: list(a.ints) for a in node.attribute
             if a.type == onnx.AttributeProto.INTS and a.name in ("kernel_shape", "strides", "dilations", "pads")}
    ks = [len(v) for k, v in attrs.items() if k != "pads"]
    if "pads" in attrs and len(attrs["pads"]) % 2 == 0:
        ks.append(len(attrs["pads"]) // 2)
    if len(set(ks)) > 1 or ("pads" in attrs and len(attrs["pads"]) % 2):
        shown = ", ".join(f"{k} {v}" for k, v in attrs.items())
        raise ModelFormatError(f"{_where(source, node, i)} has window attributes of different ranks ({shown}); "
                               "the model is malformed, re-export it")
    for k, v in attrs.items():
        low = 0 if k == "pads" else 1
        if any(x < low for x in v):
            raise ModelFormatError(f"{_where(source, node, i)} has {k} {v}; each must be at least {low}, the model "
                                   "is malformed, re-export it")


def check_nodes(source: str, graph: onnx.GraphProto, opset: int) -> None:
    """Refuse (ModelFormatError) the first node that breaks one of the module docstring's rules."""
    for what, items in (("graph input", graph.input), ("graph output", graph.output),
                        ("initializer", graph.initializer)):
        for j, item in enumerate(items):
            if isinstance(item.name, bytes):
                raise ModelFormatError(f"{source}: {what} {j} has a name that is not UTF-8 text; the file is "
                                       "corrupt, re-export it")
    for i, node in enumerate(graph.node):
        texts = (node.op_type, node.name, node.domain, *node.input, *node.output)
        if any(isinstance(t, bytes) for t in texts):
            raise ModelFormatError(f"{source}: node {i} has a name, op type or tensor name that is not UTF-8 "
                                   "text; the file is corrupt, re-export it")
    if opset < 1 and any(n.domain in ("", "ai.onnx") for n in graph.node):
        raise ModelFormatError(f"{source}: the model uses ONNX operators but imports no version of their "
                               "operator set (opset_import); the model is malformed, re-export it")
    given = {vi.name for vi in graph.input} | {t.name for t in graph.initializer}
    produced: set[str] = set()
    for i, node in enumerate(graph.node):
        outs = [o for o in node.output if o]
        if not outs:
            raise ModelFormatError(f"{_where(source, node, i)} produces no tensor; the model is malformed, "
                                   "re-export it")
        for o in outs:
            if o in produced or o in given:
                raise ModelFormatError(f"{_where(source, node, i)} writes '{o}', which "
                                       f"{'another node' if o in produced else 'a graph input or initializer'} "
                                       "already provides; the model is malformed, re-export it")
            produced.add(o)
        schema = _schema(node, opset)
        if schema is None and node.op_type != "Constant" and not any(node.input):
            raise ModelFormatError(f"{_where(source, node, i)} reads no tensor; the model is malformed, re-export it")
        if schema is not None:
            _check_arity(source, node, i, schema)
            _check_attr_types(source, node, i, schema)
        for a in node.attribute:
            if schema is None or a.name not in schema.attributes:
                _check_numeric(source, node, i, a)
        if node.op_type in WINDOW_OPS:
            _check_window(source, node, i)


__all__ = ["check_nodes", "WINDOW_OPS"]
