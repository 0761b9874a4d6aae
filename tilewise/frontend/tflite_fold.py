"""Fold a TFLite model's constant shape arithmetic into constant tensors, before lowering.

Keras writes a Conv2DTranspose's output shape, and tf.reshape(x, [tf.shape(x)[0], -1]) its new
shape, as a small subgraph: SHAPE of the input → STRIDED_SLICE (the batch) → PACK with constants
(sometimes MUL / ADD / FLOOR_DIV of constants) → the TRANSPOSE_CONV's output_shape or the RESHAPE's
shape. Every input of such a subgraph is a constant or a static shape, so its value is known when
the model is compiled. `fold_constants` owns that: it evaluates, in operator order, every operator
whose outputs are non-quantized int32/int64 tensors and whose inputs are constants or values it has
already folded (SHAPE needs only its input's shape), with numpy and the semantics of LiteRT's
kernels (STRIDED_SLICE's begin / end / ellipsis / new-axis / shrink masks and offset as
strided_slice.cc and reference/strided_slice.h compute them; C++ truncating division where the
kernel divides), and returns the model with those operators removed and their outputs turned into
constant tensors (same indices and names). The TFLite file itself is not changed: LiteRT runs the
original, so validation compares against the real model.

Only integer shape arithmetic is folded: an operator with a quantized, float or 8/16-bit output is
never evaluated here (quantized activations are the network's, lowered as layers). A model with
nothing to fold is returned as the same object.

The batch: a Keras export's shape_signature marks the batch dimension -1 while its shape says 1,
and LiteRT (like TFLite Micro) runs the shape; SHAPE folds that shape, as everything else tilewise
compiles does. A SHAPE of a tensor with any other dynamic dimension (-1 in its shape, or in its
shape_signature beyond the batch) is refused, as is an operator of constants this module does not
implement, or one LiteRT would refuse (division by zero, an index out of range): one sentence
naming the operator and its output tensor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from ..errors import ModelFormatError, UnsupportedOpError
from .tflite import TfliteModel, TfliteOperator, TfliteTensor, op_where

#: the tensor types of shape arithmetic
INT_TYPES = ("int32", "int64")


class _Fold:
    """The values known so far and the operator being folded."""

    def __init__(self, model: TfliteModel, source: str) -> None:
        self.model = model
        self.source = source
        self.values: dict[int, np.ndarray] = {t.index: t.data for t in model.tensors if t.data is not None}
        self.op: TfliteOperator | None = None

    def where(self) -> str:
        assert self.op is not None
        return op_where(self.source, self.model, self.op)

    def bad(self, what: str, undefined: bool = False) -> ModelFormatError:
        """LiteRT refuses the operator too (its Prepare or Eval fails), or (`undefined`) computes
        no defined value for it (reads outside its inputs)."""
        how = "for which LiteRT's result is undefined" if undefined else "which LiteRT refuses too"
        return ModelFormatError(f"{self.where()} {what}, {how}; the model is malformed")

    def value(self, k: int) -> np.ndarray:
        assert self.op is not None
        if k >= len(self.op.inputs) or self.op.inputs[k] < 0:
            raise self.bad(f"has no input {k}")
        return self.values[self.op.inputs[k]]

    def ints(self, k: int) -> list[int]:
        return [int(v) for v in np.asarray(self.value(k)).reshape(-1)]

    def out_dtype(self, n: int = 0) -> str:
        assert self.op is not None
        return self.model.tensors[self.op.outputs[n]].dtype or "int32"

    def axis(self, axis: int, rank: int) -> int:
        if not -rank <= axis < rank:
            raise self.bad(f"has axis {axis} for a rank-{rank} value")
        return axis % rank


def _candidate(fold: _Fold, op: TfliteOperator, graph_outputs: set[int]) -> bool:
    """Does the operator compute integer shape arithmetic from known values?"""
    tensors = fold.model.tensors
    outs = [tensors[k] for k in op.outputs]
    if not outs or any(k in graph_outputs for k in op.outputs):
        return False
    if any(t.dtype not in INT_TYPES or t.quantized for t in outs):
        return False
    ins = [k for k in op.inputs if k >= 0]
    if op.name == "SHAPE":
        return len(ins) >= 1
    return bool(ins) and all(k in fold.values and tensors[k].dtype in INT_TYPES for k in ins)


def _static_shape(fold: _Fold, t: TfliteTensor) -> tuple[int, ...]:
    """The shape SHAPE folds; a dynamic dimension other than a signature's batch is refused."""
    sig = t.shape_signature
    dynamic = [f"dimension {d} is" for d, v in enumerate(t.shape) if v < 0]
    if sig and len(sig) != len(t.shape):
        dynamic.append("rank is")
    dynamic += [f"dimension {d} is" for d, v in enumerate(sig) if v < 0 and d > 0]
    if dynamic:
        raise UnsupportedOpError(
            f"{fold.where()} reads the shape of '{t.name}', whose {dynamic[0]} dynamic "
            f"(shape {list(t.shape)}, shape_signature {list(sig)}); tilewise compiles static shapes only — "
            "export the model with a fixed input size")
    return t.shape


# ---------------------------------------------------------------------------------------------
# the operators
# ---------------------------------------------------------------------------------------------

def _shape(fold: _Fold, op: TfliteOperator) -> list[np.ndarray]:
    x = fold.model.tensors[op.inputs[0]]
    return [np.asarray(_static_shape(fold, x), dtype=fold.out_dtype())]


def _trunc_div(a: int, b: int) -> int:
    """C++ integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _clamp(v: int, lo: int, hi: int) -> int:
    return hi if v > hi else lo if v < lo else v


def _slice_spec(x_shape: tuple[int, ...], begin: list[int], end: list[int], strides: list[int],
                o: dict) -> tuple[list[int], list[int], list[int], int, int, int, list[int]]:
    """strided_slice.cc BuildStridedSliceParams: ellipsis and new-axis masks expanded into the
    effective input shape and per-axis (start, stop, stride, begin / end / shrink masks)."""
    ell, new = int(o.get("EllipsisMask", 0)), int(o.get("NewAxisMask", 0))
    bmask, emask, smask = int(o.get("BeginMask", 0)), int(o.get("EndMask", 0)), int(o.get("ShrinkAxisMask", 0))
    count, rank = len(begin), len(x_shape)
    num_add = sum(1 for i in range(count) if not (ell >> i) & 1 and (new >> i) & 1)
    dims = rank + num_add
    eff_ell = eff_new = 0
    ell_start, expanded = dims, 0
    i = 0
    while i < dims:
        if (ell >> i) & 1:
            ell_start = i
            ell_end = max(i + 1, min(i + 1 + num_add + rank - count, dims))
            expanded = ell_end - ell_start - 1
            while i < ell_end:
                eff_ell |= 1 << i
                i += 1
            continue
        if (new >> (i - expanded)) & 1:
            eff_new |= 1 << i
        i += 1
    start, stop, step, shape = [0] * dims, [0] * dims, [1] * dims, [0] * dims
    b = e = s = 0
    added_ell = added_axes = 0
    for i in range(dims):
        if (eff_ell >> i) & 1:
            added_ell = max(0, i - ell_start)
            b, e = b | 1 << i, e | 1 << i
            shape[i] = x_shape[i - added_axes]
        elif (eff_new >> i) & 1:
            stop[i] = 1
            shape[i] = 1
            added_axes += 1
        elif i >= count + expanded:
            b, e = b | 1 << i, e | 1 << i
            shape[i] = x_shape[i - added_axes]
        else:
            j = i - added_ell
            start[i], stop[i], step[i] = begin[j], end[j], strides[j]
            b |= ((bmask >> j) & 1) << i
            e |= ((emask >> j) & 1) << i
            s |= ((smask >> j) & 1) << i
            shape[i] = x_shape[i - added_axes]
    return start, stop, step, b, e, s, shape


def _strided_slice(fold: _Fold, op: TfliteOperator) -> list[np.ndarray]:
    x = np.asarray(fold.value(0))
    begin, end, strides = fold.ints(1), fold.ints(2), fold.ints(3)
    if not len(begin) == len(end) == len(strides) or len(begin) > 31:
        raise fold.bad(f"has begin, end and strides of {len(begin)}, {len(end)} and {len(strides)} values")
    if any(v == 0 or v == -(1 << 31) for v in strides):
        raise fold.bad(f"has strides {strides}")
    o = op.options
    offset = bool(o.get("Offset", False))
    start, stop, step, bm, em, sm, shape = _slice_spec(x.shape, begin, end, strides, o)
    ranges, out_shape = [], []
    for i, size in enumerate(shape):
        # reference_ops::StartForAxis / EndForAxis
        a = start[i] + size if start[i] < 0 else start[i]
        a = _clamp(a, 0, size) if step[i] > 0 else _clamp(a, -1, size - 1)
        if (bm >> i) & 1:
            a = 0 if step[i] > 0 else size - 1
        if (sm >> i) & 1:
            ranges.append(range(a, a if a >= size else a + 1, step[i]))
            continue
        z = stop[i] + a if offset else stop[i]
        z = z + size if z < 0 else z
        z = _clamp(z, 0, size) if step[i] > 0 else _clamp(z, -1, size - 1)
        if (em >> i) & 1:
            z = size if step[i] > 0 else -1
        ranges.append(range(a, z, step[i]))
        # ResizeOutputTensor: the dimension as LiteRT sizes the output
        if offset:
            if i >= len(end):
                raise fold.bad(f"sizes output axis {i} from an end of {len(end)} values", undefined=True)
            n = end[i]
        else:
            n = z - a
        if (n < 0) != (step[i] < 0):
            n = 0
        elif step[i] < 0:
            n = _trunc_div(n + 1, step[i]) + 1
        else:
            n = 0 if n == 0 else (n - 1) // step[i] + 1
        out_shape.append(n)
    picked = x.reshape(shape)[np.ix_(*ranges)] if shape else x.reshape(())
    if picked.size != int(np.prod(out_shape, dtype=np.int64)):
        raise fold.bad(f"selects {picked.size} values of a {list(x.shape)} value for an output of shape {out_shape}",
                       undefined=True)
    return [picked.reshape(out_shape)]


def _slice(fold: _Fold, op: TfliteOperator) -> list[np.ndarray]:
    x = np.asarray(fold.value(0))
    begin, size = fold.ints(1), fold.ints(2)
    if len(begin) != x.ndim or len(size) != x.ndim:
        raise fold.bad(f"slices a {list(x.shape)} value with begin {begin} and size {size}")
    index = []
    for b, n, dim in zip(begin, size, x.shape):
        n = dim - b if n == -1 else n
        if b < 0 or n < 0 or b + n > dim:
            raise fold.bad(f"slices a {list(x.shape)} value with begin {begin} and size {size}")
        index.append(slice(b, b + n))
    return [x[tuple(index)]]


def _pack(fold: _Fold, op: TfliteOperator) -> list[np.ndarray]:
    xs = [np.asarray(fold.value(k)) for k in range(len(op.inputs))]
    if len({x.shape for x in xs}) != 1:
        raise fold.bad(f"packs values of shapes {[list(x.shape) for x in xs]}")
    axis = fold.axis(int(op.options.get("Axis", 0)), xs[0].ndim + 1)
    return [np.stack(xs, axis=axis).astype(fold.out_dtype())]


def _unpack(fold: _Fold, op: TfliteOperator) -> list[np.ndarray]:
    x = np.asarray(fold.value(0))
    axis = fold.axis(int(op.options.get("Axis", 0)), x.ndim)
    if x.shape[axis] != len(op.outputs):
        raise fold.bad(f"unpacks {x.shape[axis]} values into {len(op.outputs)} outputs")
    return [np.take(x, i, axis=axis) for i in range(x.shape[axis])]


def _concatenation(fold: _Fold, op: TfliteOperator) -> list[np.ndarray]:
    xs = [np.asarray(fold.value(k)) for k in range(len(op.inputs))]
    if int(op.options.get("FusedActivationFunction", 0)) != 0:
        raise fold.bad("has a fused activation on integer values")
    axis = fold.axis(int(op.options.get("Axis", 0)), xs[0].ndim)
    try:
        return [np.concatenate(xs, axis=axis).astype(fold.out_dtype())]
    except ValueError:
        raise fold.bad(f"concatenates values of shapes {[list(x.shape) for x in xs]}") from None


def _gather(fold: _Fold, op: TfliteOperator) -> list[np.ndarray]:
    x, idx = np.asarray(fold.value(0)), np.asarray(fold.value(1))
    if int(op.options.get("BatchDims", 0)) != 0:
        raise UnsupportedOpError(f"{fold.where()} gathers with batch_dims "
                                 f"{op.options.get('BatchDims')}; tilewise folds GATHER with batch_dims 0 only")
    axis = fold.axis(int(op.options.get("Axis", 0)), x.ndim)
    if idx.size and (idx.min() < 0 or idx.max() >= x.shape[axis]):
        raise fold.bad(f"gathers indices {idx.reshape(-1).tolist()} of an axis of {x.shape[axis]}")
    return [np.take(x, idx, axis=axis)]


def _new_shape(fold: _Fold, op: TfliteOperator, size: int) -> list[int]:
    """RESHAPE's shape as reshape.cc GetOutputShape takes it: a 1-D int32 shape input, else the
    options' new_shape ([0]: a scalar, as legacy files write it)."""
    if len(op.inputs) > 1 and op.inputs[1] >= 0 and fold.value(1).ndim == 1 and fold.value(1).dtype == np.int32:
        shape = fold.ints(1)
    else:
        shape = [int(d) for d in op.options.get("NewShape") or []]
        shape = [] if shape == [0] else shape
    resolved = resolve_shape(shape, size)
    if resolved is None:
        raise fold.bad(f"reshapes {size} values into {shape}")
    return resolved


def resolve_shape(shape: list[int], size: int) -> list[int] | None:
    """RESHAPE's new shape for `size` values with its one -1 resolved; None when none fits."""
    shape = list(shape)
    known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
    if shape.count(-1) == 1 and known > 0 and size % known == 0:
        shape[shape.index(-1)] = size // known
    if shape.count(-1) or any(d < 0 for d in shape) or int(np.prod(shape, dtype=np.int64)) != size:
        return None
    return shape


def _reshape(fold: _Fold, op: TfliteOperator) -> list[np.ndarray]:
    x = np.asarray(fold.value(0))
    return [x.reshape(_new_shape(fold, op, x.size))]


def _squeeze(fold: _Fold, op: TfliteOperator) -> list[np.ndarray]:
    x = np.asarray(fold.value(0))
    dims = [fold.axis(int(d), x.ndim) for d in op.options.get("SqueezeDims") or []]
    if any(x.shape[d] != 1 for d in dims):
        raise fold.bad(f"squeezes dimensions {dims} of a {list(x.shape)} value")
    return [np.squeeze(x, axis=tuple(dims)) if dims else np.squeeze(x)]


def _expand_dims(fold: _Fold, op: TfliteOperator) -> list[np.ndarray]:
    x = np.asarray(fold.value(0))
    axis = fold.ints(1)
    if len(axis) != 1:
        raise fold.bad(f"has axis {axis}")
    return [np.expand_dims(x, fold.axis(axis[0], x.ndim + 1))]


def _cast(fold: _Fold, op: TfliteOperator) -> list[np.ndarray]:
    return [np.asarray(fold.value(0)).astype(fold.out_dtype())]   # static_cast: int64 -> int32 wraps


def _activation(fold: _Fold, op: TfliteOperator, y: np.ndarray) -> np.ndarray:
    """CalculateActivationRange of an integer ADD / SUB / MUL."""
    act = int(op.options.get("FusedActivationFunction", 0))
    ranges = {0: None, 1: (0, None), 2: (-1, 1), 3: (0, 6)}
    if act not in ranges:
        raise fold.bad(f"has the fused activation {act} on integer values")
    lo_hi = ranges[act]
    return y if lo_hi is None else np.clip(y, lo_hi[0], lo_hi[1]).astype(y.dtype)


def _binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray], divides: bool = False,
            fused: bool = False) -> Callable[[_Fold, TfliteOperator], list[np.ndarray]]:
    def fold_op(fold: _Fold, op: TfliteOperator) -> list[np.ndarray]:
        dt = fold.out_dtype()
        a, b = (np.asarray(fold.value(k)).astype(dt) for k in (0, 1))
        if divides and (b == 0).any():
            raise fold.bad("divides by zero")
        try:
            np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            raise fold.bad(f"has values of shapes {list(a.shape)} and {list(b.shape)} that do not broadcast") from None
        with np.errstate(over="ignore"):
            y = np.asarray(fn(a, b)).astype(dt)
        return [_activation(fold, op, y) if fused else y]
    return fold_op


def _floor_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """floor_div.cc: std::floor(double(a) / double(b))."""
    return np.floor(a.astype(np.float64) / b.astype(np.float64))


def _reduce(fn: Callable[..., np.ndarray]) -> Callable[[_Fold, TfliteOperator], list[np.ndarray]]:
    def fold_op(fold: _Fold, op: TfliteOperator) -> list[np.ndarray]:
        x = np.asarray(fold.value(0))
        axes = tuple(sorted({fold.axis(a, x.ndim) for a in fold.ints(1)}))
        with np.errstate(over="ignore"):
            y = fn(x, axis=axes, keepdims=bool(op.options.get("KeepDims", False)), dtype=x.dtype)
        return [np.asarray(y).astype(fold.out_dtype())]
    return fold_op


FOLDERS: dict[str, Callable[[_Fold, TfliteOperator], list[np.ndarray]]] = {
    "SHAPE": _shape,
    "STRIDED_SLICE": _strided_slice,
    "SLICE": _slice,
    "PACK": _pack,
    "UNPACK": _unpack,
    "CONCATENATION": _concatenation,
    "GATHER": _gather,
    "RESHAPE": _reshape,
    "SQUEEZE": _squeeze,
    "EXPAND_DIMS": _expand_dims,
    "CAST": _cast,
    "ADD": _binary(np.add, fused=True),
    "SUB": _binary(np.subtract, fused=True),
    "MUL": _binary(np.multiply, fused=True),
    "FLOOR_DIV": _binary(_floor_div, divides=True),
    "FLOOR_MOD": _binary(np.mod, divides=True),
    "MAXIMUM": _binary(np.maximum),
    "MINIMUM": _binary(np.minimum),
    "SUM": _reduce(np.sum),
    "REDUCE_PROD": _reduce(np.prod),
}


def fold_constants(model: TfliteModel, source: str) -> TfliteModel:
    """The model with its constant shape arithmetic folded (module docstring); `model` itself when
    there is nothing to fold."""
    fold = _Fold(model, source)
    graph_outputs = set(model.outputs)
    folded: dict[int, np.ndarray] = {}
    kept: list[TfliteOperator] = []
    for op in model.operators:
        if not _candidate(fold, op, graph_outputs):
            kept.append(op)
            continue
        fold.op = op
        fn = FOLDERS.get(op.name)
        if fn is None:
            raise UnsupportedOpError(
                f"{fold.where()} computes integer shape arithmetic from constants, which tilewise folds "
                f"only for {', '.join(sorted(FOLDERS))}; export the model with its shapes folded "
                "(e.g. a fixed batch size)")
        try:
            results = fn(fold, op)
        except (IndexError, ValueError, OverflowError) as e:
            raise fold.bad(f"cannot be computed on its inputs ({e})", undefined=True) from None
        for k, value in zip(op.outputs, results):
            value = np.array(value, dtype=model.tensors[k].dtype or "int32", order="C")   # 0-d stays 0-d
            fold.values[k] = folded[k] = value
    if not folded:
        return model
    tensors = tuple(replace(t, data=folded[t.index], shape=tuple(folded[t.index].shape))
                    if t.index in folded else t for t in model.tensors)
    return replace(model, tensors=tensors, operators=tuple(kept))


__all__ = ["fold_constants", "resolve_shape", "FOLDERS", "INT_TYPES"]
