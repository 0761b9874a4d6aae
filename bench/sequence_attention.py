"""Table 11 — sequence and attention networks (issue 28): Deeploy's integer transformer kernels and
models from ../shared/models/integer_onnx and TFLite's recurrent layers (an int8 LSTM and GRU that
TensorFlow's converter writes from tf_keras models, an SVDF keyword model written with the TFLite
schema as TFLite Micro's is — the tests' own builders), run as a user runs them, on the pulp-open cluster under
GVSoC (8 cores, cycles measured next to the prediction) and counted on the Cortex-M7 (stm32h7:
executed instructions and the Cortex-M7 timing model's estimated cycles), with MACs, MAC/cycle and
the static plan's peak L2 (the activation arena the attention's score tensors live in) as the
network runs — attentions depth first on the cluster (passes/fuse_attention.py: the scores never
in L2) — and with every attention layer by layer (`analyze --layer-by-layer`), the memory
depth-first tiling saves (Jung et al. 2024: up to 6.19× on an attention's peak).

Each row is `tilewise validate NET --target T --on gvsoc|count --json`, with `--data inputs.npz
--expected outputs.npz` for an export (bit-exact against its outputs.npz) and `--inputs 4` for a
TFLite model (bit-exact against LiteRT); a row that is not bit-exact stops the script.
MACs are `analyze --json`'s totals.macs (convolutions, linear layers and the MatMul of two
activations). Anchors (anchors.md, issue 28): Jung et al. 2024 — a tiny transformer block on GAP9 in
0.14 ms, 2.0× faster than PULP-NN and 4.79× than CMSIS-NN on STM32H7; Deeploy — TinyStories Llama at
340 tokens/s on Siracusa.

`python bench/sequence_attention.py [--only NAME,...]` prints the table and writes
bench/sequence_attention.json; bench/run.py runs it as section 11.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import onnx  # noqa: E402

from bench.models import models_dir  # noqa: E402
from bench.tables import Table, render  # noqa: E402
from tilewise.validate.data import infer_code_dtype  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "bench"
DEEPLOY = models_dir() / "integer_onnx" / "deeploy"

#: (row name, folder under ../shared/models/integer_onnx/deeploy)
EXPORTS: tuple[tuple[str, str], ...] = (
    ("Softmax (Regular)", "kernels/Softmax/Regular"),
    ("RMSNorm", "kernels/RMSNorm"),
    ("iNoNorm", "kernels/iNoNorm"),
    ("Attention", "kernels/Attention"),
    ("ICCT", "models/CCT/Int/ICCT"),
    ("EEGFormer", "models/EEGFormer"),
    ("microLlama1", "models/microLlama/INT8/microLlama1"),
    ("microLlama8", "models/microLlama/INT8/microLlama8"),
)

#: (row name, builder writing the TFLite model into a folder): the tests' models (tests/*_models.py)
TFLITE: tuple[tuple[str, str], ...] = (
    ("LSTM kws 49×10→32 (TF)", "lstm"),
    ("GRU kws 49×10→32 (TF)", "gru"),
    ("SVDF keyword (TFLM-like)", "svdf"),
)

#: where each target's code runs when measured
ON = {"pulp-open": "gvsoc", "stm32h7": "count"}


def _cli(*args: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "tilewise.cli", *args, "--json"], capture_output=True,
                         text=True, cwd=ROOT, check=False)
    if out.returncode != 0:
        raise SystemExit(f"bench/sequence_attention.py: tilewise {' '.join(args)} failed: {out.stderr.strip()}")
    return json.loads(out.stdout)


def validate(model: Path, target: str, data: tuple[str, ...]) -> dict:
    """`tilewise validate` of one model with `data` (its golden data, or random inputs) on
    `target`'s measuring platform."""
    d = _cli("validate", str(model), "--target", target, "--on", ON[target], *data)
    if not d.get("bit_exact"):
        raise SystemExit(f"bench/sequence_attention.py: {model} is not bit-exact on {target}")
    return d


def build_tflite(kind: str, out: Path) -> Path:
    """One of the tests' TFLite sequence models, written into `out`."""
    from tests import gru_models, lstm_models, svdf_models

    if kind == "lstm":
        return lstm_models.int8_lstm("kws", out)
    if kind == "gru":
        return gru_models.convert(out)["gru49.tflite"]
    return svdf_models.keyword_model(out / "svdf_keyword.tflite")


def input_dtypes(model: Path, npz: Path) -> str:
    """`--input-dtype` for analyze: each graph input's code type as validate --data infers it from
    the npz's arrays, taken in the graph's input order (the npz names them input_0, input_1, …)."""
    g = onnx.load(model, load_external_data=False).graph
    consts = {i.name for i in g.initializer}
    names = [i.name for i in g.input if i.name not in consts]
    with np.load(npz) as d:
        return ",".join(f"{n}={infer_code_dtype(d[k])}" for n, k in zip(names, d.files, strict=True))


def measure_one(name: str, model: Path, analyze: tuple[str, ...], data: tuple[str, ...]) -> dict:
    macs = _cli("analyze", str(model), "--target", "pulp-open", *analyze)["totals"]["macs"]
    separate = _cli("analyze", str(model), "--target", "pulp-open", "--layer-by-layer", *analyze)["totals"]
    pulp = validate(model, "pulp-open", data)
    m7 = validate(model, "stm32h7", data)
    return {"name": name, "model": str(model), "macs": macs,
            "gvsoc_cycles": pulp["measured_cycles"], "gvsoc_predicted": pulp["predicted_cycles"],
            "peak_l2_bytes": pulp["peak_l2_bytes"], "peak_l2_layer_by_layer": separate["peak_l2_bytes"],
            "m7_instructions": m7["measured_instructions"], "m7_predicted": m7["predicted_instructions"],
            "m7_estimated_cycles": m7["estimated_cycles"], "m7_peak_bytes": m7["peak_l2_bytes"]}


def table(rows: list[dict]) -> Table:
    def ratio(a: float, b: float) -> str:
        return f"{a / b:.2f}" if a and b else "–"

    def count(v: int | None) -> str:   # a row kept from a run before the column existed: –
        return "–" if v is None else f"{v:,}"

    out = []
    for r in rows:
        out.append((r["name"], f"{r['macs']:,}", f"{r['gvsoc_cycles']:,}", f"{r['gvsoc_predicted']:,.0f}",
                    ratio(r["gvsoc_cycles"], r["gvsoc_predicted"]), ratio(r["macs"], r["gvsoc_cycles"]),
                    f"{r['m7_instructions']:,}", f"{r['m7_estimated_cycles']:,}",
                    ratio(r["macs"], r["m7_estimated_cycles"]), count(r.get("peak_l2_layer_by_layer")),
                    f"{r['peak_l2_bytes']:,}", ratio(r.get("peak_l2_layer_by_layer") or 0, r["peak_l2_bytes"])))
    return Table("sequence_attention", "Table 11 — sequence and attention networks: pulp-open (GVSoC, 8 cores) and "
                 "Cortex-M7 (counted)",
                 ("network", "MACs", "GVSoC cycles", "predicted", "meas/pred", "MAC/cycle",
                  "M7 instructions", "M7 est. cycles", "M7 MAC/cycle", "peak L2 B layer by layer",
                  "peak L2 B depth-first", "saved ×"),
                 tuple(out),
                 ("every row bit-exact on both targets: an export against its outputs.npz, a TFLite "
                  "model against LiteRT on 4 random inputs (an SVDF's as consecutive inferences)",
                  "M7 est. cycles: the Cortex-M7 timing model (llvm-mca per executed block + flash "
                  "D-cache fills), an estimate, not a measurement",
                  "peak L2: pulp-open's static plan with every attention layer by layer (analyze "
                  "--layer-by-layer) and as the measured code runs it, depth first (the scores and "
                  "softmax one row tile at a time in L1); the cycles are the depth-first code's"),
                 {"rows": rows})


def measure(only: tuple[str, ...] = ()) -> Table:
    rows = []
    for name, rel in EXPORTS:
        if only and name not in only:
            continue
        f = DEEPLOY / rel
        rows.append(measure_one(name, f / "network.onnx",
                                ("--input-dtype", input_dtypes(f / "network.onnx", f / "inputs.npz")),
                                ("--data", str(f / "inputs.npz"), "--expected", str(f / "outputs.npz"))))
    with tempfile.TemporaryDirectory(prefix="tw_bench_seq_") as tmp:
        for name, kind in TFLITE:
            if only and name not in only:
                continue
            rows.append(measure_one(name, build_tflite(kind, Path(tmp)), (), ("--inputs", "4")))
    return table(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated row names")
    ap.add_argument("--json", default=str(HERE / "sequence_attention.json"))
    a = ap.parse_args(argv)
    only = tuple(s for s in a.only.split(",") if s)
    t = measure(only)
    out = Path(a.json)
    if only and out.exists():   # a partial run replaces its own rows and keeps the others, in order
        old = {r["name"]: r for r in json.loads(out.read_text())["data"]["rows"]}
        new = {r["name"]: r for r in t.data["rows"]}
        names = [n for n, _ in (*EXPORTS, *TFLITE) if n in old or n in new]
        t = table([new.get(n) or old[n] for n in names])
    print(render(t))
    out.write_text(json.dumps(t.to_json(), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
