"""`tilewise analyze --target`: the four MLPerf Tiny models scheduled on gap8 at L1 = 64/32/16/8 kB
with both tilers; the model tiler never predicts more cycles than dory on any layer; the stable JSON
fields; a model that cannot fit fails with one sentence naming the layer and the memory it needs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tilewise.cli import main
from tilewise.errors import TilewiseError
from tilewise.frontend import load_model
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets.registry import get_target

from .conftest import MLPERF, error_lines, mlperf_path

#: L1 kB free; 64 is more than GAP8 has (36.7 kB free): a design study of a larger L1 (beyond)
L1_SIZES = (64, 32, 16, 8)


@pytest.fixture(scope="module")
def lowered():
    return {name: lower(load_model(mlperf_path(name))) for name in MLPERF}


@pytest.mark.parametrize("l1", L1_SIZES)
@pytest.mark.parametrize("name", MLPERF)
def test_model_tiler_never_worse_than_dory(lowered, name, l1):
    """Every MLPerf Tiny model fits gap8 at every L1 size of L1_SIZES with both tilers (no early
    return: where DORY must refuse is named in test_tiler_refusals), and the model tiler predicts
    no more cycles than DORY on any layer."""
    lg = lowered[name]
    target = get_target("gap8", l1_kb=l1, beyond=True)
    model = schedule_network(lg, target, "model")
    dory = schedule_network(lg, target, "dory")
    free = target.memory("L1").free
    for s in model.schedules + dory.schedules:
        assert s.l1_bytes <= free
    for layer, m, d in zip(lg.layers, model.schedules, dory.schedules):
        assert m.cycles <= d.cycles * (1 + 1e-9), (layer.name, m.cycles, d.cycles)
    assert model.cycles <= dory.cycles * (1 + 1e-9)


#: (model, target, L1 kB, tiler, the sentences the refusal must contain); None: it must fit
TILER_CASES = [
    # DORY never tiles input channels or the kernel: a 3x3, C=64 conv needs 3494 B; the model
    # tiler splits C and fits the same layer in 1 kB
    ("ic_resnet8", "idsp", 1, "dory",
     ("layer 'op9_conv_2d' (conv2d tflite 8x8->8) cannot run on idsp",
      "cannot be tiled by DORY's formulation into L1 of 1024 bytes: it never tiles the input "
      "channels or the kernel (C=64, kernel 3x3), and its smallest tile needs 3494 bytes",
      "use --tiler model")),
    ("ic_resnet8", "idsp", 1, "model", None),
    # DIANA's digital core takes whole input channels in k tiles of 16: DORY cannot express it
    ("ic_resnet8", "diana", 1, "dory",
     ("layer 'op9_conv_2d'", "which DORY's formulation cannot express; use --tiler model")),
    ("ic_resnet8", "diana", 1, "model", None),
    # an add needs 2060 B whatever the tiler; the fabric controller's kernel needs 2048 B scratch
    ("ic_resnet8", "gap8", 1, "dory",
     ("layer 'op3_add' (add tflite 8->8) cannot run on gap8",
      "DORY's formulation found no add tile that fits the 1024 bytes of L1 free on gap8",
      "its 2048 bytes of kernel scratch exceed the 1024 bytes of L1 free")),
    ("ic_resnet8", "gap8", 1, "model",
     ("layer 'op3_add' (add tflite 8->8) cannot run on gap8",
      "needs at least 2060 bytes of L1 on module cluster of gap8 (1024 bytes free in L1)")),
    ("vww_mobilenet_v1_025", "stm32h7", 1, "model",
     ("layer 'op1_depthwise_conv_2d' (depthwise tflite 8x8->8) cannot run on stm32h7",
      "its 1200 bytes of kernel scratch exceed the 1024 bytes of L1 free")),
    ("kws_dscnn", "gap8", 1, "dory", None),
    ("vww_mobilenet_v1_025", "gap8", 1, "dory", None),
    ("ad_autoencoder", "gap8", 1, "dory", None),
]


@pytest.mark.parametrize("name,target,l1,tiler,refusal", TILER_CASES,
                         ids=[f"{n}-{t}-{k}k-{tl}" for n, t, k, tl, _ in TILER_CASES])
def test_tiler_refusals(lowered, name, target, l1, tiler, refusal):
    """Where a tiler must refuse a network, named case by case with the sentence it must give (one
    line, the layer, the memory it needs); the cases beside them that must fit."""
    tgt = get_target(target, l1_kb=l1, beyond=True)
    if refusal is None:
        ns = schedule_network(lowered[name], tgt, tiler)
        assert len(ns.schedules) == len(lowered[name].layers)
        return
    with pytest.raises(TilewiseError) as e:
        schedule_network(lowered[name], tgt, tiler)
    msg = str(e.value)
    assert "\n" not in msg and "Traceback" not in msg
    for part in refusal:
        assert part in msg, (part, msg)


def test_analyze_json_fields(capsys):
    path = mlperf_path("kws_dscnn")
    assert main(["analyze", str(path), "--target", "gap8", "--l1", "16", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    for layer in data["layers"]:
        assert {"name", "op", "macs", "module", "tiles", "loop_order", "l1_bytes", "dma_bytes", "cycles"} <= set(layer)
        assert layer["l1_bytes"] <= 16 * 1024
    t = data["totals"]
    for key in ("macs", "cycles", "latency_ms", "peak_l2_bytes", "l2_lower_bound_bytes", "weights_l2_bytes",
                "weights_l3_bytes"):
        assert key in t
    assert t["peak_l2_bytes"] >= t["l2_lower_bound_bytes"] > 0
    assert t["cycles"] == pytest.approx(sum(l["cycles"] for l in data["layers"]))
    assert t["latency_ms"] == pytest.approx(t["cycles"] / (t["clock_mhz"] * 1e3))
    # a multi-tile schedule at 16 kB: some layer has more than one tile along some dimension
    assert any(v["count"] > 1 for l in data["layers"] for v in l["tiles"].values())


def test_analyze_table_with_target(capsys):
    assert main(["analyze", str(mlperf_path("ic_resnet8")), "--target", "gap8", "--tiler", "dory"]) == 0
    out = capsys.readouterr().out
    assert "gap8" in out and "cycles" in out and "peak L2" in out and "tiler dory" in out


def test_model_that_cannot_fit_names_layer_and_memory():
    path = mlperf_path("vww_mobilenet_v1_025")
    proc = subprocess.run([sys.executable, "-m", "tilewise.cli", "analyze", str(path), "--target", "gap8",
                           "--l2", "16"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    err = "\n".join(error_lines(proc.stderr))
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "layer 'op0_conv_2d'" in err and "bytes" in err
    assert any(tok.isdigit() and int(tok) > 16384 for tok in err.replace(",", " ").split())


def test_target_options_without_target_are_rejected(capsys):
    assert main(["analyze", str(mlperf_path("kws_dscnn")), "--l1", "16"]) == 2


def test_targets_command(capsys):
    assert main(["targets", "--json"]) == 0
    names = {t["name"] for t in json.loads(capsys.readouterr().out)}
    assert {"gap8", "gap9", "stm32h7", "idsp"} <= names


@pytest.mark.parametrize("name", MLPERF)
def test_dory_fits_more_as_l1_grows(lowered, name):
    """If DORY's formulation fits a network at some L1, it fits at every larger L1 (regression: its
    budget retry used to give up on large FC layers at 64 kB while fitting them at 16 kB)."""
    fits = []
    for l1 in sorted(L1_SIZES):
        try:
            schedule_network(lowered[name], get_target("gap8", l1_kb=l1, beyond=True), "dory")
            fits.append(True)
        except TilewiseError:
            fits.append(False)
    assert fits == sorted(fits), dict(zip(sorted(L1_SIZES), fits))
