"""The user's own data for `tilewise validate --data/--expected/--labels`: read, checked, turned
into the network's integer inputs and outputs in the IR's layout.

Files: a .npy (one array), a .npz (its single array, or the array keyed by the model input's /
output's name; several other keys are an error naming them), or a directory of .npy files, one
input (or one output) each, read in sorted file-name order and stacked. Only .npy files are read
from a directory (images are not decoded: save them with numpy.save).

Shapes: N inputs of the model's input shape, with or without its batch dimension of 1, either in
the IR's NHWC layout or in the model's own layout — NCHW for an ONNX model (graph.meta
"onnx_inputs" to_ir_perm), or a TFLite model whose input transpose the frontend folded
(ir/layout.py input_perm). When both layouts fit the array (e.g. a 3×3×3 input), the model's own
layout is taken unless `layout="nhwc"` says otherwise. Outputs (--expected) likewise, with the
model's output shape and layout.

Values: integer arrays are the quantized values themselves, range-checked against the tensor's
dtype (int8, uint8, int16); float arrays are quantized with the model input's scale and zero point
exactly as the model's own runtime does it:
- ONNX: onnxruntime's QuantizeLinear (MLAS): q = saturate(rint(float32(x) / float32(scale)) + zp),
  float32 division, round half to even;
- TFLite: LiteRT's QUANTIZE reference kernel (reference_ops::AffineQuantize):
  q = clamp(round(float32(x) / float32(scale)) + zp) with std::round, round half away from zero.
NaN or infinite values are refused. Float expected outputs are kept as floats (compared with our
dequantized outputs); integer ones are range-checked like inputs. Labels are integer class indices
[N] (or [N, 1]) in [0, classes).

Every malformed case is a `TilewiseError`: one sentence naming the file and what to do (exit 2).
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TilewiseError
from ..ir.graph import Graph
from ..ir.io_quant import stated
from ..ir.layer import LayerGraph
from ..ir.layout import input_perm, model_input_shape
from ..ir.tensor import dtype_range, np_dtype

HALF_EVEN = "round half to even (onnxruntime QuantizeLinear)"
HALF_AWAY = "round half away from zero (LiteRT QUANTIZE, std::round)"


@dataclass(frozen=True)
class EdgeSpec:
    """One network input or output as the user's files may hold it."""

    names: tuple[str, ...]          # names an .npz key may carry (model's, then IR's)
    ir_shape: tuple[int, ...]       # NHWC, batch included
    model_shape: tuple[int, ...]    # the model's own layout
    to_ir_perm: tuple[int, ...] | None   # ir = model.transpose(perm); None: same layout
    dtype: str                      # the IR's integer dtype
    scale: float | None
    zero_point: int
    rounding: str                   # HALF_EVEN or HALF_AWAY
    model_layout: str               # "NCHW", "NHWC", ...: how the model lays the tensor out
    #: integer codes in a float or wide container (integer exports: NEMO, QuantLab, Deeploy):
    #: float values are taken as the codes themselves (integral, range-checked), not quantized
    codes: bool = False


@dataclass(frozen=True, eq=False)
class UserArray:
    """An array read from the user's file(s), before interpretation."""

    array: np.ndarray
    source: str        # file or directory as given


def _quant(lg: LayerGraph, name: str) -> tuple[float | None, int]:
    said = stated(lg.meta, name)   # the real values an integer export states for its codes
    if said is not None:
        return said.scale, said.zero_point
    q = lg.tensors[name].quant
    if q is None or not q.scale:
        return None, 0
    return float(q.scale[0]), q.zp


def _layout_name(perm: tuple[int, ...] | None, rank: int) -> str:
    if perm is None or perm == tuple(range(rank)):
        return "NHWC" if rank == 4 else "as the IR"
    return "NCHW" if tuple(perm) == (0, 2, 3, 1) else f"model order (to IR: transpose {perm})"


def integer_export(graph: Graph) -> bool:
    """The graph is an integer export (NEMO, QuantLab, Deeploy): its tensors hold integer codes,
    in float32 or wide integer containers where the format needs one."""
    from ..frontend.onnx_lower import INTEGER_STYLES

    return graph.meta.get("format") == "onnx" and graph.meta.get("onnx_style") in INTEGER_STYLES


def container_inputs(graph: Graph) -> list[dict[str, Any]]:
    """The onnx_inputs entries (frontend/onnx_lower.py) of the inputs whose ONNX container
    (float32, or an integer wider than the codes) does not say the codes' type: the input dtype
    option (`load_model(input_dtypes=…)`) gives it, or validate infers it from the data. An input
    whose real values the model states (ir/io_quant.py) is not one: its codes are uint8 (their
    zero point's type) and float data are real values, quantized with the stated parameters."""
    from ..frontend.onnx_lower import WIDE_CONTAINERS

    if not integer_export(graph):
        return []
    return [e for e in graph.meta.get("onnx_inputs", ())
            if (e["onnx_dtype"] == "float32" or e["onnx_dtype"] in WIDE_CONTAINERS)
            and stated(graph.meta, e["ir"]) is None]


def _input_spec(graph: Graph, lg: LayerGraph, k: int) -> EdgeSpec:
    name = lg.inputs[k]
    t = lg.tensors[name]
    scale, zp = _quant(lg, name)
    if graph.meta.get("format") == "onnx":
        e = next((e for e in graph.meta.get("onnx_inputs", ()) if e["ir"] == name), None)
        if e is not None:
            perm = tuple(int(v) for v in e["to_ir_perm"])
            codes = any(c["ir"] == name for c in container_inputs(graph))
            if (e.get("onnx_dtype") == "float32" and e.get("scale") is not None and not codes
                    and stated(lg.meta, name) is None):
                scale, zp = float(e["scale"]), int(e["zero_point"])
            return EdgeSpec((e["onnx"], name), tuple(t.shape), tuple(int(d) for d in e["onnx_shape"]),
                            perm, t.dtype, scale, zp, HALF_EVEN, _layout_name(perm, len(perm)),
                            codes)
        return EdgeSpec((name,), tuple(t.shape), tuple(t.shape), None, t.dtype, scale, zp,
                        HALF_EVEN, _layout_name(None, len(t.shape)))
    perm = (input_perm(lg.meta) or input_perm(graph.meta)) if k == 0 else None
    return EdgeSpec((name,), tuple(t.shape), model_input_shape({"input_perm": perm}, tuple(t.shape)),
                    perm, t.dtype, scale, zp, HALF_AWAY, _layout_name(perm, len(t.shape)))


def _output_spec(graph: Graph, lg: LayerGraph, k: int) -> EdgeSpec:
    name = lg.outputs[k]
    t = lg.tensors[name]
    scale, zp = _quant(lg, name)
    codes = integer_export(graph) and stated(lg.meta, name) is None
    e = next((e for e in graph.meta.get("onnx_outputs", ()) if e["ir"] == name), None)
    if e is not None:
        perm = tuple(int(v) for v in e["to_ir_perm"])
        return EdgeSpec((e["onnx"], name), tuple(t.shape), tuple(int(d) for d in e["onnx_shape"]),
                        perm, t.dtype, scale, zp, HALF_EVEN, _layout_name(perm, len(perm)), codes)
    return EdgeSpec((name,), tuple(t.shape), tuple(t.shape), None, t.dtype, scale, zp,
                    HALF_AWAY if graph.meta.get("format") == "tflite" else HALF_EVEN,
                    _layout_name(None, len(t.shape)), codes)


def input_specs(graph: Graph, lg: LayerGraph) -> list[EdgeSpec]:
    """The network inputs as the user may give them, in the graph's order."""
    return [_input_spec(graph, lg, k) for k in range(len(lg.inputs))]


def output_specs(graph: Graph, lg: LayerGraph) -> list[EdgeSpec]:
    """The network outputs (the tensors validate compares) as the user's expected outputs may
    hold them, in the graph's order."""
    return [_output_spec(graph, lg, k) for k in range(len(lg.outputs))]


def input_spec(graph: Graph, lg: LayerGraph) -> EdgeSpec:
    """The (first) network input as the user may give it."""
    return _input_spec(graph, lg, 0)


def output_spec(graph: Graph, lg: LayerGraph) -> EdgeSpec:
    """The (first) network output as the user's expected outputs may hold it."""
    return _output_spec(graph, lg, 0)


# -- reading files -------------------------------------------------------------------------------

def _load_npy(path: Path, what: str) -> np.ndarray:
    try:
        arr = np.load(path, allow_pickle=False)
    except Exception as e:   # noqa: BLE001 — any failure to parse the file is the user's file
        raise TilewiseError(f"{path}: cannot read {what} as a .npy array ({type(e).__name__}: "
                            f"{str(e).splitlines()[0] if str(e) else 'unreadable'}); write it with "
                            f"numpy.save") from None
    if not isinstance(arr, np.ndarray):
        raise TilewiseError(f"{path}: holds no single array; write {what} with numpy.save")
    return arr


def _load_npz(path: Path, what: str, names: tuple[str, ...]) -> np.ndarray:
    try:
        with np.load(path, allow_pickle=False) as z:
            keys = list(z.keys())
            if not keys:
                raise TilewiseError(f"{path}: the .npz holds no arrays; write {what} with "
                                    f"numpy.savez")
            key = keys[0] if len(keys) == 1 else next((n for n in names if n in keys), None)
            if key is None:
                raise TilewiseError(
                    f"{path}: the .npz holds several arrays ({', '.join(sorted(keys))}) and none "
                    f"is named like the model's tensor ({' or '.join(repr(n) for n in names)}); "
                    f"keep one array in the file or name it so")
            return np.asarray(z[key])
    except TilewiseError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
        raise TilewiseError(f"{path}: cannot read {what} as a .npz archive ({type(e).__name__}: "
                            f"{str(e).splitlines()[0] if str(e) else 'unreadable'}); write it with "
                            f"numpy.savez") from None


def read_array(path: str | Path, what: str, names: tuple[str, ...] = ()) -> UserArray:
    """The array of a .npy / .npz file, or the stacked .npy files of a directory (sorted)."""
    p = Path(path)
    if not p.exists():
        raise TilewiseError(f"{path}: no such file or directory (give the {what} as a .npy, a .npz "
                            f"or a directory of .npy files)")
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.suffix.lower() == ".npy" and f.is_file())
        if not files:
            raise TilewiseError(f"{path}: the directory holds no .npy files (tilewise reads one .npy "
                                f"per {what.rstrip('s')} from a directory, in sorted order; images "
                                f"are not decoded: save them with numpy.save)")
        arrays = [_load_npy(f, what) for f in files]
        shapes = {a.shape for a in arrays}
        if len(shapes) > 1:
            odd, oa = next((f, a) for f, a in zip(files, arrays) if a.shape != arrays[0].shape)
            raise TilewiseError(f"{odd}: shape {oa.shape} differs from "
                                f"{files[0].name}'s {arrays[0].shape}; every .npy of {path} must "
                                f"hold one {what.rstrip('s')} of the same shape")
        kinds = {a.dtype.kind for a in arrays}
        if len(kinds) > 1:
            raise TilewiseError(f"{path}: the .npy files mix integer and float arrays; give all "
                                f"{what} in one dtype")
        return UserArray(np.stack(arrays), str(path))
    if not p.is_file():   # a FIFO, socket or device: reading it would block or never end
        raise TilewiseError(f"{path}: is not a regular file (a FIFO, socket or device); give the "
                            f"{what} as a .npy, a .npz or a directory of .npy files")
    suffix = p.suffix.lower()
    if suffix == ".npz":
        return UserArray(_load_npz(p, what, names), str(path))
    if suffix == ".npy":
        return UserArray(_load_npy(p, what), str(path))
    raise TilewiseError(f"{path}: tilewise reads {what} from .npy, .npz or a directory of .npy "
                        f"files, not '{p.suffix or p.name}' files; convert it with numpy.save")


def _npz_arrays(path: Path, what: str) -> list[tuple[str, np.ndarray]]:
    """Every (key, array) of a .npz, in the file's order."""
    try:
        with np.load(path, allow_pickle=False) as z:
            items = [(k, np.asarray(z[k])) for k in z.keys()]
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
        raise TilewiseError(f"{path}: cannot read {what} as a .npz archive ({type(e).__name__}: "
                            f"{str(e).splitlines()[0] if str(e) else 'unreadable'}); write it with "
                            f"numpy.savez") from None
    if not items:
        raise TilewiseError(f"{path}: the .npz holds no arrays; write {what} with numpy.savez")
    return items


@dataclass(frozen=True, eq=False)
class InputOrder:
    """What an exporter's inputs.npz may hold, array by array: the model's graph.input in order —
    (name, None) for a real input, (name, its initializer) for an entry an initializer backs (old
    exports list weights there) — and the initializers graph.input does not list (Deeploy's
    inputs.npz holds the weights after the inputs)."""

    listed: tuple[tuple[str, np.ndarray | None], ...]
    others: tuple[tuple[str, np.ndarray], ...] = ()


def onnx_input_order(model: str | Path) -> InputOrder:
    """The InputOrder of an ONNX model file."""
    from onnx import numpy_helper

    from ..frontend.onnx_model import decode_model

    g = decode_model(Path(model).read_bytes(), str(model)).graph
    inits = {t.name: t for t in g.initializer}
    listed = tuple((vi.name, numpy_helper.to_array(inits[vi.name]) if vi.name in inits else None)
                   for vi in g.input)
    names = {vi.name for vi in g.input}
    return InputOrder(listed, tuple((t.name, numpy_helper.to_array(t)) for t in g.initializer
                                    if t.name not in names))


def read_arrays(path: str | Path, what: str, specs: list[EdgeSpec],
                order: InputOrder | None = None) -> tuple[list[UserArray], list[str]]:
    """One UserArray per tensor of `specs` (the network's inputs or outputs, in order) from a
    file, and notes on arrays skipped. A .npy or a directory holds the one tensor of a network
    with one; a .npz holds one array per tensor, keyed by the tensor's name (ONNX or IR) or in
    the tensors' order. For inputs, `order` (InputOrder) names the model's constants an exporter
    may list among them (Deeploy's inputs.npz: the weights after the inputs, graph.input's
    initializer-backed entries): an array equal to one of them is that constant, the others are
    the inputs in graph.input's order, and any array beyond the inputs must be a constant of its
    shape; constants are skipped, a note saying whether each equals the model's. Any other count
    of arrays is one sentence."""
    p = Path(path)
    if len(specs) == 1 and (p.suffix.lower() != ".npz" or not p.is_file()):
        return [read_array(path, what, specs[0].names)], []
    if p.suffix.lower() != ".npz" or not p.is_file():
        if not p.exists():
            read_array(path, what)   # the missing-file sentence
        names = ", ".join(repr(sp.names[0]) for sp in specs)
        raise TilewiseError(f"{path}: the model has {len(specs)} {what.split()[-1]} ({names}); give "
                            f"them as one .npz with one array per tensor, keyed by name or in order")
    items = _npz_arrays(p, what)
    keys = [k for k, _ in items]
    arrays = dict(items)
    if len(items) == 1 and len(specs) == 1:
        return [UserArray(items[0][1], str(path))], []
    named = [next((n for n in sp.names if n in arrays), None) for sp in specs]
    if all(n is not None for n in named):
        return [UserArray(arrays[n], f"{path}:{n}") for n in named], []
    order = order or InputOrder(tuple((sp.names[0], None) for sp in specs))
    wanted = ", ".join(repr(sp.names[0]) for sp in specs)

    def wrong(why: str) -> TilewiseError:
        several = f"several arrays ({', '.join(keys)})" if len(keys) > 1 else f"the array {keys[0]}"
        return TilewiseError(f"{path}: the .npz holds {several} and they are not the model's "
                             f"{len(specs)} {what.split()[-1]} ({wanted}) by name or by order "
                             f"({why}); key each array by its tensor's name or give one per "
                             f"tensor, in order")

    real = [name for name, const in order.listed if const is None]
    consts = [(n, c) for n, c in order.listed if c is not None] + list(order.others)
    used: set[str] = set()
    notes: list[str] = []

    def constant(key: str, name: str, const: np.ndarray) -> None:
        arr = arrays[key]
        used.add(name)
        differ = int((np.asarray(arr, np.float64) != np.asarray(const, np.float64)).sum())
        notes.append(f"{path}: '{key}' is the model's constant '{name}' "
                     + ("(equal to the model's; skipped)" if not differ else
                        f"({differ} of {arr.size} values differ from the model's; skipped — "
                        f"the model's own are used)"))

    # an array equal to one of the model's constants is that constant; the others are the inputs
    # in graph.input's order, any further ones constants of their shape
    rest = []
    for key in keys:
        arr = arrays[key]
        same = next(((n, c) for n, c in consts if n not in used and c.shape == arr.shape
                     and np.array_equal(c, arr)), None)
        if same is not None:
            constant(key, *same)
        else:
            rest.append(key)
    if len(real) != len(specs) or len(rest) < len(real):
        raise wrong(f"{len(keys)} arrays for {len(specs)} tensors"
                    + (f" and {len(consts)} constants" if consts else ""))
    if len(rest) > len(real) and not consts:
        raise wrong(f"{len(keys)} arrays for {len(specs)} tensors")
    for key in rest[len(real):]:
        arr = arrays[key]
        same = next(((n, c) for n, c in consts if n not in used and c.shape == arr.shape), None)
        if same is None:
            raise wrong(f"'{key}' of shape {_fmt(arr.shape)} is neither an input nor a constant "
                        f"of the model")
        constant(key, *same)
    return [UserArray(arrays[k], f"{path}:{k}") for k in rest[:len(real)]], notes


def infer_code_dtype(values: np.ndarray) -> str:
    """The narrowest of int8, uint8, int16, int32 that holds every value: uint8 when none is
    negative and all fit 8 bits unsigned, int8 when some are negative and all fit 8 bits signed,
    else int16 or int32."""
    lo, hi = int(values.min()), int(values.max())
    if lo >= 0 and hi <= 255:
        return "uint8"
    for dt in ("int8", "int16", "int32"):
        a, b = dtype_range(dt)
        if a <= lo and hi <= b:
            return dt
    raise TilewiseError(f"input codes span [{lo}, {hi}], beyond int32")


def integral_codes(arr: np.ndarray, src: str, what: str) -> np.ndarray:
    """A float array of integer codes as int64; any non-integer value is one sentence."""
    bad = ~np.isfinite(arr)
    if bad.any():
        first = tuple(int(v) for v in np.argwhere(bad)[0])
        raise TilewiseError(f"{src}: {what} hold {int(bad.sum())} NaN or infinite values (the first "
                            f"at index {first}); give the integer codes")
    frac = arr != np.round(arr)
    if frac.any():
        first = tuple(int(v) for v in np.argwhere(frac)[0])
        raise TilewiseError(f"{src}: {what} hold non-integer values (e.g. {arr[first]!r} at index "
                            f"{first}) where the model takes integer codes; give the codes "
                            f"themselves (integers, or floats with integer values)")
    return arr.astype(np.int64)


# -- interpreting arrays -------------------------------------------------------------------------

def _candidates(spec: EdgeSpec, layout: str) -> list[tuple[str, tuple[int, ...], tuple[int, ...] | None]]:
    """(layout label, full shape with batch, perm to IR) the array may be in."""
    ir = ("NHWC" if len(spec.ir_shape) == 4 else "IR layout", spec.ir_shape, None)
    model = (f"{spec.model_layout}, the model's layout", spec.model_shape, spec.to_ir_perm)
    same = spec.to_ir_perm is None or spec.to_ir_perm == tuple(range(len(spec.ir_shape)))
    if same:
        return [(f"{ir[0]}, the model's layout" if len(spec.ir_shape) == 4 else "the model's layout",
                 spec.ir_shape, None)]
    if layout == "nhwc":
        return [ir]
    if layout == "model":
        return [model]
    return [model, ir]


def _per_input_shapes(full: tuple[int, ...]) -> list[tuple[int, ...]]:
    return [full, full[1:]] if full and full[0] == 1 else [full]


def _fmt(shape: tuple[int, ...]) -> str:
    return "×".join(str(d) for d in shape) if shape else "scalar"


def to_ir(ua: UserArray, spec: EdgeSpec, what: str, layout: str = "auto",
          keep_float: bool = False) -> tuple[np.ndarray, dict[str, Any]]:
    """[N, *ir_shape] integer IR values (floats quantized), or — with keep_float — float values for
    float data; plus a description of how the data was read (the `metrics.data` entry)."""
    arr, src = ua.array, ua.source
    if arr.dtype.kind not in "iuf":
        raise TilewiseError(f"{src}: {what} of dtype {arr.dtype} are neither integers nor floats; "
                            f"give integer (quantized) or float values")
    if arr.ndim == 0 or arr.size == 0:
        raise TilewiseError(f"{src}: the {what} array is empty (shape {arr.shape}); give at least "
                            f"one {what.rstrip('s')}")
    cands = _candidates(spec, layout)
    hit = None
    for label, full, perm in cands:
        for per in _per_input_shapes(full):
            if tuple(arr.shape[1:]) == per:
                hit = (label, full, perm, per)
                break
        if hit:
            break
    if hit is None:   # one input of the model's shape, its batch (not 1) included: N = 1
        hit = next(((label, full, perm, full) for label, full, perm in cands
                    if full and full[0] != 1 and tuple(arr.shape) == full), None)
        if hit is not None:
            arr = arr[None]
    if hit is None:
        want = " or ".join(f"[N, {_fmt(full)}] / [N, {_fmt(full[1:])}] ({label})" if full[0] == 1
                           else f"[N, {_fmt(full)}] ({label})" for label, full, _ in cands)
        ranks = {len(full) + 1 for _, full, _ in cands} | {len(full) for _, full, _ in cands if full[0] == 1}
        kind = "rank" if arr.ndim not in ranks else "shape"
        raise TilewiseError(f"{src}: {what} of shape {_fmt(arr.shape)} have the wrong {kind} for the "
                            f"model's {what.rstrip('s')} {_fmt(spec.model_shape)}; give {want}, N "
                            f"{what} stacked on the first axis")
    label, full, perm, _ = hit
    n = int(arr.shape[0])
    arr = arr.reshape((n, *full))
    if perm is not None:
        arr = arr.transpose((0, *[p + 1 for p in perm]))
    arr = np.ascontiguousarray(arr)
    desc: dict[str, Any] = {"file": src, "count": n, "layout": label, "dtype": str(arr.dtype),
                            "shape": list(ua.array.shape)}
    lo, hi = dtype_range(spec.dtype)
    if spec.codes and arr.dtype.kind == "f":   # an integer export's codes in a float container
        arr = integral_codes(arr, src, what)
        desc["values"] = "integer codes in floats"
    if arr.dtype.kind in "iu":
        amin, amax = int(arr.min()), int(arr.max())
        if (amin < lo or amax > hi) and spec.codes:
            raise TilewiseError(f"{src}: the {what} codes span [{amin}, {amax}], outside the "
                                f"{spec.dtype} range [{lo}, {hi}] the model's "
                                f"{what.rstrip('s')} '{spec.names[0]}' takes; give its code type "
                                f"with --input-dtype (or leave it out: validate infers it from "
                                f"--data)")
        if amin < lo or amax > hi:
            raise TilewiseError(f"{src}: integer {what} span [{amin}, {amax}], outside the "
                                f"{spec.dtype} range [{lo}, {hi}] of the model's quantized "
                                f"{what.rstrip('s')}; integers are taken as quantized values — give "
                                f"floats to have them quantized")
        desc.setdefault("values", f"quantized {spec.dtype} values as given")
        return arr.astype(np_dtype(spec.dtype)), desc
    bad = ~np.isfinite(arr)
    if bad.any():
        first = tuple(int(v) for v in np.argwhere(bad)[0])
        raise TilewiseError(f"{src}: {what} hold {int(bad.sum())} NaN or infinite values (the first "
                            f"at index {first} of the NHWC array); give finite floats")
    if keep_float:
        desc["values"] = "float, compared with our outputs dequantized"
        return arr.astype(np.float64), desc
    if spec.scale is None:
        raise TilewiseError(f"{src}: float {what} need the model input's quantization, and the "
                            f"model's {what.rstrip('s')} has none; give the quantized integers")
    q = quantize(arr, spec.scale, spec.zero_point, spec.dtype, spec.rounding)
    desc["values"] = (f"float, quantized with scale {spec.scale:.9g} and zero point "
                      f"{spec.zero_point}, {spec.rounding}")
    desc["scale"], desc["zero_point"], desc["rounding"] = spec.scale, spec.zero_point, spec.rounding
    return q, desc


def quantize(x: np.ndarray, scale: float, zero_point: int, dtype: str, rounding: str) -> np.ndarray:
    """Float values to the integer dtype as the model's runtime quantizes (see the module doc)."""
    v = np.asarray(x, dtype=np.float32) / np.float32(scale)       # float32 division, as both do
    if rounding == HALF_EVEN:
        r = np.rint(v)
    else:   # std::round: half away from zero; |v| - floor(|v|) is exact in float32
        a = np.abs(v)
        f = np.floor(a)
        r = np.sign(v) * (f + (a - f >= np.float32(0.5)))
    lo, hi = dtype_range(dtype)
    return np.clip(r.astype(np.float64) + int(zero_point), lo, hi).astype(np_dtype(dtype))


def read_labels(path: str | Path, n: int, classes: int, data_src: str) -> tuple[np.ndarray, str]:
    """[N] integer labels in [0, classes); checked against N inputs from `data_src`."""
    ua = read_array(path, "labels", ("labels",))
    arr, src = ua.array, ua.source
    if arr.size == 0:
        raise TilewiseError(f"{src}: the labels array is empty; give one integer class per input")
    if arr.dtype.kind not in "iu":
        raise TilewiseError(f"{src}: labels of dtype {arr.dtype} are not integers; give one integer "
                            f"class index per input (e.g. numpy.int64)")
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise TilewiseError(f"{src}: labels of shape {_fmt(arr.shape)}; give one integer class per "
                            f"input, shape [N]")
    if arr.shape[0] != n:
        raise TilewiseError(f"{src}: {arr.shape[0]} labels for {n} inputs in {data_src}; give one "
                            f"label per input")
    lo, hi = int(arr.min()), int(arr.max())
    if lo < 0 or hi >= classes:
        raise TilewiseError(f"{src}: labels span [{lo}, {hi}], outside the model's {classes} classes "
                            f"[0, {classes - 1}]; give class indices of the output vector")
    return arr.astype(np.int64), src


def check_count(n: int, data_src: str, m: int, other_src: str, what: str) -> None:
    if m != n:
        raise TilewiseError(f"{other_src}: {m} {what} for {n} inputs in {data_src}; give one "
                            f"{what.rstrip('s')} per input")


__all__ = ["EdgeSpec", "HALF_AWAY", "HALF_EVEN", "InputOrder", "UserArray", "check_count", "container_inputs",
           "infer_code_dtype", "input_spec", "input_specs", "integer_export", "integral_codes",
           "onnx_input_order", "output_spec", "output_specs", "quantize", "read_array",
           "read_arrays", "read_labels", "to_ir"]
