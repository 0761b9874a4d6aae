"""Table 11 — sequence and attention networks (issue 28): Deeploy's integer transformer kernels and
models from ../shared/models/integer_onnx, run as a user runs them, on the pulp-open cluster under
GVSoC (8 cores, cycles measured next to the prediction) and counted on the Cortex-M7 (stm32h7:
executed instructions and the Cortex-M7 timing model's estimated cycles), with MACs, MAC/cycle and
the static plan's peak L2 (the activation arena the attention's score tensors live in).

Each row is `tilewise validate NET --target T --on gvsoc|count --data inputs.npz --expected
outputs.npz --json`; a row that is not bit-exact against the export's outputs.npz stops the script.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import onnx  # noqa: E402

from bench.tables import Table, render  # noqa: E402
from tilewise.validate.data import infer_code_dtype  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "bench"
DEEPLOY = ROOT.parent / "shared" / "models" / "integer_onnx" / "deeploy"

#: (row name, folder under ../shared/models/integer_onnx/deeploy)
NETWORKS: tuple[tuple[str, str], ...] = (
    ("Softmax (Regular)", "kernels/Softmax/Regular"),
    ("RMSNorm", "kernels/RMSNorm"),
    ("iNoNorm", "kernels/iNoNorm"),
    ("Attention", "kernels/Attention"),
    ("ICCT", "models/CCT/Int/ICCT"),
    ("EEGFormer", "models/EEGFormer"),
    ("microLlama1", "models/microLlama/INT8/microLlama1"),
    ("microLlama8", "models/microLlama/INT8/microLlama8"),
)

#: where each target's code runs when measured
ON = {"pulp-open": "gvsoc", "stm32h7": "count"}


def _cli(*args: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "tilewise.cli", *args, "--json"], capture_output=True,
                         text=True, cwd=ROOT, check=False)
    if out.returncode != 0:
        raise SystemExit(f"bench/sequence_attention.py: tilewise {' '.join(args)} failed: {out.stderr.strip()}")
    return json.loads(out.stdout)


def validate(folder: Path, target: str) -> dict:
    """`tilewise validate` of one export against its golden data on `target`'s measuring platform."""
    d = _cli("validate", str(folder / "network.onnx"), "--target", target, "--on", ON[target],
             "--data", str(folder / "inputs.npz"), "--expected", str(folder / "outputs.npz"))
    if not d.get("bit_exact"):
        raise SystemExit(f"bench/sequence_attention.py: {folder} is not bit-exact on {target}")
    return d


def input_dtypes(model: Path, npz: Path) -> str:
    """`--input-dtype` for analyze: each graph input's code type as validate --data infers it from
    the npz's arrays, taken in the graph's input order (the npz names them input_0, input_1, …)."""
    g = onnx.load(model, load_external_data=False).graph
    consts = {i.name for i in g.initializer}
    names = [i.name for i in g.input if i.name not in consts]
    with np.load(npz) as d:
        return ",".join(f"{n}={infer_code_dtype(d[k])}" for n, k in zip(names, d.files, strict=True))


def measure_one(name: str, rel: str) -> dict:
    folder = DEEPLOY / rel
    macs = _cli("analyze", str(folder / "network.onnx"), "--target", "pulp-open",
                "--input-dtype", input_dtypes(folder / "network.onnx", folder / "inputs.npz"))["totals"]["macs"]
    pulp = validate(folder, "pulp-open")
    m7 = validate(folder, "stm32h7")
    return {"name": name, "folder": rel, "macs": macs,
            "gvsoc_cycles": pulp["measured_cycles"], "gvsoc_predicted": pulp["predicted_cycles"],
            "peak_l2_bytes": pulp["peak_l2_bytes"],
            "m7_instructions": m7["measured_instructions"], "m7_predicted": m7["predicted_instructions"],
            "m7_estimated_cycles": m7["estimated_cycles"], "m7_peak_bytes": m7["peak_l2_bytes"]}


def table(rows: list[dict]) -> Table:
    def ratio(a: float, b: float) -> str:
        return f"{a / b:.2f}" if a and b else "–"

    out = []
    for r in rows:
        out.append((r["name"], f"{r['macs']:,}", f"{r['gvsoc_cycles']:,}", f"{r['gvsoc_predicted']:,.0f}",
                    ratio(r["gvsoc_cycles"], r["gvsoc_predicted"]), ratio(r["macs"], r["gvsoc_cycles"]),
                    f"{r['m7_instructions']:,}", f"{r['m7_estimated_cycles']:,}",
                    ratio(r["macs"], r["m7_estimated_cycles"]), f"{r['peak_l2_bytes']:,}"))
    return Table("11", "Table 11 — sequence and attention networks: pulp-open (GVSoC, 8 cores) and "
                 "Cortex-M7 (counted)",
                 ("network", "MACs", "GVSoC cycles", "predicted", "meas/pred", "MAC/cycle",
                  "M7 instructions", "M7 est. cycles", "M7 MAC/cycle", "peak L2 B"),
                 tuple(out),
                 ("every row bit-exact against the export's outputs.npz on both targets",
                  "M7 est. cycles: the Cortex-M7 timing model (llvm-mca per executed block + flash "
                  "D-cache fills), an estimate, not a measurement"),
                 {"rows": rows})


def measure(only: tuple[str, ...] = ()) -> Table:
    rows = [measure_one(n, rel) for n, rel in NETWORKS if not only or n in only]
    return table(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated row names")
    ap.add_argument("--json", default=str(HERE / "sequence_attention.json"))
    a = ap.parse_args(argv)
    t = measure(tuple(s for s in a.only.split(",") if s))
    print(render(t))
    Path(a.json).write_text(json.dumps(t.to_json(), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
