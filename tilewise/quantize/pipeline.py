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

AUTO = "auto"   # --calibration auto: the method with the best output SQNR on the calibration inputs

__all__ = ["METHODS", "AUTO", "choose_method", "QuantizeResult", "Widths", "quantize_model",
           "quantize_values", "quantize_shift", "calibrate_model", "calibration_values", "observe",
           "uniform_widths", "load_float_onnx", "calibration_inputs", "sqnr_json"]


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
    if p.exists() and not p.is_dir() and not p.is_file():   # a FIFO would block the read
        raise TilewiseError(f"{path}: is not a regular file (a FIFO, socket or device); give the "
                            f"path of a float .onnx or .tflite model file")
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


def calibration_inputs(model: onnx.ModelProto, arr: np.ndarray, source: str, nhwc: bool = False,
                       what: str = "calibration data") -> np.ndarray:
    """The calibration array as [N, *input shape without batch] float32 (model layout); nhwc: the
    data is in TFLite's layout (a model converted by tflite_in.py) and is transposed to NCHW;
    `what` names the data in the errors (calibration or evaluation)."""
    given = tuple(np.shape(arr))   # the shape as the user's file holds it (for the errors)
    if nhwc:
        from .tflite_in import nhwc_to_model

        arr = nhwc_to_model(np.asarray(arr))
    vi = _inputs(model)[0]
    dims = [d.dim_value if d.HasField("dim_value") else None for d in vi.type.tensor_type.shape.dim]
    per = dims[1:]
    if arr.dtype.kind not in "fiu":
        raise TilewiseError(f"{source}: {what} of dtype {arr.dtype} is not numeric")
    a = np.asarray(arr, dtype=np.float32)
    if a.ndim == len(dims) + 1 and a.shape[1] == 1:
        a = a[:, 0]
    if a.ndim != len(per) + 1 or any(d is not None and d != s for d, s in zip(per, a.shape[1:])):
        layout = per[1:] + per[:1] if nhwc and len(per) == 3 else per   # TFLite's HWC
        want = "x".join("?" if d is None else str(d) for d in layout)
        raise TilewiseError(f"{source}: {what} of shape {given} does not fit the "
                            f"input '{vi.name}' (N x {want}, the model's own layout)")
    if a.shape[0] < 1:
        raise TilewiseError(f"{source}: the {what} holds no inputs")
    if not np.all(np.isfinite(a)):
        raise TilewiseError(f"{source}: the {what} holds NaN or infinite values")
    return a


@dataclass(frozen=True)
class Widths:
    """Bit widths of a quantized model: weights per weighted node label (graph_out.node_labels)
    and activations per calibrated tensor (Plan.points); absent = 8. 8-bit activations are int8,
    4- and 2-bit ones unsigned (uint4 / uint2, the sub-byte contract, docs/subbyte.md)."""

    weights: tuple[tuple[str, int], ...] = ()
    acts: tuple[tuple[str, int], ...] = ()

    def w(self) -> dict[str, int]:
        return dict(self.weights)

    def a(self) -> dict[str, int]:
        return dict(self.acts)


def uniform_widths(model: onnx.ModelProto, bits: int) -> Widths:
    """`--bits N`: 16 = every activation int16 with int8 weights (TFLite's 16x8 scheme); 4 or 2 =
    every weight at N bits and every activation between weighted layers at N bits
    (graph_out.sub_byte_points: what the sub-byte kernels take — residual adds, average pools,
    softmax and the network's input and outputs stay 8-bit)."""
    if bits == 8:
        return Widths()
    if bits == 16:
        return Widths(acts=tuple((t, 16) for t in plan(model, 16).points))
    if bits not in (4, 2):
        raise TilewiseError(f"--bits {bits}: tilewise quantize writes 16-, 8-, 4- or 2-bit models")
    from .graph_out import node_labels, sub_byte_points

    return Widths(tuple((n, bits) for n in node_labels(model)),
                  tuple((t, bits) for t in sub_byte_points(model, plan(model))))


def calibration_values(model: onnx.ModelProto, inputs: np.ndarray,
                       bits: int = 8) -> tuple[Plan, dict[str, list[np.ndarray]]]:
    """The plan of `model` (`bits` 16: int16 softmax outputs) and the float values of its
    activation points on `inputs`."""
    p = plan(model, bits)
    name = _inputs(model)[0].name
    sess = session(model, tuple(t for t in p.points if t != name))
    values = run_all(sess, name, inputs, [t for t in p.points if t != name])
    values[name] = [x for x in inputs]
    return p, values


def quantize_values(model: onnx.ModelProto, p: Plan, values: dict[str, list[np.ndarray]],
                    method: str = "minmax", percentile: float = 99.99,
                    widths: Widths = Widths()) -> QuantizeResult:
    """The QDQ model of `model` from its calibration values (`calibration_values`)."""
    observers = _observers(p, values, method, percentile, widths.a())
    qp = resolve(p, {t: obs.qparams() for t, obs in observers.items()})
    return QuantizeResult(write_qdq(model, p, qp, widths.w()), p, qp, _inputs(model)[0].name,
                          method)


def _observers(p: Plan, values: dict[str, list[np.ndarray]], method: str, percentile: float,
               a_bits: dict[str, int]) -> dict[str, Observer]:
    """One observer per activation point of `p`, fed with its calibration values (bits per point,
    default 8)."""
    observers: dict[str, Observer] = {}
    for t in p.points:
        obs = Observer(method, percentile, a_bits.get(t, 8))
        for v in values[t]:
            obs.update(v)
        observers[t] = obs
    return observers


def quantize_model(model: onnx.ModelProto, inputs: np.ndarray, method: str = "minmax",
                   bits: int = 8, percentile: float = 99.99, widths: Widths | None = None) -> QuantizeResult:
    """Calibrate `model` on `inputs` ([N, ...] float32) and write its QDQ form: every layer at
    `bits` (uniform_widths), or at the per-layer `widths` when given.

    method ``auto``: every method of METHODS calibrates, and the one whose model has the highest
    output SQNR vs float on these same (calibration) inputs is kept (`choose_method`); the choice
    is per model (a per-tensor search driven by the output SQNR was tried on the MLPerf KWS model
    and over-fitted 100 calibration inputs: better on them, worse on other inputs).
    """
    w = widths if widths is not None else uniform_widths(model, bits)
    p, values = calibration_values(model, inputs, 16 if bits == 16 else 8)
    methods = METHODS if method == AUTO else (method,)
    results = {m: quantize_values(model, p, values, m, percentile, w) for m in methods}
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


def quantize_shift(model: onnx.ModelProto, inputs: np.ndarray, method: str = "minmax",
                   percentile: float = 99.99, w_bits: dict[str, int] | None = None,
                   pow2: bool = False):
    """Calibrate `model` on `inputs` and write its shift-mode integer form (shift_out.py: the
    PULP / NE16 / DIANA targets' requantization); `w_bits`: weight bits per weighted node label
    (8, 4, 2; activations stay 8-bit); `pow2`: the power-of-two form (k = 1; DIANA's digital
    core, Target.shift_multiplier False)."""
    from .shift_out import write_shift

    p, qp, _ = calibrate_model(model, inputs, method, 8, percentile)
    return write_shift(model, p, qp, w_bits, pow2)


def calibrate_model(model: onnx.ModelProto, inputs: np.ndarray, method: str = "minmax",
                    bits: int = 8, percentile: float = 99.99) -> tuple[Plan, dict[str, QParams], str]:
    """(plan, every quantized tensor's parameters, the input's name) of `model` on `inputs`, every
    activation at `bits` (8: what the shift writer takes)."""
    p, name, observers = observe(model, inputs, method, bits, percentile)
    return p, resolve(p, {t: obs.qparams() for t, obs in observers.items()}), name


def observe(model: onnx.ModelProto, inputs: np.ndarray, method: str = "minmax", bits: int = 8,
            percentile: float = 99.99) -> tuple[Plan, str, dict[str, Observer]]:
    """Plan the activation points of `model` and feed one observer per point (all at `bits`) with
    its values on `inputs`: (plan, input name, observers) — narrow_search.py re-windows them."""
    p, values = calibration_values(model, inputs)
    return p, _inputs(model)[0].name, _observers(p, values, method, percentile,
                                                 {t: bits for t in p.points})


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
