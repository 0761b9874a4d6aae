"""Signal-to-quantization-noise ratio of a quantized model against its float parent.

SQNR(f, q) = 10·log10(Σ f² / Σ (f − q)²) in dB over all elements of all inputs, f the float
model's tensor and q the quantized model's dequantized tensor (the usual definition, e.g. the
"SQNR" of PyTorch's numeric suite / AIMET layer-wise analysis). An exact match has no finite
SQNR: it is reported as None (JSON null) with ``exact: true``.

Both models run in onnxruntime with the reference's session options (frontend/onnx_io.py
`reference_session`: int8 QDQ groups fused into the integer QLinear kernels, not float QDQ
emulation, on every x86 CPU): the per-layer figures are those of the integer network. Per layer = per quantized tensor
(graph_out.py's Plan), read at its int8 QuantizeLinear output ``t/q`` and dequantized with its parameters here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

from ..frontend.onnx_io import has_sub_byte
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
    so = ort.SessionOptions()
    if has_sub_byte(m):   # float DQ -> op -> Q (frontend/onnx_io.py)
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    else:   # int8 QDQ groups as QLinear kernels, as the reference runs them (onnx_io.py): without
        # it x86-64 onnxruntime requantizes them to u8s8, whose AVX2 kernels saturate (no VNNI)
        so.add_session_config_entry("session.qdqisint8allowed", "1")
    return ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])


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
    # int8 / int16 codes are read at t/q; a sub-byte tensor (uint4 / uint2, whose codes
    # onnxruntime does not hand to numpy) at its DequantizeLinear output t, which holds the same values
    wide = {(-128, 127): TensorProto.INT8, (-32768, 32767): TensorProto.INT16}

    def read(t: str) -> str:
        return f"{t}/q" if (qp[t].qmin, qp[t].qmax) in wide else t

    qnames = [read(t) for t in layers]
    qs = run_all(session(qdq_model, tuple(qnames),
                         {f"{t}/q": wide[(qp[t].qmin, qp[t].qmax)] for t in layers
                          if (qp[t].qmin, qp[t].qmax) in wide}),
                 input_name, inputs, list(dict.fromkeys(outs + qnames)))
    per_out = [sqnr(o, f[o], qs[o]).to_json() for o in outs]
    per_layer = []
    for t, layer in layers.items():
        deq = [qp[t].dequantize(v) if read(t) != t else v for v in qs[read(t)]]
        per_layer.append({**sqnr(t, f[t], deq).to_json(), "layer": layer})
    return {"outputs": per_out, "layers": per_layer}


def onnx_outputs(int_model: onnx.ModelProto, inputs: np.ndarray) -> list[list[np.ndarray]]:
    """Outputs of an existing integer ONNX model (float in, float out) run by onnxruntime."""
    names = [o.name for o in int_model.graph.output]
    got = run_all(session(int_model), int_model.graph.input[0].name, inputs, names)
    return [got[n] for n in names]


def output_report(float_model: onnx.ModelProto, input_name: str, inputs: np.ndarray,
                  other: list[list[np.ndarray]]) -> list[dict]:
    """SQNR per graph output of another model's outputs `other` (one list per output) vs float."""
    outs = [o.name for o in float_model.graph.output]
    if len(other) != len(outs):
        raise ValueError(f"the compared model has {len(other)} outputs, the float model {len(outs)}")
    f = run_all(session(float_model), input_name, inputs, outs)
    for o, q in zip(outs, other):
        if [np.size(v) for v in q] != [np.size(r) for r in f[o]]:
            raise ValueError(f"the compared model's output gives {np.size(q[0])} values per input "
                             f"where the float model's {o!r} gives {np.size(f[o][0])}")
    return [sqnr(o, f[o], [np.asarray(v).reshape(np.shape(r)) for v, r in zip(q, f[o])]).to_json()
            for o, q in zip(outs, other)]


def tflite_outputs(path: str, inputs_nhwc: np.ndarray) -> list[list[np.ndarray]]:
    """Outputs (dequantized to float) of an integer TFLite model run by LiteRT's reference kernels,
    its input quantized with the input tensor's scale and zero point (round half away, clamp)."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    it = Interpreter(model_path=path, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    got = tflite_tensors(path, inputs_nhwc, [od["index"] for od in it.get_output_details()])
    return list(got.values())


def tflite_tensors(path: str, inputs_nhwc: np.ndarray, indices: list[int]) -> dict[int, list[np.ndarray]]:
    """The tensors `indices` (dequantized to float) of a TFLite model run by LiteRT's reference
    kernels on each input (quantized as in `tflite_outputs`), intermediates included."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    it = Interpreter(model_path=path, experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                     experimental_preserve_all_tensors=True)
    it.allocate_tensors()
    di = it.get_input_details()[0]
    details = {d["index"]: d for d in it.get_tensor_details()}
    res: dict[int, list[np.ndarray]] = {i: [] for i in indices}
    for x in inputs_nhwc:
        v = x.reshape(di["shape"])
        if di["dtype"] != np.float32:
            s, z = di["quantization"]
            info = np.iinfo(di["dtype"])
            v = np.clip(np.sign(v) * np.floor(np.abs(v) / s + 0.5) + z, info.min, info.max).astype(di["dtype"])
        it.set_tensor(di["index"], v)
        it.invoke()
        for i in indices:
            y = it.get_tensor(i).astype(np.float64)
            if details[i]["dtype"] != np.float32:
                s, z = details[i]["quantization"]
                y = (y - z) * s
            res[i].append(y)
    return res


def compare_layers(float_model: onnx.ModelProto, input_name: str, inputs: np.ndarray,
                   path: str, layers: dict[str, str]) -> dict:
    """Per-layer SQNR of an existing integer model (`--compare`) against the float model: every
    quantized tensor of `layers` (tensor → layer) that the compared model holds under the same
    name — a TFLite file converted from the same network as the float parent names its tensors
    alike (tflite_in.py keeps the TFLite names), an ONNX model keeps the float graph's names (QDQ
    writers put the dequantized value under the name, or under `name_DequantizeLinear_Output`
    as onnxruntime's quantizer does). {"layers": [...], "unmatched": [layers with no such tensor]}.
    `inputs`: the float model's layout (NCHW for a converted TFLite parent)."""
    if path.lower().endswith(".tflite"):
        from ai_edge_litert.interpreter import Interpreter

        from ..frontend.tflite import ir_names, read_flatbuffer

        with open(path, "rb") as fh:
            names = ir_names(read_flatbuffer(fh.read(), path))
        shapes = {d["index"]: tuple(d["shape"]) for d in Interpreter(model_path=path).get_tensor_details()}
        where = {t: names.index(t) for t in layers if t in names}
        x = inputs.transpose(0, 2, 3, 1) if inputs.ndim == 4 else inputs
        got_by_index = tflite_tensors(path, x, sorted(set(where.values())))
        got = {t: [v.reshape(shapes[i]) for v in got_by_index[i]] for t, i in where.items()}
    else:
        m = onnx.load(path)
        have = {o for n in m.graph.node for o in n.output}
        where = {}
        for t in layers:
            for cand in (t, f"{t}_DequantizeLinear_Output"):
                if cand in have:
                    where[t] = cand
                    break
        outs = [o.name for o in m.graph.output]
        extra = tuple(v for v in where.values() if v not in outs)
        run = run_all(session(m, extra), m.graph.input[0].name, inputs,
                      list(dict.fromkeys(outs + list(where.values()))))
        got = {t: run[v] for t, v in where.items()}
    f = run_all(session(float_model, tuple(t for t in where if t not in
                                          {o.name for o in float_model.graph.output})),
                input_name, inputs, list(dict.fromkeys([o.name for o in float_model.graph.output]
                                                       + list(where))))
    per_layer = []
    for t, vals in got.items():
        ref = f[t]
        if vals and np.ndim(vals[0]) == 4 and np.shape(vals[0]) != np.shape(ref[0]):
            vals = [np.transpose(v, (0, 3, 1, 2)) for v in vals]   # TFLite NHWC -> the model's NCHW
        if [np.size(v) for v in vals] != [np.size(r) for r in ref]:
            continue      # same name, another tensor (e.g. a differently fused op): not compared
        per_layer.append({**sqnr(t, ref, [np.reshape(v, np.shape(r)) for v, r in zip(vals, ref)])
                          .to_json(), "layer": layers[t]})
    matched = {p["name"] for p in per_layer}
    return {"layers": per_layer, "unmatched": [layers[t] for t in layers if t not in matched]}
