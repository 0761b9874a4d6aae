"""MAC/cycle of the MatMul of two int8 activations on pulp-open's cluster (GVSoC), issue 28's
acceptance: a 64x64x64 MatMul → RequantShift (tests/attention_models.py matmul_net; b given as
[k][n], and as attention's Kᵀ through a Transpose of [n][k]) on 8 and on 1 core.

`python bench/mm_act.py` validates each model on GVSoC (bit-exact with the golden model on random
and extreme inputs), reads the MatMul layer's measured cycles and writes bench/mm_act.json:
cycles, MAC/cycle and the cost model's prediction per case and core count.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.attention_models import dtypes, matmul_net  # noqa: E402
from tilewise.frontend import load_model  # noqa: E402
from tilewise.passes import lower  # noqa: E402
from tilewise.pipeline import schedule_network  # noqa: E402
from tilewise.targets.registry import get_target  # noqa: E402
from tilewise.validate.check import validate_model  # noqa: E402

HERE = Path(__file__).resolve().parent
CASES = {"64x64x64": dict(heads=1, m=64, k=64, n=64),
         "64x64x64 b=Transpose(K)": dict(heads=1, m=64, k=64, n=64, b_from_t=True)}


def run(name: str, case: dict, cores: int, work: Path) -> dict:
    path = work / f"{name.replace(' ', '_').replace('=', '_')}.onnx"
    onnx.save(matmul_net(**case), str(path))
    g = load_model(path, dtypes())
    ns = schedule_network(lower(g), get_target("pulp-open", cores=cores))
    r = validate_model(path, ns, g, n_random=2, out_dir=work / f"{path.stem}_{cores}", on="gvsoc")
    assert r.bit_exact, r.to_json()["mismatches"]
    (i, layer, s), = [(i, x, s) for i, (x, s) in enumerate(zip(ns.layers.layers, ns.schedules))
                      if str(x.op) == "matmul"]
    meas = r.to_json()["layers"][i]["measured_cycles"]
    return {"case": name, "cores": cores, "binding": s.binding, "macs": layer.macs, "measured_cycles": meas,
            "mac_per_cycle": round(layer.macs / meas, 2), "predicted_cycles": round(s.cycles),
            "predicted_over_measured": round(s.cycles / meas, 3)}


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory(prefix="tw_mm_bench_") as tmp:
        for name, case in CASES.items():
            for cores in (8, 1):
                row = run(name, case, cores, Path(tmp))
                rows.append(row)
                print(f"{name:26s} {cores} core(s): {row['measured_cycles']:>8,} cycles, "
                      f"{row['mac_per_cycle']:5.2f} MAC/cycle (predicted {row['predicted_cycles']:,})", flush=True)
    (HERE / "mm_act.json").write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
