"""`tilewise quantize` options and command (hooked into tilewise/cli.py by `add_quantize`).

    tilewise quantize FLOAT.onnx --calib DATA --target T [--bits 8|16]
        [--calibration minmax|percentile|mse|auto] [--percentile P] [--eval DATA] [--compare INT.onnx]
        -o OUT.onnx [--json]

DATA is read like `validate --data` (validate/data.py: .npy, .npz or a directory of .npy), in the
model's own layout (NHWC for a .tflite model), N inputs with or without the batch dimension. The
target names the requantization the model is written for; every built-in target takes onnx-mode
layers so far (shift-style scales for PULP/NE16/DIANA are not built yet).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from ..errors import TilewiseError

REQUANT = "onnx"   # onnxruntime's QLinear requantization (golden/requant.py mode "onnx")


def add_quantize(sub) -> None:
    q = sub.add_parser("quantize", help="float ONNX model -> int8 QDQ ONNX model for a target: "
                       "per-channel weights, calibrated activations, SQNR vs float")
    q.add_argument("model", metavar="FLOAT_MODEL", help="float .onnx or .tflite model")
    q.add_argument("--calib", required=True, metavar="FILE|DIR",
                   help="calibration inputs (.npy, .npz or a directory of .npy), the model's layout")
    q.add_argument("--target", required=True, help="built-in target the model is quantized for")
    q.add_argument("--bits", type=int, default=8, help="activation bits: 8 (int8 weights and activations) or 16 (int16 "
                   "symmetric activations, int8 weights: TFLite's 16x8 scheme)")
    q.add_argument("--calibration", default="minmax", choices=("minmax", "percentile", "mse", "auto"),
                   help="activation range estimate (default: minmax; auto: the method whose model "
                   "has the best output SQNR on the calibration inputs)")
    q.add_argument("--percentile", type=float, default=99.99, metavar="P",
                   help="with --calibration percentile: the percentile kept (default 99.99)")
    q.add_argument("--eval", metavar="FILE|DIR", help="evaluation inputs: SQNR on them too")
    q.add_argument("--compare", metavar="INT_MODEL", help="an existing integer model of the same "
                   "network (.onnx float in/out, run by onnxruntime; .tflite, run by LiteRT): its "
                   "output SQNR on the same inputs")
    q.add_argument("-o", "--out", required=True, metavar="OUT.onnx", help="the quantized model")
    q.add_argument("--json", action="store_true", help="print the result and SQNR figures as JSON")
    q.set_defaults(fn=cmd_quantize)


def _read_inputs(model, path: str, what: str, nhwc: bool) -> tuple[np.ndarray, np.ndarray]:
    """(inputs in the ONNX model's layout, the array as given)."""
    from ..validate.data import read_array
    from .pipeline import calibration_inputs

    names = tuple(vi.name for vi in model.graph.input)
    raw = read_array(path, what, names).array
    return calibration_inputs(model, raw, path, nhwc), raw


def _compare_outputs(path: str, inputs: np.ndarray, raw: np.ndarray) -> list[list[np.ndarray]]:
    """The --compare model's outputs: ONNX by onnxruntime, TFLite by LiteRT (on the NHWC data)."""
    import onnx

    from .sqnr import onnx_outputs, tflite_outputs

    p = Path(path)
    if not p.is_file() or p.suffix.lower() not in (".onnx", ".tflite"):
        raise TilewiseError(f"--compare {path}: give an existing integer .onnx or .tflite model")
    try:
        if p.suffix.lower() == ".tflite":
            return tflite_outputs(str(p), raw.astype(np.float32))
        return onnx_outputs(onnx.load(str(p)), inputs)
    except TilewiseError:
        raise
    except Exception as e:   # noqa: BLE001 — the user's model does not run on these inputs
        raise TilewiseError(f"--compare {path}: the runtime cannot run it on the float model's inputs "
                            f"({str(e).splitlines()[0][:160] if str(e) else type(e).__name__})") from None


def _out_path(path: str) -> Path:
    p = Path(path).absolute()
    if p.suffix.lower() != ".onnx":
        raise TilewiseError(f"-o {path}: the quantized model is written as ONNX; name it *.onnx")
    if p.is_dir():
        raise TilewiseError(f"-o {path}: is a directory; give the file name of the quantized model")
    if not p.parent.is_dir():
        raise TilewiseError(f"-o {path}: the directory {p.parent} does not exist")
    return p


def cmd_quantize(args: argparse.Namespace) -> int:
    import onnx

    from ..targets.registry import get_target
    from .pipeline import load_float_onnx, quantize_model, sqnr_json

    target = get_target(args.target)
    out = _out_path(args.out)
    if args.bits not in (8, 16):
        raise TilewiseError(f"--bits {args.bits}: tilewise quantize writes 8-bit models, or 16-bit "
                            f"activations with 8-bit weights (--bits 16)")
    if not 50.0 < args.percentile <= 100.0:
        raise TilewiseError(f"--percentile {args.percentile}: give a value in (50, 100]")
    model = load_float_onnx(args.model)
    nhwc = Path(args.model).suffix.lower() == ".tflite"
    calib, calib_raw = _read_inputs(model, args.calib, "calibration inputs", nhwc)
    evals = _read_inputs(model, args.eval, "evaluation inputs", nhwc) if args.eval else None
    res = quantize_model(model, calib, args.calibration, args.bits, args.percentile)
    try:
        onnx.save(res.model, str(out))
    except OSError as e:
        raise TilewiseError(f"-o {args.out}: cannot write the model ({e.strerror or e})") from None
    result = {"model": str(out), "float_model": args.model, "target": target.name, "bits": args.bits,
              "calibration": res.method, "requant": REQUANT,
              "calibration_inputs": int(len(calib))}
    if res.method_sqnr:
        result["auto_calibration_sqnr"] = {m: None if v == float("inf") else round(v, 3)
                                           for m, v in res.method_sqnr.items()}
    sets = [("calibration", (calib, calib_raw))] + ([("evaluation", evals)] if evals else [])
    for key, (x, raw) in sets:
        cmp = _compare_outputs(args.compare, x, raw) if args.compare else None
        result[f"{key}_inputs"] = int(len(x))
        result[f"{key}_sqnr"] = sqnr_json(model, res, x, cmp)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(_text(result))
    return 0


def _fmt(db) -> str:
    return "exact" if db is None else f"{db:.2f} dB"


def _text(r: dict) -> str:
    lines = [f"wrote {r['model']} (int{r['bits']}, {r['calibration']} calibration on "
             f"{r['calibration_inputs']} inputs, {r['requant']} requantization, target {r['target']})"]
    for key, what in (("calibration_sqnr", "calibration"), ("evaluation_sqnr", "evaluation")):
        if key not in r:
            continue
        s = r[key]
        lines.append(f"SQNR vs float on the {what} inputs:")
        lines += [f"  output {o['name']}: {_fmt(o['sqnr_db'])}" for o in s["outputs"]]
        lines += [f"  layer {x['layer']} ({_short(x['name'])}): {_fmt(x['sqnr_db'])}" for x in s["layers"]]
        lines += [f"  --compare output {o['name']}: {_fmt(o['sqnr_db'])}" for o in s.get("compare", {}).get("outputs", [])]
    return "\n".join(lines)


def _short(name: str, width: int = 48) -> str:
    return name if len(name) <= width else "…" + name[-(width - 1):]
