"""`tilewise quantize` options and command (hooked into tilewise/cli.py by `add_quantize`).

    tilewise quantize FLOAT.onnx --calib DATA --target T [--bits 8]
        [--calibration minmax|percentile|mse] [--percentile P] [--eval DATA] [--compare INT.onnx]
        -o OUT.onnx [--json]

DATA is read like `validate --data` (validate/data.py: .npy, .npz or a directory of .npy), in the
model's own layout, N inputs with or without the batch dimension. The target names the requantization
the model is written for; every built-in target takes onnx-mode layers so far (NEXT.md).
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
    q.add_argument("model", metavar="FLOAT_MODEL", help="float .onnx model")
    q.add_argument("--calib", required=True, metavar="FILE|DIR",
                   help="calibration inputs (.npy, .npz or a directory of .npy), the model's layout")
    q.add_argument("--target", required=True, help="built-in target the model is quantized for")
    q.add_argument("--bits", type=int, default=8, help="weight and activation bits (8 so far)")
    q.add_argument("--calibration", default="minmax", choices=("minmax", "percentile", "mse"),
                   help="activation range estimate (default: minmax)")
    q.add_argument("--percentile", type=float, default=99.99, metavar="P",
                   help="with --calibration percentile: the percentile kept (default 99.99)")
    q.add_argument("--eval", metavar="FILE|DIR", help="evaluation inputs: SQNR on them too")
    q.add_argument("--compare", metavar="INT_MODEL", help="an existing integer .onnx model of the "
                   "same network (float in, float out): its output SQNR on the same inputs")
    q.add_argument("-o", "--out", required=True, metavar="OUT.onnx", help="the quantized model")
    q.add_argument("--json", action="store_true", help="print the result and SQNR figures as JSON")
    q.set_defaults(fn=cmd_quantize)


def _read_inputs(model, path: str, what: str) -> np.ndarray:
    from ..validate.data import read_array
    from . import calibration_inputs

    names = tuple(vi.name for vi in model.graph.input)
    return calibration_inputs(model, read_array(path, what, names).array, path)


def _read_compare(path: str):
    import onnx

    p = Path(path)
    if not p.is_file() or p.suffix.lower() != ".onnx":
        raise TilewiseError(f"--compare {path}: give an existing integer .onnx model")
    try:
        return onnx.load(str(p))
    except Exception as e:   # noqa: BLE001 — the user's file
        raise TilewiseError(f"--compare {path}: cannot read the file as an ONNX model ({type(e).__name__})") from None


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
    from . import load_float_onnx, quantize_model, sqnr_json

    target = get_target(args.target)
    out = _out_path(args.out)
    if args.bits != 8:
        raise TilewiseError(f"--bits {args.bits}: tilewise quantize writes 8-bit models so far")
    if not 50.0 < args.percentile <= 100.0:
        raise TilewiseError(f"--percentile {args.percentile}: give a value in (50, 100]")
    model = load_float_onnx(args.model)
    calib = _read_inputs(model, args.calib, "calibration inputs")
    evals = _read_inputs(model, args.eval, "evaluation inputs") if args.eval else None
    compare = _read_compare(args.compare) if args.compare else None
    res = quantize_model(model, calib, args.calibration, args.bits, args.percentile)
    try:
        onnx.save(res.model, str(out))
    except OSError as e:
        raise TilewiseError(f"-o {args.out}: cannot write the model ({e.strerror or e})") from None
    result = {"model": str(out), "float_model": args.model, "target": target.name, "bits": args.bits,
              "calibration": args.calibration, "requant": REQUANT,
              "calibration_inputs": int(len(calib)),
              "calibration_sqnr": _guarded(model, res, calib, compare, args.compare)}
    if evals is not None:
        result["evaluation_inputs"] = int(len(evals))
        result["evaluation_sqnr"] = _guarded(model, res, evals, compare, args.compare)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(_text(result))
    return 0


def _guarded(model, res, inputs, compare, compare_path):
    from . import sqnr_json

    try:
        return sqnr_json(model, res, inputs, compare)
    except Exception as e:   # noqa: BLE001 — onnxruntime rejecting the --compare model's inputs
        if compare is None:
            raise
        raise TilewiseError(f"--compare {compare_path}: onnxruntime cannot run it on the float "
                            f"model's inputs ({str(e).splitlines()[0][:160]})") from None


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
        lines += [f"  layer {x['layer']} ({x['name']}): {_fmt(x['sqnr_db'])}" for x in s["layers"]]
        lines += [f"  --compare output {o['name']}: {_fmt(o['sqnr_db'])}" for o in s.get("compare", {}).get("outputs", [])]
    return "\n".join(lines)
