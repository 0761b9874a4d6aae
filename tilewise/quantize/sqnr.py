"""Signal-to-quantization-noise ratio of a quantized model against its float parent.

SQNR(f, q) = 10·log10(Σ f² / Σ (f − q)²) in dB over all elements of all inputs, f the float
model's tensor and q the quantized model's dequantized tensor (the usual definition, e.g. the
"SQNR" of PyTorch's numeric suite / AIMET layer-wise analysis). An exact match has no finite
SQNR: it is reported as None (JSON null) with ``exact: true``.

Both models run in onnxruntime with default session options, i.e. the quantized one through the
fused integer QLinear kernels (not float QDQ emulation): the per-layer figures are those of the
integer network. Per layer = per quantized tensor (graph_out.py's Plan), read at its int8
QuantizeLinear output ``t/q`` and dequantized with its parameters here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

from .calibrate import QParams


@dataclass(frozen=True)
class Sqnr:
    name: str
    db: float | None       # None: exact (no noise)
    signal_power: float
    noise_power: float

    def to_json(self) -> dict:
        return {"name": self.name, "sqnr_db": None if self.db is None else round(float(self.db), 3),
                "exact": self.db is None, "noise_power": self.noise_power}


def sqnr(name: str, ref: list[np.ndarray] | np.ndarray, test: list[np.ndarray] | np.ndarray) -> Sqnr:
    f = np.concatenate([np.asarray(a, dtype=np.float64).reshape(-1) for a in _as_list(ref)])
    q = np.concatenate([np.asarray(a, dtype=np.float64).reshape(-1) for a in _as_list(test)])
    if f.shape != q.shape:
        raise ValueError(f"{name}: {f.size} reference values against {q.size} quantized values")
    s, n = float(np.mean(f * f)), float(np.mean((f - q) ** 2))
    if n == 0.0:
        return Sqnr(name, None, s, 0.0)
    return Sqnr(name, 10.0 * np.log10(s / n) if s > 0 else float("-inf"), s, n)


def _as_list(a) -> list[np.ndarray]:
    return list(a) if isinstance(a, list) else [a]


def session(model: onnx.ModelProto, extra_outputs: tuple[str, ...] = (),
            types: dict[str, int] | None = None) -> ort.InferenceSession:
    """An onnxruntime CPU session of `model` that also returns `extra_outputs` (intermediates)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    for t in extra_outputs:
        if t not in have:
            m.graph.output.append(helper.make_tensor_value_info(t, (types or {}).get(t, TensorProto.FLOAT), None))
    return ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])


def run_all(sess: ort.InferenceSession, input_name: str, inputs: np.ndarray,
            names: list[str]) -> dict[str, list[np.ndarray]]:
    """Each of `names` for every input (one inference per input, batch 1)."""
    out: dict[str, list[np.ndarray]] = {n: [] for n in names}
    for x in inputs:
        for n, v in zip(names, sess.run(names, {input_name: x[None].astype(np.float32)})):
            out[n].append(v)
    return out


def layer_report(float_model: onnx.ModelProto, qdq_model: onnx.ModelProto, input_name: str,
                 inputs: np.ndarray, layers: dict[str, str], qp: dict[str, QParams]) -> dict:
    """{"outputs": [...], "layers": [...]}: SQNR per graph output and per quantized tensor."""
    outs = [o.name for o in float_model.graph.output]
    tensors = [t for t in layers if t not in outs]
    f = run_all(session(float_model, tuple(tensors)), input_name, inputs, outs + tensors)
    qnames = [f"{t}/q" for t in layers]
    qs = run_all(session(qdq_model, tuple(qnames), {n: TensorProto.INT8 for n in qnames}),
                 input_name, inputs, outs + qnames)
    per_out = [sqnr(o, f[o], qs[o]).to_json() for o in outs]
    per_layer = []
    for t, layer in layers.items():
        deq = [qp[t].dequantize(v) for v in qs[f"{t}/q"]]
        per_layer.append({**sqnr(t, f[t], deq).to_json(), "layer": layer})
    return {"outputs": per_out, "layers": per_layer}


def output_report(float_model: onnx.ModelProto, int_model: onnx.ModelProto, input_name: str,
                  inputs: np.ndarray) -> list[dict]:
    """SQNR per graph output of an existing integer ONNX model (float in, float out)."""
    outs = [o.name for o in float_model.graph.output]
    iouts = [o.name for o in int_model.graph.output]
    f = run_all(session(float_model), input_name, inputs, outs)
    q = run_all(session(int_model), int_model.graph.input[0].name, inputs, iouts)
    return [sqnr(o, f[o], q[io]).to_json() for o, io in zip(outs, iouts)]
