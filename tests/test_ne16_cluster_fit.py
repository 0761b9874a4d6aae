"""The cluster's side of an NE16 layer on pulp-open-ne16 and gap9 (bindings/ne16/cost.py
`GVSOC_CLUSTER`: `job`, core 0's wait, barrier and programming of each row job; `tile`, a tile's
compute call with what the conversion does not hide of the job's set-up) against GVSoC:
bench/calibration_ne16.json "cluster" holds the 36 NE16 layers of kws_dscnn, ic_resnet8 and
vww_mobilenet_v1_025 as pulp-open-ne16 partitions them, each layer's whole measured cycles in the
shipped firmware (NE16's row jobs overlapped with the cores' requantization) with its schedule's
prediction split into the part that does not depend on the two coefficients and the cycles each
adds per unit (bench/calibrate_ne16.py --cluster). The targets' model must predict them within the
bands below; the assumed figures it replaced (`Ne16Kernels()`'s job 400, tile 1324: 0.948 of the
measurement, a layer at 0.816) do not. tests/test_ne16_engine_gvsoc.py holds kws_dscnn's NE16
layers on a fresh GVSoC run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tilewise.bindings.ne16.cost import GVSOC_CLUSTER, Ne16Kernels
from tilewise.targets.registry import get_target

DATA = json.loads((Path(__file__).resolve().parent.parent / "bench" / "calibration_ne16.json")
                  .read_text())["cluster"]
#: predicted / measured allowed: every layer (the issue's ±15%: vww's op24 and op26 are at 0.864
#: and 0.891), every binding's sum, the 36 layers' sum
LAYER, BINDING, ALL = 0.15, 0.10, 0.03


def _predicted(row: dict, model: Ne16Kernels) -> float:
    return row["base"] + model.job * row["features"]["job"] + model.tile * row["features"]["tile"]


def _ratios(model: Ne16Kernels) -> tuple[dict[str, float], dict[str, float], float]:
    per_layer = {f"{r['case']}/{r['layer']}": _predicted(r, model) / r["measured"]
                 for r in DATA["rows"]}
    by: dict[str, list[float]] = {}
    for r in DATA["rows"]:
        s = by.setdefault(r["binding"], [0.0, 0.0])
        s[0] += _predicted(r, model)
        s[1] += r["measured"]
    total = sum(_predicted(r, model) for r in DATA["rows"]) / sum(r["measured"] for r in DATA["rows"])
    return per_layer, {b: p / m for b, (p, m) in by.items()}, total


def test_target_prices_the_cluster_with_the_stored_fit():
    """pulp-open-ne16's and gap9's NE16 bindings (the same firmware) carry GVSOC_CLUSTER, the
    coefficients the calibration fitted."""
    assert DATA["fit"] == {"job": GVSOC_CLUSTER.job, "tile": GVSOC_CLUSTER.tile}
    for t in ("pulp-open-ne16", "gap9"):
        for b in get_target(t).module("ne16").bindings:
            assert (b.cost.job, b.cost.tile) == (GVSOC_CLUSTER.job, GVSOC_CLUSTER.tile), (t, b.name)


def test_ne16_layers_within_band_of_gvsoc():
    assert len(DATA["rows"]) == 36
    assert {r["case"] for r in DATA["rows"]} == {"kws_dscnn", "ic_resnet8", "vww_mobilenet_v1_025"}
    per_layer, per_binding, total = _ratios(GVSOC_CLUSTER)
    assert not {k: round(v, 3) for k, v in per_layer.items() if abs(v - 1) > LAYER}
    assert not {k: round(v, 3) for k, v in per_binding.items() if abs(v - 1) > BINDING}
    assert abs(total - 1) <= ALL, total


def test_assumed_figures_fall_outside():
    """The test can fail: the assumed job and tile under-predict the same layers."""
    per_layer, _, total = _ratios(Ne16Kernels())
    assert total < 1 - ALL and min(per_layer.values()) < 1 - LAYER, (total, min(per_layer.values()))


#: the fit the stored rows were measured under (equal requantization shares)
PREVIOUS = Ne16Kernels(job=803.6, tile=1559.7)


def test_stored_rows_are_the_prediction_of_their_time():
    """Each row's base and features reprice its schedule: the previous model's prediction
    (stored with the measurement) is base + 803.6·job + 1559.7·tile."""
    for row in DATA["rows"]:
        assert _predicted(row, PREVIOUS) == pytest.approx(row["previous"], rel=1e-6), row["layer"]
