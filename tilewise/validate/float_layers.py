"""The float model's value of every layer output, for `validate --data … --float-model FILE`.

The per-layer error statistics (layer_errors.py) hold the generated C against the integer golden
model: all zeros on a bit-exact network. With the float model the network was quantized from, each
layer's output is also held against the float model's value of the same tensor, in the model's real
units — where quantization error enters and how it grows (the float_* columns).

- The float model: a float .onnx or .tflite file (a .tflite is converted as `tilewise quantize`
  reads it, quantize/tflite_in.py), run by onnxruntime with every matched tensor exposed as an
  output (quantize/sqnr.py `session`), on the network's inputs dequantized with the input's scale
  and zero point (the values the quantized network sees, whether --data held floats or codes).
- Matching, by tensor name: an ONNX model's layer output is graph.meta["onnx_tensors"]'s ONNX name
  of its IR tensor (frontend/onnx_lower.py), a QDQ model's `X/q` being the float model's `X`
  (`tilewise quantize` keeps the float model's names, quantize/graph_out.py); a TFLite model's IR
  names are its tensor names, which `tilewise quantize` and the float .tflite's converter share.
  The float value is brought to the IR layout by the tensor's to_ir_perm (a TFLite float model's
  4-D tensors are NCHW after conversion, the IR's NHWC). A layer whose tensor the float model does
  not have (a fused or renamed one) gets empty float cells; none at all, a matched tensor of another
  size or an input that does not fit is one sentence: the float model is not this network's.
- Real units per layer: the tensor's per-tensor scale and zero point — for an integer export the
  quantization its metadata states for the codes (`tilewise.quant.<tensor>`, written for every
  activation by quantize/shift_out.py; frontend/onnx_stated.py), since its IR tensors carry the
  arithmetic's scale 1. A tensor with neither (per channel, or an integer export's code whose
  meaning the model does not state) gets empty float cells.

The columns (FLOAT_COLUMNS): float_tensor (the float model's name), float_rmse, float_cos and
float_sqnr_db = 10·log10(Σf² / Σ(c − f)²) of the C's dequantized values c against the float f over
all inputs (empty when c = f exactly).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from ..errors import TilewiseError
from ..golden.samples import arrays
from ..ir.graph import Graph
from ..ir.layer import LayerGraph
from . import metrics as M
from .data import EdgeSpec, integer_export

FLOAT_COLUMNS = ("float_tensor", "float_rmse", "float_cos", "float_sqnr_db")
#: ops whose presence shows a model is already quantized
_QUANTIZED_OPS = ("QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul",
                  "ConvInteger", "MatMulInteger")
#: metadata key prefix of a tensor's stated quantization (frontend/onnx_stated.py STATED_KEY)
_STATED = "tilewise.quant."


@dataclass(frozen=True)
class FloatTap:
    """Where one layer's output is in the float model, and its real units."""

    tensor: str                          # the float model's tensor name
    perm: tuple[int, ...] | None         # float value -> IR layout
    scale: float
    zero_point: int


@dataclass
class FloatReference:
    """The float model, ready to run, and each layer's tap (None: not compared)."""

    path: str
    session: Any
    input_name: str
    input_shape: tuple[int | None, ...]
    input_perm: tuple[int, ...] | None   # IR input -> the float model's layout
    input_quant: tuple[float, int]
    taps: list[FloatTap | None]
    sums: np.ndarray = field(init=False)  # per layer Σ(c−f)², Σcf, Σc², Σf², elements

    def __post_init__(self) -> None:
        self.sums = np.zeros((len(self.taps), 5))

    def values(self, x: Any) -> list[np.ndarray | None]:
        """Per layer, the float model's value of its output on sample `x` (IR order, flat)."""
        (xi,) = arrays(["input"], x)   # one input (load_float_reference)
        f = M.dequantize(xi, *self.input_quant).astype(np.float32)
        if self.input_perm is not None:
            f = f.transpose(self.input_perm)
        f = f.reshape([d if d is not None else -1 for d in self.input_shape])
        names = sorted({t.tensor for t in self.taps if t is not None})
        try:
            got = dict(zip(names, self.session.run(names, {self.input_name: f})))
        except Exception as e:   # noqa: BLE001 — onnxruntime's failure is the user's model
            raise TilewiseError(f"--float-model {self.path}: onnxruntime cannot run it on the "
                                f"network's inputs ({type(e).__name__}); give the float model "
                                f"the network was quantized from") from None
        out: list[np.ndarray | None] = []
        for tap in self.taps:
            if tap is None:
                out.append(None)
                continue
            v = np.asarray(got[tap.tensor], np.float64)
            out.append((v.transpose(tap.perm) if tap.perm is not None else v).reshape(-1))
        return out

    def add(self, li: int, codes: np.ndarray, floats: Sequence[np.ndarray]) -> None:
        """Accumulate layer li: the C's codes of some inputs against the float values of each."""
        tap = self.taps[li]
        if tap is None:
            return
        f = np.concatenate(list(floats))
        if f.size != codes.size:
            raise TilewiseError(f"--float-model {self.path}: its tensor '{tap.tensor}' holds "
                                f"{f.size // max(len(floats), 1)} values per input where the "
                                f"network's layer holds {codes.size // max(len(floats), 1)}; "
                                f"give the float model the network was quantized from")
        c = M.dequantize(codes, tap.scale, tap.zero_point)
        d = c - f
        self.sums[li] += ((d * d).sum(), (c * f).sum(), (c * c).sum(), (f * f).sum(), c.size)

    def columns(self, li: int) -> dict[str, Any]:
        """The FLOAT_COLUMNS of layer li (empty cells for a layer not compared)."""
        tap = self.taps[li]
        sdd, scf, scc, sff, n = (float(v) for v in self.sums[li])
        if tap is None or n == 0:
            return {c: None for c in FLOAT_COLUMNS}
        return {"float_tensor": tap.tensor, "float_rmse": math.sqrt(sdd / n),
                "float_cos": M.cos_of_sums(scf, scc, sff),
                "float_sqnr_db": (10.0 * math.log10(sff / sdd) if sff > 0 else float("-inf"))
                if sdd > 0 else None}


def _read(path: Path) -> tuple[onnx.ModelProto, bool]:
    """The float model as ONNX, and whether it came from a .tflite (NCHW 4-D tensors)."""
    where = f"--float-model {path}"
    if path.exists() and not path.is_file() and not path.is_dir():
        raise TilewiseError(f"{where}: is not a regular file (a FIFO, socket or device); give the "
                            f"float .onnx or .tflite model file")
    if path.is_dir():
        raise TilewiseError(f"{where}: is a directory; give the float .onnx or .tflite model file")
    if not path.is_file():
        raise TilewiseError(f"{where}: no such file; give the float .onnx or .tflite model the "
                            f"network was quantized from")
    suffix = path.suffix.lower()
    if suffix == ".tflite":
        from ..quantize.tflite_in import tflite_to_onnx

        return tflite_to_onnx(path), True
    if suffix != ".onnx":
        raise TilewiseError(f"{where}: give a float .onnx or .tflite model, not a "
                            f"'{path.suffix or path.name}' file")
    try:
        return onnx.load(str(path)), False
    except Exception as e:   # noqa: BLE001 — any parse failure is the user's file
        raise TilewiseError(f"{where}: cannot read the file as an ONNX model "
                            f"({type(e).__name__})") from None


def _stated(model_path: str | Path) -> dict[str, tuple[float, int]]:
    """The quantization an ONNX integer export states for its tensors' codes (onnx_stated.py)."""
    if Path(model_path).suffix.lower() != ".onnx":
        return {}
    m = onnx.load(str(model_path), load_external_data=False)
    out = {}
    for e in m.metadata_props:
        if e.key.startswith(_STATED):
            try:
                s, z = e.value.split()
                out[e.key[len(_STATED):]] = (float(s), int(z))
            except ValueError:   # the frontend already refused a malformed one
                continue
    return out


def _units(graph: Graph, lg: LayerGraph, ir: str, onnx_name: str,
           stated: dict[str, tuple[float, int]]) -> tuple[float, int] | None:
    if onnx_name in stated:
        return stated[onnx_name]
    if integer_export(graph):   # codes whose IR scale is the arithmetic's 1
        return None
    q = lg.tensors[ir].quant
    if q is None or len(q.scale) != 1:
        return None
    return float(q.scale[0]), int(q.zp)


def _inverse(perm: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argsort(perm))


def load_float_reference(path: str | Path, model_path: str | Path, graph: Graph, lg: LayerGraph,
                         ispec: EdgeSpec) -> FloatReference:
    """The float model at `path` matched to the network `lg` of `model_path` (module docstring);
    one sentence (TilewiseError) when it cannot be read, run or matched."""
    from ..quantize.sqnr import session

    p = Path(path)
    where = f"--float-model {path}"
    model, from_tflite = _read(p)
    g = model.graph
    for n in g.node:
        if n.op_type in _QUANTIZED_OPS:
            raise TilewiseError(f"{where}: node '{n.name or n.op_type}' ({n.op_type}) shows the "
                                f"model is quantized; give the float model the network was "
                                f"quantized from")
    inits = {t.name for t in g.initializer}
    inputs = [vi for vi in g.input if vi.name not in inits]
    if len(lg.inputs) != 1 or len(inputs) != 1:
        raise TilewiseError(f"{where}: the float comparison takes a network and a float model of "
                            f"one input each (the network has {len(lg.inputs)}, the float model "
                            f"{len(inputs)}); drop --float-model")
    if ispec.scale is None:
        raise TilewiseError(f"{where}: the network input '{lg.inputs[0]}' states no per-tensor "
                            f"scale, so its codes have no float value to feed the float model; "
                            f"drop --float-model")
    made = {o for n in g.node for o in n.output} | {inputs[0].name}
    meta = {e["ir"]: e for e in graph.meta.get("onnx_tensors") or ()}
    stated = _stated(model_path)
    taps: list[FloatTap | None] = []
    for layer in lg.layers:
        ir = layer.output
        e = meta.get(ir)
        name = e["onnx"] if e is not None else ir
        if name not in made and name.endswith("/q") and name[:-2] in made:
            name = name[:-2]   # a QDQ model's quantized X is the float model's X
        units = _units(graph, lg, ir, e["onnx"] if e is not None else ir, stated)
        if name not in made or units is None:
            taps.append(None)
            continue
        if e is not None:
            perm = tuple(e["to_ir_perm"]) if e["to_ir_perm"] is not None else None
        else:
            perm = (0, 2, 3, 1) if from_tflite and len(lg.tensors[ir].shape) == 4 else None
        taps.append(FloatTap(name, perm, *units))
    if not any(taps):
        raise TilewiseError(f"{where}: none of the network's {len(lg.layers)} layer outputs is a "
                            f"tensor of this model (or the network states no real units for "
                            f"them); give the float model the network was quantized from")
    dims = tuple(d.dim_value if d.HasField("dim_value") else None
                 for d in inputs[0].type.tensor_type.shape.dim)
    rank = len(ispec.ir_shape)
    if from_tflite and rank == 4:
        in_perm: tuple[int, ...] | None = (0, 3, 1, 2)   # the IR's NHWC -> the converted NCHW
    else:
        in_perm = _inverse(ispec.to_ir_perm) if ispec.to_ir_perm is not None else None
    want = tuple(np.empty(ispec.ir_shape).transpose(in_perm).shape) if in_perm else ispec.ir_shape
    if len(dims) != len(want) or any(d is not None and d != w for d, w in zip(dims, want)):
        size = int(np.prod(ispec.ir_shape))
        if None in dims or int(np.prod(dims)) != size:
            raise TilewiseError(f"{where}: its input '{inputs[0].name}' is "
                                f"{'x'.join('?' if d is None else str(d) for d in dims)}, the "
                                f"network's {'x'.join(map(str, want))}; give the float model the "
                                f"network was quantized from")
    taps_names = tuple(sorted({t.tensor for t in taps if t is not None}))
    try:
        sess = session(model, taps_names)
    except Exception as e:   # noqa: BLE001 — onnxruntime's refusal is the user's model
        raise TilewiseError(f"{where}: onnxruntime cannot load it ({type(e).__name__}); give a "
                            f"float model onnxruntime runs") from None
    return FloatReference(str(path), sess, inputs[0].name, dims, in_perm,
                          (float(ispec.scale), int(ispec.zero_point)), taps)


__all__ = ["FLOAT_COLUMNS", "FloatReference", "FloatTap", "load_float_reference"]
