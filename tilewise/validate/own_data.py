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
- with --float-model (float_layers.py): each layer's C output also against the float model's
  value of the same tensor, in real units (float_rmse, float_cos, float_sqnr_db columns of the
  per-layer CSV, and the report's `float_model`);
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
     "layer_csv": [paths written], "metrics_csv": [paths written],
     "float_model": {"file", "layers": [{"index", "name", "float_tensor", "float_rmse",
                     "float_cos", "float_sqnr_db"}]} | None  (no --float-model)}

acc is None for a non-classifier output; l2r / cos None where undefined (metrics.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TilewiseError
from ..golden.samples import arrays
from ..ir.tensor import np_dtype
from . import metrics as M
from .check import check_platform, golden_outputs, release_work_dir, validate_network, work_dir
from .chunked import CHUNK, run_chunks
from .csv_files import write_csv
from .data import read_labels
from .report import GoldenLayerMismatch, OutputMismatch, ValidationReport

METRICS_CSV = "metrics.csv"
LAYER_CSV = "layer_errors.csv"


def _host_outputs(project, n: int, ospecs) -> list[np.ndarray] | None:
    """The generated C's outputs of the last host harness run (its output files): per network
    output [n, *IR shape]; None when a file is missing or short."""
    from .run import io_specs, run_files

    _, paths = run_files(project.path, "run", len(io_specs(project.manifest)[0]), len(ospecs))
    outs = []
    for f, spec in zip(paths, ospecs):
        if not f.exists():
            return None
        raw = np.fromfile(f, dtype=np_dtype(spec.dtype))
        per = int(np.prod(spec.ir_shape, dtype=np.int64))
        if raw.size != n * per:
            return None
        outs.append(raw.reshape(n, *spec.ir_shape))
    return outs


def _entry(against: str, a: np.ndarray, b: np.ndarray, classifier: bool) -> dict[str, Any]:
    return {"against": against, **M.compare(a, b, classifier)}


def validate_data_path(model: str | Path, target, data: str | Path | None = None, *,
                       tiler: str = "model", expected: str | Path | None = None,
                       labels: str | Path | None = None,
                       out_dir: str | Path | None = None, objective: str = "latency",
                       on: str = "host", layer_csv: str | Path | None = None,
                       metrics_csv: str | Path | None = None,
                       layout: str = "auto", cache: str | Path | None = None,
                       c_name: str = "tw", input_dtypes: dict[str, str] | None = None,
                       golden: str | Path | None = None,
                       activations: str | Path | None = None,
                       float_model: str | Path | None = None,
                       ram_budget: int | None = None) -> ValidationReport:
    """`tilewise validate MODEL --data ...` or `--golden DIR` (see the module docstring). Without
    `out_dir` the project is built in a temporary directory, removed when the result is
    bit-exact."""
    from ..pipeline import schedule_network
    from .own_inputs import read_user_data
    from .reference import reference_name, reference_run

    if layer_csv is not None and on != "host":
        raise TilewiseError(f"--layer-csv needs the host build (the per-layer dump runs there); "
                            f"drop it or --on {on}")
    if float_model is not None and on != "host":
        raise TilewiseError(f"--float-model needs the host build (the per-layer dump runs there); "
                            f"drop it or --on {on}")
    ud = read_user_data(model, data, expected=expected, golden=golden, activations=activations,
                        layout=layout, input_dtypes=input_dtypes)
    check_platform(target, on)
    graph, lg, ospecs, inputs = ud.graph, ud.lg, ud.ospecs, ud.inputs
    floats = None
    if float_model is not None:
        from .float_layers import load_float_reference

        floats = load_float_reference(float_model, model, graph, lg, ud.ispecs[0])
    data_desc = ud.data_desc
    n = len(inputs)
    shapes = [tuple(sp.ir_shape) for sp in ospecs]
    classifiers = [M.is_classifier(sh) for sh in shapes]
    lab = lab_src = None
    if labels is not None:
        if len(ospecs) != 1:
            raise TilewiseError(f"{labels}: labels need a network with one output, and this one "
                                f"has {len(ospecs)}; drop --labels")
        if not classifiers[0]:
            raise TilewiseError(f"{labels}: labels need a classifier, and the model's output "
                                f"{'×'.join(map(str, ospecs[0].model_shape))} is not one vector of "
                                f"classes per input; drop --labels")
        lab, lab_src = read_labels(labels, n, int(np.prod(shapes[0], dtype=np.int64)),
                                   data_desc["file"])

    ns = schedule_network(lg, target, tiler, objective=objective, ram_budget=ram_budget)
    lg = ns.layers   # the layers the C runs (attentions fused depth first: pipeline.py)
    if on != "host" and n > CHUNK:
        raise TilewiseError(f"{data_desc['file']}: {n} inputs; at most {CHUNK} run on {on} in one "
                            f"validation (more run on the host, --on host, in chunks)")
    csv_dirs = [Path(out_dir).absolute()] if out_dir is not None else []
    layer_paths = [p / LAYER_CSV for p in csv_dirs] + ([Path(layer_csv)] if layer_csv else [])
    with work_dir(out_dir) as work:   # Ctrl-C or a failure: no tilewise_validate_* left behind
        if on == "host":   # chunk by chunk (chunked.py): memory bounded by the data, not N
            outs: list[list[np.ndarray] | None] = []
            refs: list[Any] = []
            errors = []

            def on_chunk(xs, ref, project, offset) -> None:
                outs.append(_host_outputs(project, len(xs), ospecs))
                if ref.outputs is not None:
                    refs.extend(ref.outputs)
                if layer_paths or floats is not None:
                    if not errors:
                        from .layer_errors import LayerErrors

                        errors.append(LayerErrors(project, lg, cache, floats))
                    errors[0].add(xs)

            chunks = (inputs[i:i + CHUNK] for i in range(0, n, CHUNK))
            report, project = run_chunks(model, ns, graph, chunks, -(-n // CHUNK), n, work,
                                         cache=cache, c_name=c_name, on_chunk=on_chunk)
            # the C's outputs of every input, per output (None: a run wrote none, or validation
            # stopped early at chunked.MAX_MISMATCHES — its note says so)
            complete = all(o is not None for o in outs) and sum(len(o[0]) for o in outs) == n
            ours_q = ([np.concatenate([o[k] for o in outs]) for k in range(len(ospecs))]
                      if complete else None)
            has_ref = len(refs) == n
        else:
            ref = reference_run(graph, model, inputs)
            report, project = validate_network(ns, work, inputs, model=Path(model).name,
                                               reference_name=reference_name(graph),
                                               reference=ref.outputs, cache=cache, on=on,
                                               c_name=c_name)
            report.reference_notes = list(ref.notes)
            report.reference_inexact = ref.inexact
            ours_q = (_per_output(lg, golden_outputs(lg, inputs), shapes)
                      if report.bit_exact else None)   # the same integers as the C's
            has_ref = ref.outputs is not None
            refs = list(ref.outputs) if has_ref else []
            errors = []
        report.notes = list(graph.meta.get("notes", ())) + ud.notes + report.notes
        base = _per_output(lg, refs if has_ref else golden_outputs(lg, inputs), shapes)
        against = report.reference if has_ref else "golden model"
        entries = []
        for k, spec in enumerate(ospecs):
            entries.append(_output_metrics(report, lg, k, spec, shapes[k], classifiers[k],
                                           ours_q[k] if ours_q is not None else None, base[k],
                                           against, ud.expected[k] if ud.expected else None,
                                           ud.expected_desc[k] if ud.expected_desc else None, n))
        met: dict[str, Any] = {"inputs": n, "data": data_desc, **entries[0], "labels": None,
                               "layer_csv": [], "metrics_csv": [], "float_model": None}
        if len(entries) > 1:
            met["outputs"] = entries
        if lab is not None:
            pred = M.predictions(ours_q[0]) if ours_q is not None else None
            met["labels"] = {
                "file": lab_src, "classes": met["output"]["classes"],
                "accuracy": M.accuracy(pred, lab) if pred is not None else None,
                "correct": int((pred == lab).sum()) if pred is not None else None,
                "accuracy_reference": M.accuracy(M.predictions(base[0]), lab) if has_ref else None,
                "confusion": (M.confusion_matrix(lab, pred, met["output"]["classes"]).tolist()
                              if pred is not None else None),
            }
        report.metrics = met
        if ud.golden:
            _golden_layers(report, project, ud, lg, cache)
        if errors:
            from .layer_errors import write_layer_csv

            rows = errors[0].rows()
            if floats is not None:
                from .float_layers import FLOAT_COLUMNS

                met["float_model"] = {"file": str(float_model), "layers": [
                    {k: r[k] for k in ("index", "name", *FLOAT_COLUMNS)} for r in rows]}
            for p in layer_paths:
                write_layer_csv(rows, p)
                met["layer_csv"].append(str(p))
        for p in [d / METRICS_CSV for d in csv_dirs] + ([Path(metrics_csv)] if metrics_csv else []):
            write_metrics_csv(met, p)
            met["metrics_csv"].append(str(p))
    return release_work_dir(report, work, out_dir)


def _per_output(lg, samples: list[Any], shapes: list[tuple[int, ...]]) -> list[np.ndarray]:
    """Samples of the network outputs (golden/samples.py) as one [N, *shape] array per output."""
    parts = [arrays(lg.outputs, s) for s in samples]
    return [np.stack([np.asarray(p[k]).reshape(sh) for p in parts]) for k, sh in enumerate(shapes)]


def _output_metrics(report: ValidationReport, lg, k: int, spec, shape: tuple[int, ...],
                    classifier: bool, ours_q: np.ndarray | None, base: np.ndarray, against: str,
                    exp: np.ndarray | None, exp_desc: dict[str, Any] | None,
                    n: int) -> dict[str, Any]:
    """The metrics of output k (its `output`, `vs_reference`, `vs_expected` entries); integer
    expected values that differ are mismatches of the report."""
    scale = spec.scale if spec.scale is not None else 1.0
    deq = (lambda q: M.dequantize(q, scale, spec.zero_point))
    ours = deq(ours_q) if ours_q is not None else None
    entry: dict[str, Any] = {
        "output": {"name": lg.outputs[k], "shape": list(shape), "dtype": spec.dtype,
                   "scale": spec.scale, "zero_point": spec.zero_point, "classifier": classifier,
                   "classes": int(np.prod(shape, dtype=np.int64)) if classifier else None},
        "vs_reference": _entry(against, ours, deq(base), classifier) if ours is not None else None,
        "vs_expected": None,
    }
    if exp is None:
        return entry
    exp = exp.reshape(n, *shape)
    is_int = exp.dtype.kind in "iu"
    got = _entry("expected", ours, deq(exp) if is_int else exp, classifier) if ours is not None else None
    mism = None
    if is_int and ours_q is not None:
        per_input = (ours_q.reshape(n, -1).astype(np.int64) != exp.reshape(n, -1)).sum(axis=1)
        mism = int(per_input.sum())
        for i in np.flatnonzero(per_input):
            report.mismatches.append(OutputMismatch("expected", int(i), int(per_input[i]),
                                                    lg.outputs[k] if len(lg.outputs) > 1 else None))
    entry["vs_expected"] = {**(got or {"against": "expected"}), "file": exp_desc["file"],
                            "dtype": exp_desc["dtype"], "layout": exp_desc["layout"],
                            "mismatched_elements": mism}
    return entry


def _golden_layers(report: ValidationReport, project, ud, lg, cache) -> None:
    """The exporter's per-layer golden tensors against the C's (golden_files.py) of `lg`, the layers
    the C runs: the report's `golden_layers`; each differing layer a mismatch."""
    from .golden_files import compare_layers

    rows = compare_layers(project, lg, ud.graph, ud.inputs[0], ud.golden, cache)
    report.golden_layers = rows
    for r in rows:
        if r["mismatches"]:
            report.mismatches.append(GoldenLayerMismatch(r["file"], r["name"], r["ir"],
                                                         r["mismatches"]))


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
