"""`tilewise validate` options for validation on the user's own data (validate/own_data.py).

`add_data_options` adds --data, --expected, --labels, --data-layout, --layer-csv, --float-model,
--metrics-csv, --golden (DORY's golden folder) and --activations (Deeploy's per-layer golden tensors) to the
validate parser; `data_requested` says whether any was given and `validate_data_from_args` runs
validate/own_data.py's `validate_data_path` with them (the other options as validate has them).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import TilewiseError
from .options import ram_budget

_DEPENDENT = ("expected", "labels", "layer_csv", "metrics_csv", "activations", "float_model")


def add_data_options(v: argparse.ArgumentParser) -> None:
    v.add_argument("--data", metavar="FILE|DIR",
                   help="validate on your own inputs instead of random ones: a .npy, a .npz (one "
                        "array, or the one named like the model input) or a directory of .npy "
                        "files (one input each, sorted); N inputs of the model's input shape, with "
                        "or without the batch dimension, NHWC or the model's own layout; integers "
                        "are quantized values, floats are quantized with the input's scale and "
                        "zero point (--inputs is then not used)")
    v.add_argument("--expected", metavar="FILE|DIR",
                   help="with --data: the N expected outputs; integers are compared bit for bit, "
                        "floats (e.g. the float model's) by the metrics only")
    v.add_argument("--labels", metavar="FILE",
                   help="with --data: one integer class per input (.npy): accuracy and confusion "
                        "matrix")
    v.add_argument("--data-layout", choices=("auto", "nhwc", "model"), default="auto",
                   help="with --data: the layout of the data and expected outputs when both NHWC "
                        "and the model's own layout would fit (default auto: the model's)")
    v.add_argument("--layer-csv", metavar="FILE",
                   help="with --data: write per-layer error statistics (C vs golden model) here "
                        "(with -o they are also written to DIR/layer_errors.csv)")
    v.add_argument("--float-model", metavar="FILE",
                   help="with --data: the float .onnx / .tflite model the network was quantized "
                        "from; every layer's output is also compared with its (float_rmse, "
                        "float_cos, float_sqnr_db in the per-layer CSV and --json)")
    v.add_argument("--metrics-csv", metavar="FILE",
                   help="with --data: write the metrics as CSV here (with -o also DIR/metrics.csv)")
    v.add_argument("--golden", metavar="DIR",
                   help="validate against DORY's golden folder of the model (NEMO / QuantLab "
                        "exports): input.txt is the input; the network output and every "
                        "out_layerN.txt are compared bit for bit with the generated C's (instead "
                        "of --data / --expected)")
    v.add_argument("--activations", metavar="FILE",
                   help="with --data: Deeploy's activations.npz (per-layer golden tensors, "
                        "compared on the first input; default: activations.npz beside a --data "
                        ".npz)")


def data_requested(args: argparse.Namespace) -> bool:
    if getattr(args, "golden", None) is not None:
        given = [f"--{k}" for k in ("data", "expected", "activations")
                 if getattr(args, k, None) is not None]
        if given:
            raise TilewiseError(f"--golden takes the input and the expected outputs from its "
                                f"folder: drop {', '.join(given)}")
        return True
    if getattr(args, "data", None) is not None:
        return True
    given = [f"--{k.replace('_', '-')}" for k in _DEPENDENT if getattr(args, k, None) is not None]
    if given or getattr(args, "data_layout", "auto") != "auto":
        raise TilewiseError(f"{', '.join(given) or '--data-layout'} need --data (the inputs the "
                            f"outputs, labels or statistics belong to)")
    return False


def validate_data_from_args(args: argparse.Namespace, target, out: Path | None, c_name: str,
                            input_dtypes: dict[str, str] | None = None):
    """`validate --data …` / `--golden DIR` with `out` (the -o directory, already made absolute
    and checked by the CLI), `c_name` (the checked --name) and `input_dtypes` (--input-dtype)."""
    from ..validate.own_data import validate_data_path

    def absolute(p: str | None) -> Path | None:
        return None if p is None else Path(p).resolve()

    return validate_data_path(args.model, target, args.data, tiler=args.tiler,
                              expected=args.expected, labels=args.labels,
                              out_dir=out, objective=args.objective, on=args.on,
                              layer_csv=absolute(args.layer_csv),
                              metrics_csv=absolute(args.metrics_csv), layout=args.data_layout,
                              c_name=c_name, input_dtypes=input_dtypes,
                              golden=absolute(args.golden), activations=absolute(args.activations),
                              float_model=args.float_model, ram_budget=ram_budget(args))
