"""Test helpers around TFLite flatbuffers: the builder itself is tilewise/quantize/tflite_build.py
(re-exported here for the tests), plus LiteRT runners, golden-vs-LiteRT comparison and a few models.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tilewise.quantize.tflite_build import ACT, SAME, VALID, ModelBuilder

__all__ = ["ACT", "SAME", "VALID", "ModelBuilder", "litert_interpreter", "litert_invoke", "litert_run",
           "random_inputs", "compare_with_litert", "hard_swish_model", "float_conv_model", "keras_shape_input"]


def litert_interpreter(path: str | Path, all_tensors: bool = False) -> Any:
    """A LiteRT interpreter with the reference kernels (BUILTIN_REF), tensors allocated."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    it = Interpreter(model_path=str(path), experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                     experimental_preserve_all_tensors=all_tensors)
    it.allocate_tensors()
    return it


def litert_invoke(it: Any, inputs: Sequence[np.ndarray], all_tensors: bool = False) -> dict[int, np.ndarray]:
    """Run once from the reset state (a recurrent op's variable tensors, an LSTM's); returns the
    output (or every readable) tensor by TFLite tensor index."""
    it.reset_all_variables()
    for d, x in zip(it.get_input_details(), inputs):
        it.set_tensor(d["index"], np.asarray(x, dtype=d["dtype"]).reshape(d["shape"]))
    it.invoke()
    if all_tensors:
        out = {}
        for d in it.get_tensor_details():
            try:
                out[d["index"]] = it.get_tensor(d["index"]).copy()
            except ValueError:
                pass
        return out
    return {d["index"]: it.get_tensor(d["index"]).copy() for d in it.get_output_details()}


def litert_run(path: str | Path, inputs: Sequence[np.ndarray], all_tensors: bool = False) -> dict[int, np.ndarray]:
    return litert_invoke(litert_interpreter(path, all_tensors), inputs, all_tensors)


def random_inputs(shapes_dtypes: Sequence[tuple[tuple[int, ...], str]], n: int, seed: int = 0,
                  float_range: float = 8.0) -> list[list[np.ndarray]]:
    """n random input sets plus the all-min and all-max sets (integer inputs span their full range)."""
    rng = np.random.RandomState(seed)
    sets: list[list[np.ndarray]] = []
    for k in range(n + 2):
        one = []
        for shape, dtype in shapes_dtypes:
            if dtype == "float32":
                v = rng.uniform(-float_range, float_range, size=shape) if k < n else \
                    np.full(shape, -float_range if k == n else float_range)
                one.append(v.astype(np.float32))
            else:
                info = np.iinfo(np.dtype(dtype))
                v = rng.randint(info.min, int(info.max) + 1, size=shape) if k < n else \
                    np.full(shape, info.min if k == n else info.max)
                one.append(v.astype(dtype))
        sets.append(one)
    return sets


def compare_with_litert(path: str | Path, n: int = 50, seed: int = 0, all_tensors: bool = False,
                        float_range: float = 8.0) -> tuple[int, int]:
    """(differing elements, compared elements) of golden vs LiteRT BUILTIN_REF over n random inputs plus
    the all-min and all-max inputs; with all_tensors every IR tensor that has a TFLite twin is compared."""
    from tilewise.frontend import load_model
    from tilewise.golden import run_graph
    from tilewise.ir.layout import model_input

    graph = load_model(path)
    index = graph.meta["tflite_tensor_index"]
    specs = [(t.shape, t.dtype) for t in graph.input_tensors()]
    it = litert_interpreter(path, all_tensors)
    bad = total = 0
    for inputs in random_inputs(specs, n, seed, float_range):
        ref = litert_invoke(it, [model_input(graph.meta, x) for x in inputs], all_tensors)
        got = run_graph(graph, inputs, keep_all=all_tensors)
        names = [o for nd in graph.nodes for o in nd.outputs if o in index] if all_tensors else list(graph.outputs)
        for name in names:
            r = ref[index[name]]
            g = np.asarray(got[name]).reshape(r.shape)
            if r.dtype.kind == "f":
                diff = int((r.view(np.uint32) != g.astype(np.float32).view(np.uint32)).sum())
            else:
                diff = int((r.astype(np.int64) != g.astype(np.int64)).sum())
            bad += diff
            total += r.size
    return bad, total


def hard_swish_model(path: Path) -> Path:
    """An int8 HARD_SWISH model (output tensor 'hswish_out'): an op tilewise refuses (TANH was
    the example until the unrolled GRU needed it, issue 28)."""
    b = ModelBuilder()
    x = b.input("x", (1, 4, 4, 2), "int8", scale=0.1, zero_point=0)
    z = b.tensor("hswish_out", (1, 4, 4, 2), "int8", scale=1 / 128, zero_point=0)
    b.op("HARD_SWISH", [x], [z])
    b.output(z)
    return b.save(path)


def float_conv_model(path: Path) -> Path:
    """A valid float32 CONV_2D model (output tensor 'conv_out'): tilewise must reject it."""
    b = ModelBuilder()
    x = b.input("x", (1, 5, 5, 2), "float32")
    w = b.const("w", np.ones((3, 3, 3, 2), dtype=np.float32), "float32")
    bias = b.const("b", np.zeros(3, dtype=np.float32), "float32")
    y = b.tensor("conv_out", (1, 5, 5, 3), "float32")
    b.op("CONV_2D", [x, w, bias], [y], "Conv2DOptions", Padding=SAME, StrideW=1, StrideH=1,
         FusedActivationFunction=0, DilationWFactor=1, DilationHFactor=1)
    b.output(y)
    return b.save(path)



def keras_shape_input(b: ModelBuilder, consumer: int, k: int, of: int, mul: tuple[int, int] | None = None) -> int:
    """Replace input `k` of operator `consumer` — a constant int32 shape such as TRANSPOSE_CONV's
    output_shape or RESHAPE's shape, whose first value is the batch — by the subgraph Keras writes
    for it: SHAPE(`of`) → STRIDED_SLICE (the batch, shrunk to a scalar) → PACK with the other values
    as int32 scalar constants. With `mul` = (axis, factor), the value at `axis` is computed too:
    STRIDED_SLICE(shape)[axis] → MUL by `factor` (a Conv2DTranspose's height from its input's and
    the stride). The new operators go before `consumer`, the batch of the graph's inputs and
    outputs becomes -1 in their shape_signature (as a Keras model with batch None is exported), and
    the constant stays in the file unused. Returns the packed tensor."""
    value = np.frombuffer(b.buffers[b.tensors[b.ops[consumer].inputs[k]].buffer], np.int32)
    first = len(b.ops)
    src = b.tensors[of]
    shape = b.tensor(f"{src.name}/Shape", (len(src.shape),), "int32")
    b.op("SHAPE", [of], [shape], "ShapeOptions", OutType=2)

    def element(axis: int, name: str) -> int:
        one = [b.const(f"{name}/{v}", np.array([a], np.int32), "int32")
               for v, a in (("begin", axis), ("end", axis + 1), ("strides", 1))]
        out = b.tensor(name, (), "int32")
        b.op("STRIDED_SLICE", [shape, *one], [out], "StridedSliceOptions", ShrinkAxisMask=1)
        return out

    parts = [element(0, f"{src.name}/strided_slice")]
    for axis, v in enumerate(value[1:], start=1):
        if mul is not None and mul[0] == axis:
            assert src.shape[axis] * mul[1] == v, (src.shape, mul, value)
            factor = b.const(f"{src.name}/mul_{axis}/y", np.array(mul[1], np.int32), "int32")
            parts.append(b.tensor(f"{src.name}/mul_{axis}", (), "int32"))
            b.op("MUL", [element(axis, f"{src.name}/strided_slice_{axis}"), factor], [parts[-1]], "MulOptions",
                 FusedActivationFunction=0)
        else:
            parts.append(b.const(f"{src.name}/stack/{axis}", np.array(v, np.int32), "int32"))
    packed = b.tensor(f"{src.name}/stack", (len(value),), "int32")
    b.op("PACK", parts, [packed], "PackOptions", ValuesCount=len(parts), Axis=0)
    new = b.ops[first:]
    del b.ops[first:]
    b.ops[consumer:consumer] = new
    b.ops[consumer + len(new)].inputs[k] = packed
    for i in b.inputs + b.outputs:
        b.tensors[i].shape_signature = (-1, *b.tensors[i].shape[1:])
    return packed
