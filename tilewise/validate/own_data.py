"""`tilewise validate MODEL --data FILE [--expected FILE] [--labels FILE]`: validation on the user's
own inputs, with metrics, as `stm32ai validate --valinput/--valoutput` does it.

The user's N inputs (data.py: read, shape- and range-checked, floats quantized as the model's
runtime does) replace the random inputs of `validate_model`: the generated C runs on them and is
held bit for bit against the golden model and the reference runtime exactly as there
(check.validate_network) — on the host CHUNK inputs at a time through chunked.py's `run_chunks`
(one build; outputs, metrics and per-layer statistics gathered chunk by chunk, so memory is the
data's own plus one chunk's whatever N), off the host in one run of at most CHUNK inputs. On top
of that:

- with --expected (N outputs): integer expected outputs are compared bit for bit with the C's
  (each differing input is a mismatch, exit 1); float ones (e.g. the float model's outputs) are
  compared in metrics only, against our outputs dequantized;
- metrics (metrics.py) of the C's outputs, dequantized with the output's scale and zero point,
  against the reference runtime's (the golden model's when the model has no reference) and against
  the expected outputs: acc (argmax agreement, classifiers), rmse, mae, max_abs, l2r, cos;
- with --labels: accuracy of the C's outputs and of the reference's against the labels, and the
  C's confusion matrix;
- per-layer error statistics (layer_errors.py) of the C's per-layer outputs (the -DTW_DUMP_LAYERS
  build) against the golden model's, as CSV: into the project directory with -o, and/or --layer-csv;
- the metrics as CSV (one row per comparison): into the project directory with -o, and/or
  --metrics-csv.

The report's `metrics` key (ValidationReport.metrics, in to_json) has this stable shape:

    {"inputs": N,
     "data": {"file", "count", "layout", "dtype", "shape", "values"[, "scale", "zero_point",
              "rounding"]},
     "output": {"shape": per-input IR shape, "dtype", "scale", "zero_point", "classifier": bool,
                "classes": int | None},
     "vs_reference": {"against": name, "inputs", "elements", "acc", "rmse", "mae", "max_abs",
                      "l2r", "cos"} | None  (None: the C's outputs are unavailable, e.g. the run
                                             failed off the host),
     "vs_expected": {same keys, plus "file", "dtype", "layout", "mismatched_elements" (integer
                     expected only, else None)} | None  (no --expected),
     "labels": {"file", "classes", "accuracy": C's, "accuracy_reference": reference's (None
                without one), "correct", "confusion": [[int]] rows true / columns predicted}
               | None  (no --labels),
     "layer_csv": [paths written], "metrics_csv": [paths written]}

acc is None for a non-classifier output; l2r / cos None where undefined (metrics.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TilewiseError
from ..ir.tensor import np_dtype
from . import metrics as M
from .csv_files import write_csv
from .check import (ValidationReport, check_platform, golden_outputs, release_work_dir,
                    validate_network, work_dir)
from .chunked import CHUNK, run_chunks
from .data import check_count, input_spec, output_spec, read_array, read_labels, to_ir

METRICS_CSV = "metrics.csv"
LAYER_CSV = "layer_errors.csv"


def _host_outputs(project_path: Path, n: int, out_dtype: str,
                  shape: tuple[int, ...]) -> np.ndarray | None:
    """The generated C's outputs [n, *shape] of the last host harness run (its output file)."""
    f = project_path / "run_outputs.bin"
    if not f.exists():
        return None
    raw = np.fromfile(f, dtype=np_dtype(out_dtype))
    per = int(np.prod(shape, dtype=np.int64))
    return raw.reshape(n, *shape) if raw.size == n * per else None


def _entry(against: str, a: np.ndarray, b: np.ndarray, classifier: bool) -> dict[str, Any]:
    return {"against": against, **M.compare(a, b, classifier)}


def validate_data_path(model: str | Path, target, data: str | Path, *, tiler: str = "model",
                       expected: str | Path | None = None, labels: str | Path | None = None,
                       out_dir: str | Path | None = None, objective: str = "latency",
                       on: str = "host", layer_csv: str | Path | None = None,
                       metrics_csv: str | Path | None = None,
                       layout: str = "auto", cache: str | Path | None = None,
                       c_name: str = "tw") -> ValidationReport:
    """`tilewise validate MODEL --data ...` (see the module docstring). Without `out_dir` the
    project is built in a temporary directory, removed when the result is bit-exact."""
    from ..frontend import load_model
    from ..passes import lower
    from ..schedule.network import schedule_network
    from .reference import reference_name, reference_run

    if layer_csv is not None and on != "host":
        raise TilewiseError(f"--layer-csv needs the host build (the per-layer dump runs there); "
                            f"drop it or --on {on}")
    graph = load_model(model)
    check_platform(target, on)
    lg = lower(graph)
    ispec, ospec = input_spec(graph, lg), output_spec(graph, lg)
    xs, data_desc = to_ir(read_array(data, "inputs", ispec.names), ispec, "inputs", layout)
    n = len(xs)
    inputs = [x.reshape(ispec.ir_shape) for x in xs]
    out_shape = tuple(ospec.ir_shape)
    classifier = M.is_classifier(out_shape)
    classes = int(np.prod(out_shape, dtype=np.int64)) if classifier else None
    exp = exp_desc = None
    if expected is not None:
        exp, exp_desc = to_ir(read_array(expected, "expected outputs", ospec.names), ospec,
                              "expected outputs", layout, keep_float=True)
        check_count(n, data_desc["file"], len(exp), exp_desc["file"], "expected outputs")
    lab = lab_src = None
    if labels is not None:
        if not classifier:
            raise TilewiseError(f"{labels}: labels need a classifier, and the model's output "
                                f"{'×'.join(map(str, ospec.model_shape))} is not one vector of "
                                f"classes per input; drop --labels")
        lab, lab_src = read_labels(labels, n, classes, data_desc["file"])

    ns = schedule_network(lg, target, tiler, objective=objective)
    if on != "host" and n > CHUNK:
        raise TilewiseError(f"{data_desc['file']}: {n} inputs; at most {CHUNK} run on {on} in one "
                            f"validation (more run on the host, --on host, in chunks)")
    csv_dirs = [Path(out_dir).absolute()] if out_dir is not None else []
    layer_paths = [p / LAYER_CSV for p in csv_dirs] + ([Path(layer_csv)] if layer_csv else [])
    with work_dir(out_dir) as work:   # Ctrl-C or a failure: no tilewise_validate_* left behind
        if on == "host":   # chunk by chunk (chunked.py): memory bounded by the data, not N
            outs: list[np.ndarray] = []
            refs: list[np.ndarray] = []
            errors = []

            def on_chunk(xs, ref, project, offset) -> None:
                outs.append(_host_outputs(project.path, len(xs), ospec.dtype, out_shape))
                if ref.outputs is not None:
                    refs.extend(np.asarray(r).reshape(out_shape) for r in ref.outputs)
                if layer_paths:
                    if not errors:
                        from .layer_errors import LayerErrors

                        errors.append(LayerErrors(project, lg, cache))
                    errors[0].add(xs)

            chunks = (inputs[i:i + CHUNK] for i in range(0, n, CHUNK))
            report, project = run_chunks(model, ns, graph, chunks, -(-n // CHUNK), n, work,
                                         cache=cache, c_name=c_name, on_chunk=on_chunk)
            # the C's outputs of every input (None: a run wrote none, or validation stopped early
            # at chunked.MAX_MISMATCHES — its note says so)
            complete = all(o is not None for o in outs) and sum(len(o) for o in outs) == n
            ours_q = np.concatenate(outs) if complete else None
            has_ref = len(refs) == n
        else:
            ref = reference_run(graph, model, inputs)
            report, project = validate_network(ns, work, inputs, model=Path(model).name,
                                               reference_name=reference_name(graph),
                                               reference=ref.outputs, cache=cache, on=on,
                                               c_name=c_name)
            report.reference_notes = list(ref.notes)
            ours_q = (np.stack([np.asarray(g).reshape(out_shape) for g in golden_outputs(lg, inputs)])
                      if report.bit_exact else None)   # the same integers as the C's
            has_ref = ref.outputs is not None
            refs = list(ref.outputs) if has_ref else []
            errors = []
        report.notes = list(graph.meta.get("notes", ())) + report.notes
        scale = ospec.scale if ospec.scale is not None else 1.0
        deq = (lambda q: M.dequantize(q, scale, ospec.zero_point))
        ours = deq(ours_q) if ours_q is not None else None
        if has_ref:
            against, base = report.reference, np.stack([np.asarray(r).reshape(out_shape) for r in refs])
        else:
            against, base = "golden model", np.stack([np.asarray(g).reshape(out_shape)
                                                      for g in golden_outputs(lg, inputs)])
        met: dict[str, Any] = {
            "inputs": n, "data": data_desc,
            "output": {"shape": list(out_shape), "dtype": ospec.dtype, "scale": ospec.scale,
                       "zero_point": ospec.zero_point, "classifier": classifier, "classes": classes},
            "vs_reference": _entry(against, ours, deq(base), classifier) if ours is not None else None,
            "vs_expected": None, "labels": None, "layer_csv": [], "metrics_csv": [],
        }
        if exp is not None:
            exp = exp.reshape(n, *out_shape)
            is_int = exp.dtype.kind in "iu"
            entry = None
            if ours is not None:
                entry = _entry("expected", ours, deq(exp) if is_int else exp, classifier)
            mism = None
            if is_int and ours_q is not None:
                per_input = (ours_q.reshape(n, -1).astype(np.int64) != exp.reshape(n, -1)).sum(axis=1)
                mism = int(per_input.sum())
                for i in np.flatnonzero(per_input):
                    report.mismatches.append({"kind": "output", "against": "expected", "input": int(i),
                                              "elements": int(per_input[i])})
            met["vs_expected"] = {**(entry or {"against": "expected"}),
                                  "file": exp_desc["file"], "dtype": exp_desc["dtype"],
                                  "layout": exp_desc["layout"], "mismatched_elements": mism}
        if lab is not None:
            pred = M.predictions(ours_q) if ours_q is not None else None
            met["labels"] = {
                "file": lab_src, "classes": classes,
                "accuracy": M.accuracy(pred, lab) if pred is not None else None,
                "correct": int((pred == lab).sum()) if pred is not None else None,
                "accuracy_reference": M.accuracy(M.predictions(base), lab) if has_ref else None,
                "confusion": (M.confusion_matrix(lab, pred, classes).tolist() if pred is not None else None),
            }
        report.metrics = met
        if errors:
            from .layer_errors import write_layer_csv

            rows = errors[0].rows()
            for p in layer_paths:
                write_layer_csv(rows, p)
                met["layer_csv"].append(str(p))
        for p in [d / METRICS_CSV for d in csv_dirs] + ([Path(metrics_csv)] if metrics_csv else []):
            write_metrics_csv(met, p)
            met["metrics_csv"].append(str(p))
    return release_work_dir(report, work, out_dir)


METRIC_COLUMNS = ("comparison", "against", "inputs", "elements", "acc", "rmse", "mae", "max_abs",
                  "l2r", "cos", "mismatched_elements")


def metrics_rows(met: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per comparison of `metrics` (the METRIC_COLUMNS), labels' accuracies included."""
    rows = []
    for key in ("vs_reference", "vs_expected"):
        e = met.get(key)
        if e:
            rows.append({"comparison": f"C {key.replace('_', ' ')}", **{c: e.get(c) for c in METRIC_COLUMNS[1:]}})
    lab = met.get("labels")
    if lab:
        rows.append({"comparison": "C vs labels", "against": "labels", "inputs": met["inputs"],
                     "acc": lab["accuracy"]})
        if lab.get("accuracy_reference") is not None:
            rows.append({"comparison": "reference vs labels", "against": "labels",
                         "inputs": met["inputs"], "acc": lab["accuracy_reference"]})
    return rows


def write_metrics_csv(met: dict[str, Any], path: str | Path) -> None:
    write_csv(metrics_rows(met), METRIC_COLUMNS, path, "metrics CSV")


__all__ = ["LAYER_CSV", "METRICS_CSV", "METRIC_COLUMNS", "metrics_rows", "validate_data_path",
           "write_csv", "write_metrics_csv"]
