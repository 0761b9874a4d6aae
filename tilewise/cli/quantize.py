"""`tilewise quantize`: its options (`add`) and command (`run`); the quantizer is tilewise/quantize.

    tilewise quantize FLOAT.onnx --calib DATA --target T [--bits 8|16|4|2|mixed]
        [--weight-budget BYTES|FRACTION] [--acc-bits [MODULE=]N]
        [--calibration minmax|percentile|mse|auto] [--percentile P] [--eval DATA]
        [--compare INT.onnx]
        -o OUT.onnx|OUT.tflite [--json]

DATA is read like `validate --data` (validate/data.py: .npy, .npz or a directory of .npy), in the
model's own layout (NHWC for a .tflite model), N inputs with or without the batch dimension. The
target names the requantization the model is written for: onnx mode (a QDQ model, graph_out.py)
for Cortex-M and the host, shift mode (a NEMO-style integer model whose input and outputs are
8-bit codes, shift_out.py) for gap8, gap9, pulp-open and diana — for diana with power-of-two
requantization (k = 1, one weight scale per layer, residual Adds and power-of-two global pools in
the forms its digital core computes: Target.shift_multiplier False).

With an accumulator narrower than 32 bits (`--acc-bits`, as in validate; the narrowest module of
the target counts) the per-layer input and weight widths come from narrow_search.py, and --json
lists them per layer under "bit_widths" (widths, the accumulator range and the bits its proof needs,
the three §4.4 bounds' Δ and available bits, every candidate's SQNR).

`--bits 4|2`: every weight and every activation between layers at that width (uint4 / uint2
activations, int4 / int2 weights, QDQ ONNX types; the network's input and outputs stay int8);
`--bits mixed`: per-layer weight widths 8/4/2 under `--weight-budget` (bytes, or a fraction of the
int8 weight bytes; default 0.6) chosen from measured sensitivity (mixed.py), activations int8.
With a shift-mode target (gap8, gap9, pulp-open, diana) `--bits 4|2|mixed` sets the WEIGHT widths
only (NE16's 2–8-bit weights; activations stay 8-bit, NE16 takes 8-bit activations): the shift
model states each sub-byte node's width in its metadata (`tilewise.w_bits.<node>`, shift_out.py);
mixed: the same measured assignment as above. A narrow accumulator takes `--bits 8` only, a
shift-mode target not `--bits 16`.

The output format follows the suffix of -o: `.onnx` the QDQ (or shift-mode) ONNX model, `.tflite`
a TFLite model (tflite_out.py: int8 with `--bits 8`, TFLite's 16x8 with `--bits 16`; TFLite's own
requantization, whatever the target), whose SQNR figures LiteRT's reference kernels compute on the
written file (`--calibration auto` chooses the method on the QDQ model of the same plan, as for
.onnx). `--bits 16` writes .tflite only: an int16 QDQ ONNX model has no integer reference
(onnxruntime runs it in float), so tilewise could neither validate nor deploy it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from ..errors import TilewiseError

REQUANT = "onnx"   # onnxruntime's QLinear requantization (golden/requant.py mode "onnx")


def add(sub) -> None:
    q = sub.add_parser("quantize", help="float ONNX / TFLite model -> integer QDQ ONNX or TFLite model for a "
                       "target: per-channel weights, calibrated activations, SQNR vs float")
    q.add_argument("model", metavar="FLOAT_MODEL", help="float .onnx or .tflite model")
    q.add_argument("--calib", required=True, metavar="FILE|DIR",
                   help="calibration inputs (.npy, .npz or a directory of .npy), the model's layout")
    q.add_argument("--target", required=True, help="built-in target the model is quantized for")
    q.add_argument("--bits", default="8", choices=("8", "16", "4", "2", "mixed"),
                   help="bits: 8 (default), 16 (int16 symmetric activations, int8 weights: "
                   "TFLite's 16x8 scheme), 4 or 2 (sub-byte weights, activations between layers "
                   "too; with a shift-mode target the weights only), or mixed (per-layer weight "
                   "bits under --weight-budget)")
    q.add_argument("--weight-budget", metavar="BYTES|FRACTION", default=None,
                   help="with --bits mixed: the packed weight bytes allowed, or a fraction (< 1) of "
                   "the int8 weight bytes (default 0.6)")
    q.add_argument("--calibration", default="minmax", choices=("minmax", "percentile", "mse", "auto"),
                   help="activation range estimate (default: minmax; auto: the method whose model "
                   "has the best output SQNR on the calibration inputs)")
    q.add_argument("--percentile", type=float, default=99.99, metavar="P",
                   help="with --calibration percentile: the percentile kept (default 99.99)")
    q.add_argument("--acc-bits", metavar="[MODULE=]N",
                   help="accumulator bits of the target's modules (as in validate): below 32, choose "
                        "per layer input and weight widths of 2-8 bits whose accumulator provably "
                        "fits N bits (seed 002 §4.5 search, quantize/narrow_search.py)")
    q.add_argument("--eval", metavar="FILE|DIR", help="evaluation inputs: SQNR on them too")
    q.add_argument("--compare", metavar="INT_MODEL", help="an existing integer model of the same "
                   "network (.onnx float in/out, run by onnxruntime; .tflite, run by LiteRT): its "
                   "output SQNR on the same inputs")
    q.add_argument("-o", "--out", required=True, metavar="OUT.onnx|OUT.tflite",
                   help="the quantized model: QDQ ONNX (.onnx) or TFLite (.tflite: --bits 8 or 16)")
    q.add_argument("--json", action="store_true", help="print the result and SQNR figures as JSON")
    q.set_defaults(fn=run)


def _read_inputs(model, path: str, what: str, nhwc: bool) -> tuple[np.ndarray, np.ndarray]:
    """(inputs in the ONNX model's layout, the array as given)."""
    from ..quantize.pipeline import calibration_inputs
    from ..validate.data import read_array

    names = tuple(vi.name for vi in model.graph.input)
    raw = read_array(path, what, names).array
    return calibration_inputs(model, raw, path, nhwc, what.replace("inputs", "data")), raw


def _compare_outputs(path: str, inputs: np.ndarray, raw: np.ndarray) -> list[list[np.ndarray]]:
    """The --compare model's outputs: ONNX by onnxruntime, TFLite by LiteRT (on the NHWC data)."""
    import onnx

    from ..quantize.sqnr import onnx_outputs, tflite_outputs

    p = Path(path)
    if not p.is_file() or p.suffix.lower() not in (".onnx", ".tflite"):
        raise TilewiseError(f"--compare {path}: give an existing integer .onnx or .tflite model")
    try:
        if p.suffix.lower() == ".tflite":
            if not _tflite_is_integer(str(p)):
                raise TilewiseError(f"--compare {path}: is a float model (no quantized tensor); "
                                    f"--compare takes an integer model")
            return tflite_outputs(str(p), raw.astype(np.float32))
        proto = onnx.load(str(p))
        if not _onnx_is_integer(proto):
            raise TilewiseError(f"--compare {path}: is a float model (no quantization node and no "
                                f"integer weights); --compare takes an integer model")
        return onnx_outputs(proto, inputs)
    except TilewiseError:
        raise
    except Exception as e:   # noqa: BLE001 — the user's model does not run on these inputs
        raise TilewiseError(f"--compare {path}: the runtime cannot run it on the float model's inputs "
                            f"({str(e).splitlines()[0][:160] if str(e) else type(e).__name__})") from None


def _onnx_is_integer(model) -> bool:
    """Whether an ONNX model computes in integers anywhere: a (de)quantization or integer-kernel
    node, or an integer initializer (NEMO / QuantLab weights)."""
    from onnx import TensorProto

    integer_ops = {"QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul",
                   "ConvInteger", "MatMulInteger", "QLinearAdd", "QLinearMul"}
    ints = {TensorProto.INT8, TensorProto.UINT8, TensorProto.INT16, TensorProto.INT32,
            TensorProto.INT64, TensorProto.INT4, TensorProto.UINT4}
    return (any(n.op_type in integer_ops for n in model.graph.node)
            or any(t.data_type in ints and len(t.dims) > 1 for t in model.graph.initializer))


def _tflite_is_integer(path: str) -> bool:
    """Whether a TFLite model has a quantized tensor."""
    from ai_edge_litert.interpreter import Interpreter

    return any(d["quantization"][0] != 0.0 for d in Interpreter(model_path=path).get_tensor_details())


def _out_path(path: str) -> Path:
    p = Path(path).absolute()
    if p.suffix.lower() not in (".onnx", ".tflite"):
        raise TilewiseError(f"-o {path}: the quantized model is written as ONNX or TFLite; name it "
                            f"*.onnx or *.tflite")
    if p.is_dir():
        raise TilewiseError(f"-o {path}: is a directory; give the file name of the quantized model")
    if not p.parent.is_dir():
        raise TilewiseError(f"-o {path}: the directory {p.parent} does not exist")
    return p


def run(args: argparse.Namespace) -> int:
    import onnx

    from ..quantize.pipeline import calibration_values, load_float_onnx, quantize_model, sqnr_json
    from ..targets.registry import get_target
    from .options import with_acc_bits

    target = with_acc_bits(get_target(args.target), args.acc_bits)
    acc_bits = min(m.acc_bits for m in target.modules)
    out = _out_path(args.out)
    tfl = out.suffix.lower() == ".tflite"
    _check_format(args.bits, tfl, acc_bits)
    if args.weight_budget is not None and args.bits != "mixed":
        raise TilewiseError(f"--weight-budget is for --bits mixed, not --bits {args.bits}")
    if not 50.0 < args.percentile <= 100.0:
        raise TilewiseError(f"--percentile {args.percentile}: give a value in (50, 100]")
    model = load_float_onnx(args.model)
    nhwc = Path(args.model).suffix.lower() == ".tflite"
    calib, calib_raw = _read_inputs(model, args.calib, "calibration inputs", nhwc)
    evals = _read_inputs(model, args.eval, "evaluation inputs", nhwc) if args.eval else None
    narrow = assignment = auto = None
    shift = target.shift_requant and acc_bits >= 32 and not tfl
    if args.calibration == "auto" and (shift or acc_bits < 32 or args.bits == "mixed"):
        raise TilewiseError("--calibration auto is for the onnx-mode --bits 8|16|4|2 models; give "
                            "minmax, percentile or mse")
    if args.bits != "8" and acc_bits < 32:   # (--bits 16 in shift mode: _check_format, .onnx)
        raise TilewiseError(f"--bits {args.bits} does not go with {acc_bits}-bit accumulators (the "
                            f"narrow search chooses the widths itself); use --bits 8")
    if acc_bits < 32:
        from ..quantize.narrow_search import search

        narrow = search(model, calib, acc_bits, args.calibration, args.percentile)
        res = narrow.result
    elif shift:
        from ..quantize.pipeline import quantize_shift
        from ..quantize.shift_out import shift_json

        w_bits, assignment = _shift_weight_bits(model, calib, args)
        res = quantize_shift(model, calib, args.calibration, args.percentile, w_bits,
                             pow2=not target.shift_multiplier)
    elif args.bits == "mixed":
        from ..quantize.mixed import quantize_mixed

        p, values = calibration_values(model, calib)
        res, assignment = quantize_mixed(model, p, values, calib, args.weight_budget or "0.6",
                                         args.calibration, args.percentile)
    else:
        res = quantize_model(model, calib, args.calibration, int(args.bits), args.percentile)
        auto = res.method_sqnr   # {} unless --calibration auto
    inits = {t.name for t in model.graph.initializer}
    name = next(vi.name for vi in model.graph.input if vi.name not in inits)
    if args.compare:   # a model that cannot be compared stops the command before -o is written
        from ..quantize.sqnr import output_report

        for x, raw in [(calib, calib_raw)] + ([evals] if evals else []):
            try:
                output_report(model, name, x[:1],
                              _compare_outputs(args.compare, x[:1], raw[:1]))
            except ValueError as e:
                raise TilewiseError(f"--compare {args.compare}: {e}; give an integer model of the "
                                    f"same network") from None
    written = None
    try:
        if tfl:
            from ..quantize.tflite_out import write_tflite

            written = write_tflite(model, res.plan, res.qparams, int(args.bits))
            out.write_bytes(written.data)
        else:
            onnx.save(res.model, str(out))
    except OSError as e:
        raise TilewiseError(f"-o {args.out}: cannot write the model ({e.strerror or e})") from None
    result = {"model": str(out), "float_model": args.model, "target": target.name, "bits": args.bits,
              "format": "tflite" if tfl else "onnx",
              "calibration": args.calibration if auto is None else res.method,
              "requant": "shift" if shift else "tflite" if tfl else REQUANT,
              "calibration_inputs": int(len(calib)), "acc_bits": acc_bits}
    if auto:
        result["auto_calibration_sqnr"] = {m: None if v == float("inf") else round(v, 3)
                                           for m, v in auto.items()}
    if narrow is not None:
        result["bit_widths"] = [c.to_json() for c in narrow.choices]
    if shift:
        result["shift"] = shift_json(res)
    if assignment is not None:
        result["mixed"] = assignment.to_json()
    sets = [("calibration", (calib, calib_raw))] + ([("evaluation", evals)] if evals else [])
    for key, (x, raw) in sets:
        cmp = _compare_outputs(args.compare, x, raw) if args.compare else None
        result[f"{key}_inputs"] = int(len(x))
        if written is not None:
            from ..quantize.sqnr import output_report
            from ..quantize.tflite_out import tflite_report

            rep = tflite_report(model, written, str(out), x, res.plan.layer_of)
            if cmp is not None:
                rep["compare"] = {"outputs": output_report(model, res.input_name, x, cmp)}
            result[f"{key}_sqnr"] = rep
        else:
            result[f"{key}_sqnr"] = (shift_json(res, model, x, cmp)["sqnr"] if shift
                                     else sqnr_json(model, res, x, cmp))
        if cmp is not None:   # the compared model's layers that carry the same tensor names
            from ..quantize.sqnr import compare_layers

            rep = result[f"{key}_sqnr"]
            rep["compare"].update(compare_layers(model, name, x, args.compare,
                                                 {e["name"]: e["layer"] for e in rep["layers"]}))
    if not (tfl or shift or narrow is not None or assignment is not None) and args.bits in ("8", "16"):
        from ..quantize.native_form import tflite_form_costs
        from ..quantize.tflite_out import write_tflite

        costs = tflite_form_costs(out, write_tflite(model, res.plan, res.qparams, int(args.bits)).data, target)
        if costs is not None:
            result["forms"] = costs.to_json()
            note = costs.note(out)
            if note:
                result["notes"] = [note]
    warning = _low_sqnr_warning(result)
    if warning:
        result["warnings"] = [warning]
        print(f"tilewise: warning: {warning}", file=sys.stderr)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(_text(result))
    return 0


#: output SQNR (dB, calibration inputs) under which a sub-byte or mixed model is warned about:
#: int8 models of the shipped networks give 25-45 dB; below 20 the outputs are visibly off
LOW_SQNR_DB = 20.0


def _low_sqnr_warning(r: dict) -> str | None:
    """One sentence when a --bits mixed|4|2 model's output SQNR on the calibration inputs is under
    LOW_SQNR_DB, saying what to change; None otherwise (and for int8 / 16x8 models)."""
    if r["bits"] not in ("mixed", "4", "2"):
        return None
    dbs = [o["sqnr_db"] for o in r.get("calibration_sqnr", {}).get("outputs", ())
           if o.get("sqnr_db") is not None]
    if not dbs or min(dbs) >= LOW_SQNR_DB:
        return None
    if r["bits"] == "mixed":
        budget = r.get("mixed", {})
        change = (f"raise --weight-budget (it allowed {budget.get('budget', '?')} B of the "
                  f"{budget.get('int8_weight_bytes', '?')} B of int8 weights; e.g. 0.8 for 80%) "
                  f"or use --bits 8")
    else:
        change = "use --bits mixed with a --weight-budget, or --bits 8"
    return (f"--bits {r['bits']}: the output SQNR vs the float model on the calibration inputs is "
            f"{min(dbs):.2f} dB, under {LOW_SQNR_DB:g} dB (the outputs are far from the float "
            f"model's); {change}")


def _shift_weight_bits(model, calib: np.ndarray, args: argparse.Namespace):
    """(weight bits per weighted node label, the mixed.py Assignment) of a shift-mode model:
    uniform for --bits 4|2, the measured assignment for --bits mixed (its sensitivities are
    measured on the onnx-mode models, whose weight codes the shift writer shares), (None, None)
    for 8."""
    from ..quantize.graph_out import node_labels

    if args.bits in ("4", "2"):
        return {n: int(args.bits) for n in node_labels(model)}, None
    if args.bits != "mixed":
        return None, None
    from ..quantize.mixed import assign
    from ..quantize.pipeline import calibration_values

    p, values = calibration_values(model, calib)
    a = assign(model, p, values, calib, args.weight_budget or "0.6", args.calibration, args.percentile)
    return dict(a.bits), a


def _check_format(bits: str, tflite: bool, acc_bits: int) -> None:
    """One sentence for a width the chosen output format does not hold."""
    if tflite and bits not in ("8", "16"):
        raise TilewiseError(f"--bits {bits} with a .tflite output: the TFLite writer takes --bits 8 "
                            f"(int8) or 16 (16x8); write *.onnx for sub-byte models")
    if tflite and acc_bits < 32:
        raise TilewiseError(f"--acc-bits {acc_bits} with a .tflite output: the narrow-accumulator "
                            f"widths are written as ONNX; name the output *.onnx")
    if bits == "16" and not tflite:
        raise TilewiseError("--bits 16 writes TFLite's 16x8 model: name the output *.tflite (an int16 "
                            "QDQ ONNX model has no integer reference in onnxruntime, so tilewise could "
                            "neither validate nor deploy it)")


def _fmt(db) -> str:
    return "exact" if db is None else f"{db:.2f} dB"


def _text(r: dict) -> str:
    bits = {"mixed": "mixed 8/4/2-bit weights", "16": "16x8: int16 activations, int8 weights"}.get(
        r["bits"], f"int{r['bits']}")
    if r["requant"] == "shift" and r["bits"] in ("4", "2"):
        bits = f"int{r['bits']} weights, 8-bit activations"
    if r.get("format") == "tflite":
        bits = f"TFLite {bits}"
    width = bits if r["acc_bits"] >= 32 else f"{bits} containers, {r['acc_bits']}-bit accumulators"
    lines = [f"wrote {r['model']} ({width}, {r['calibration']} calibration on "
             f"{r['calibration_inputs']} inputs, {r['requant']} requantization, target {r['target']})"]
    if r.get("auto_calibration_sqnr"):   # say what --calibration auto chose, and from what
        lines.append(f"--calibration auto chose {r['calibration']}: output SQNR on the calibration "
                     f"inputs " + ", ".join(f"{m} {_fmt(v)}"
                                            for m, v in r["auto_calibration_sqnr"].items()))
    for c in r.get("bit_widths", []):
        lines.append(f"  layer {c['layer']}: {c['in_bits']}-bit input x {c['w_bits']}-bit weights "
                     f"({c['taps']} taps), accumulator within {c['acc_bits_needed']} of "
                     f"{c['acc_bits']} bits")
    if "shift" in r:
        lines.append("shift per layer: " + ", ".join(
            f"{x['layer']} {x['shift']} (k {x['k_min']}..{x['k_max']}"
            + (f", {x['w_bits']}-bit weights)" if x["w_bits"] != 8 else ")") for x in r["shift"]["layers"]))
        lines += [f"  codes of {t}: real = {c['scale']:.6g}·(u − {c['zero_point']})"
                  for t, c in r["shift"]["codes"].items()]
    if "mixed" in r:
        m = r["mixed"]
        lines.append(f"weight bits per layer: {', '.join(f'{k} {v}' for k, v in m['bits'].items())}; "
                     f"{m['weight_bytes']} B of weights (int8: {m['int8_weight_bytes']} B, budget "
                     f"{m['budget']} B)")
    lines += [f"note: {n}" for n in r.get("notes", [])]
    for key, what in (("calibration_sqnr", "calibration"), ("evaluation_sqnr", "evaluation")):
        if key not in r:
            continue
        s = r[key]
        lines.append(f"SQNR vs float on the {what} inputs:")
        lines += [f"  output {o['name']}: {_fmt(o['sqnr_db'])}" for o in s["outputs"]]
        lines += [f"  layer {x['layer']} ({_short(x['name'])}): {_fmt(x['sqnr_db'])}" for x in s["layers"]]
        cmp = s.get("compare", {})
        lines += [f"  --compare output {o['name']}: {_fmt(o['sqnr_db'])}" for o in cmp.get("outputs", [])]
        lines += [f"  --compare layer {x['layer']} ({_short(x['name'])}): {_fmt(x['sqnr_db'])}"
                  for x in cmp.get("layers", [])]
        if cmp.get("unmatched"):
            lines.append(f"  --compare: {len(cmp['unmatched'])} layers have no tensor of the same "
                         f"name in the compared model")
    return "\n".join(lines)


def _short(name: str, width: int = 48) -> str:
    return name if len(name) <= width else "…" + name[-(width - 1):]
