"""The `tilewise quantize` pipeline (the package doc, tilewise/quantize/__init__.py, has the stages)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import onnx

from ..errors import TilewiseError
from .calibrate import METHODS, Observer, QParams
from .graph_out import Plan, check_float_model, plan, resolve, write_qdq
from .sqnr import layer_report, output_report, run_all, session, sqnr

BITS = (8, 16)   # 16: int16 activations, int8 weights (TFLite 16x8)
AUTO = "auto"   # --calibration auto: the method with the best output SQNR on the calibration inputs

__all__ = ["METHODS", "AUTO", "choose_method", "QuantizeResult", "quantize_model", "load_float_onnx",
           "calibration_inputs", "sqnr_json"]


@dataclass(frozen=True, eq=False)
class QuantizeResult:
    model: onnx.ModelProto
    plan: Plan
    qparams: dict[str, QParams]
    input_name: str
    method: str = "minmax"                                   # the calibration method used
    method_sqnr: dict[str, float] = field(default_factory=dict)  # auto: {method: calibration dB}


def load_float_onnx(path: str | Path) -> onnx.ModelProto:
    p = Path(path)
    if not p.is_file():
        raise TilewiseError(f"{path}: no such model file")
    if p.suffix.lower() == ".tflite":
        from .tflite_in import tflite_to_onnx

        model = tflite_to_onnx(p)
    elif p.suffix.lower() != ".onnx":
        raise TilewiseError(f"{path}: tilewise quantize reads a float .onnx or .tflite model, not "
                            f"'{p.suffix or p.name}' files")
    else:
        try:
            model = onnx.load(str(p))
        except Exception as e:   # noqa: BLE001 — any parse failure is the user's file
            raise TilewiseError(f"{path}: cannot read the file as an ONNX model ({type(e).__name__})") from None
    check_float_model(model, str(path))
    inputs = _inputs(model)
    if len(inputs) != 1:
        raise TilewiseError(f"{path}: the model has {len(inputs)} inputs; tilewise quantize takes "
                            f"single-input models")
    return model


def _inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    inits = {t.name for t in model.graph.initializer}
    return [vi for vi in model.graph.input if vi.name not in inits]


def calibration_inputs(model: onnx.ModelProto, arr: np.ndarray, source: str, nhwc: bool = False) -> np.ndarray:
    """The calibration array as [N, *input shape without batch] float32 (model layout); nhwc: the
    data is in TFLite's layout (a model converted by tflite_in.py) and is transposed to NCHW."""
    if nhwc:
        from .tflite_in import nhwc_to_model

        arr = nhwc_to_model(np.asarray(arr))
    vi = _inputs(model)[0]
    dims = [d.dim_value if d.HasField("dim_value") else None for d in vi.type.tensor_type.shape.dim]
    per = dims[1:]
    if arr.dtype.kind not in "fiu":
        raise TilewiseError(f"{source}: calibration data of dtype {arr.dtype} is not numeric")
    a = np.asarray(arr, dtype=np.float32)
    if a.ndim == len(dims) + 1 and a.shape[1] == 1:
        a = a[:, 0]
    if a.ndim != len(per) + 1 or any(d is not None and d != s for d, s in zip(per, a.shape[1:])):
        want = "x".join("?" if d is None else str(d) for d in per)
        raise TilewiseError(f"{source}: calibration data of shape {tuple(arr.shape)} does not fit the "
                            f"input '{vi.name}' (N x {want}, the model's own layout)")
    if a.shape[0] < 1:
        raise TilewiseError(f"{source}: the calibration data holds no inputs")
    if not np.all(np.isfinite(a)):
        raise TilewiseError(f"{source}: the calibration data holds NaN or infinite values")
    return a


def quantize_model(model: onnx.ModelProto, inputs: np.ndarray, method: str = "minmax",
                   bits: int = 8, percentile: float = 99.99) -> QuantizeResult:
    """Calibrate `model` on `inputs` ([N, ...] float32) and write its QDQ form.

    method ``auto``: every method of METHODS calibrates, and the one whose model has the highest
    output SQNR vs float on these same (calibration) inputs is kept (`choose_method`); the choice
    is per model (a per-tensor search driven by the output SQNR was tried on the MLPerf KWS model
    and over-fitted 100 calibration inputs: better on them, worse on other inputs).
    """
    if bits not in BITS:
        raise TilewiseError(f"--bits {bits}: tilewise quantize writes {' or '.join(map(str, BITS))}-bit models")
    p = plan(model, bits)
    name = _inputs(model)[0].name
    methods = METHODS if method == AUTO else (method,)
    observed = _observed(model, inputs, p, name, methods, bits, percentile)
    results = {m: _written(model, p, name, {t: observed[t][m] for t in p.points}, bits, m) for m in methods}
    if method != AUTO:
        return results[method]
    best, scores = choose_method(model, results, inputs)
    return replace(results[best], method_sqnr=scores)


def choose_method(model: onnx.ModelProto, results: dict[str, QuantizeResult],
                  inputs: np.ndarray) -> tuple[str, dict[str, float]]:
    """(the method whose model has the highest first-output SQNR on `inputs`, {method: dB}); an
    exact model counts as +inf, ties keep the earlier method of METHODS."""
    outs = [o.name for o in model.graph.output]
    name = _inputs(model)[0].name
    ref = run_all(session(model), name, inputs, outs)
    scores: dict[str, float] = {}
    for m, res in results.items():
        got = run_all(session(res.model), name, inputs, outs)
        db = sqnr(outs[0], ref[outs[0]], got[outs[0]]).db
        scores[m] = float("inf") if db is None else float(db)
    best = max(scores, key=lambda m: (scores[m], -list(results).index(m)))
    return best, scores


def _written(model: onnx.ModelProto, p: Plan, name: str, calibrated: dict[str, QParams],
             bits: int, method: str) -> QuantizeResult:
    qp = resolve(p, calibrated)
    return QuantizeResult(write_qdq(model, p, qp, bits), p, qp, name, method)


def sqnr_json(float_model: onnx.ModelProto, res: QuantizeResult, inputs: np.ndarray,
              compare: list[list[np.ndarray]] | None = None) -> dict:
    """SQNR per output and per layer on `inputs`; `compare`: another integer model's outputs on the
    same inputs (sqnr.onnx_outputs / sqnr.tflite_outputs), reported per output."""
    out = layer_report(float_model, res.model, res.input_name, inputs, res.plan.layer_of, res.qparams)
    if compare is not None:
        out["compare"] = {"outputs": output_report(float_model, res.input_name, inputs, compare)}
    return out


def _observed(model: onnx.ModelProto, inputs: np.ndarray, p: Plan, name: str,
              methods: tuple[str, ...], bits: int, percentile: float) -> dict[str, dict[str, QParams]]:
    """Per calibrated point, the parameters each of `methods` gives: {tensor: {method: QParams}}."""
    sess = session(model, tuple(t for t in p.points if t != name))
    values = run_all(sess, name, inputs, [t for t in p.points if t != name])
    values[name] = [x for x in inputs]
    out: dict[str, dict[str, QParams]] = {}
    for t in p.points:
        obs = {m: Observer(m, percentile, bits) for m in methods}
        for v in values[t]:
            for o in obs.values():
                o.update(v)
        out[t] = {m: o.qparams() for m, o in obs.items()}
    return out
