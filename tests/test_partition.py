"""Partition: one placement per layer, decided once, so analyze and generate always agree.

- every built-in target × {the four MLPerf Tiny models, the bundled example}: `analyze` and
  `generate` both succeed, or both exit 2 with the same one-sentence reason;
- no layer runs on two modules (gap9 at --l1 4 --l2 8, where layers are cut at L3 and the FC
  core competes with the cluster);
- `analyze --why` lists every candidate and its reason; `--objective energy|edp`;
- stm32h7 keeps its weights in flash: not in the L2 plan, `totals.flash_bytes` / `ram_bytes`;
- no stage compares a target's name outside tilewise/targets/ (capabilities are fields).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from tilewise.cli import main as cli_main
from tilewise.examples import EXAMPLE_ONNX
from tilewise.frontend import load_model
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets.registry import get_target, list_targets

from .conftest import MLPERF, REPO, mlperf_path

TARGETS = tuple(t.name for t in list_targets())


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = cli_main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("target", TARGETS)
def test_analyze_and_generate_agree_on_every_target_and_model(target, tmp_path, capsys):
    models = [str(mlperf_path(m)) for m in MLPERF] + [str(EXAMPLE_ONNX)]
    for model in models:
        a_code, a_out, a_err = _run(["analyze", model, "--target", target, "--json"], capsys)
        g_code, _, g_err = _run(["generate", model, "--target", target, "-o",
                                 str(tmp_path / Path(model).stem)], capsys)
        assert a_code in (0, 2) and g_code == a_code, (model, a_err, g_err)
        if a_code == 2:
            assert a_err == g_err and a_err.count("\n") == 1, (a_err, g_err)
            continue
        # what analyze reports is what generate wrote
        layers = json.loads(a_out)["layers"]
        manifest = json.loads((tmp_path / Path(model).stem / "tilewise.json").read_text())
        assert [(l["name"], l["module"], l["binding"]) for l in layers] == \
            [(l["name"], l["module"], l["binding"]) for l in manifest["layers"]]


def test_a_refusal_is_the_same_sentence_in_analyze_and_generate(tmp_path, capsys):
    """A model no module of the target can fit: partition's reason, word for word, in both."""
    argv = [str(mlperf_path("ic_resnet8")), "--target", "gap8", "--l1", "0.1"]
    a = _run(["analyze", *argv], capsys)
    g = _run(["generate", *argv, "-o", str(tmp_path / "p")], capsys)
    assert a[0] == g[0] == 2 and a[2] == g[2]
    # the first conv's im2col fits the 102 bytes on one core (gap8's cpu module): the second fails
    assert a[2].startswith("tilewise: error: layer 'op1_conv_2d'") and "cannot fit" in a[2]
    assert not (tmp_path / "p").exists()


def test_no_layer_runs_on_two_modules():
    """On gap9 priced as MATCH models it (its cpu module competes with the cluster there), at 4 kB of
    L1 and 8 kB of L2: every layer on one module, its L3 pieces included."""
    from .pulp_targets import match_gap9

    ns = schedule_network(lower(load_model(EXAMPLE_ONNX)), match_gap9(l1_kb=4, l2_kb=8), "model")
    assert ns.l3_tiles, "the case must cut layers at L3 -> L2"
    for i, layer in enumerate(ns.layers.layers):
        module = ns.placement(i).module.name
        assert ns.schedules[i].module == module
        tl = ns.l3_tiles.get(layer.name)
        for s in (tl.schedules if tl else ()):
            assert s.module == module and s.binding == ns.placement(i).binding.label, layer.name
    # the layer the old per-tile choice split between cluster and cpu
    assert ns.placement(2).module.name == "cluster" and "pw2_quant" in ns.l3_tiles


def test_analyze_why_lists_every_candidate(capsys):
    code, out, _ = _run(["analyze", str(EXAMPLE_ONNX), "--target", "gap9", "--why", "--json"],
                        capsys)
    assert code == 0
    layers = json.loads(out)["layers"]
    for layer in layers:
        cands = layer["candidates"]
        weighted = layer["op"] in ("conv2d", "depthwise", "fully_connected")
        assert {c["module"] for c in cands} == ({"cluster", "cpu", "ne16"} if weighted else
                                                {"cluster", "cpu"})
        chosen = [c for c in cands if c["chosen"]]
        assert len(chosen) == 1 and chosen[0]["module"] == layer["module"]
        # the cheapest of the candidates reading the input as it is stored (int8, or u8 for
        # NE16's *_u8in twins when its producer hands it over as u8)
        u8 = "_u8in" in chosen[0]["binding"]
        legal = [c for c in cands if c["reason"] is None and ("_u8in" in c["binding"]) == u8]
        assert chosen[0]["cycles"] == min(c["cycles"] for c in legal)
    # at 0.25 kB of L1 the cluster cannot take every layer: the reason is shown, cpu wins
    code, out, _ = _run(["analyze", str(EXAMPLE_ONNX), "--target", "gap9", "--l1", "0.25", "--why"],
                        capsys)
    assert code == 0 and "rejected: cannot fit" in out and "candidates" in out
    code, _, err = _run(["analyze", str(EXAMPLE_ONNX), "--why"], capsys)
    assert code == 2 and "--why needs --target" in err


def test_objectives(capsys):
    lg = lower(load_model(EXAMPLE_ONNX))
    g8 = get_target("gap8")
    lat = schedule_network(lg, g8, "model")
    en = schedule_network(lg, g8, "model", objective="energy")
    assert en.partition.objective == "energy"
    # one module: the same choice whatever the objective
    assert [s.module for s in en.schedules] == [s.module for s in lat.schedules]
    code, _, err = _run(["analyze", str(EXAMPLE_ONNX), "--target", "gap9", "--objective",
                         "energy"], capsys)
    assert code == 2 and "needs energy figures" in err and "--objective latency" in err
    code, out, _ = _run(["analyze", str(EXAMPLE_ONNX), "--target", "gap8", "--objective", "edp",
                         "--json"], capsys)
    assert code == 0 and json.loads(out)["totals"]["objective"] == "edp"


def test_stm32h7_weights_stay_in_flash(tmp_path, capsys):
    model = str(mlperf_path("kws_dscnn"))
    code, out, _ = _run(["analyze", model, "--target", "stm32h7", "--json"], capsys)
    assert code == 0
    t = json.loads(out)["totals"]
    lg = lower(load_model(model))
    ns = schedule_network(lg, get_target("stm32h7"), "model")
    consts = sum(ns.const_bytes(layer) for layer in lg.layers)
    assert t["flash_bytes"] == consts > 0 and t["weights_l2_bytes"] == t["weights_l3_bytes"] == 0
    assert not any(b.kind == "weight" for b in ns.memory.plan.buffers)   # not in the RAM plan
    assert t["ram_bytes"] == ns.l1_bytes + t["peak_l2_bytes"]
    # the generated project: constants in weights.c as const data, none of them in the L2 arena
    code, out, _ = _run(["generate", model, "--target", "stm32h7", "-o", str(tmp_path / "k")],
                        capsys)
    m = json.loads((tmp_path / "k" / "tilewise.json").read_text())
    assert code == 0 and f"{consts:,} B of constants in flash" in out
    assert m["flash_bytes"] == consts and m["l2_image_bytes"] == 0
    assert m["l2_arena_bytes"] == m["l2_peak_bytes"] == t["peak_l2_bytes"]
    assert f"#define TW_NETWORK_FLASH_BYTES {consts}" in (tmp_path / "k" / "network.h").read_text()
    # gap8 has no flash for weights: they count in its L2 plan
    g8 = json.loads(_run(["analyze", model, "--target", "gap8", "--json"], capsys)[1])["totals"]
    ns8 = schedule_network(lg, get_target("gap8"), "model")
    consts8 = sum(ns8.const_bytes(layer) for layer in lg.layers)     # its own kernels' layout
    assert g8["flash_bytes"] == 0 and g8["weights_l2_bytes"] == consts8
    assert g8["peak_l2_bytes"] > t["peak_l2_bytes"]
    # a flash too small for the constants is a one-sentence error
    from dataclasses import replace
    s = get_target("stm32h7")
    tiny = replace(s, memories=tuple(replace(m, size=1024) if m.name == "flash" else m
                                     for m in s.memories))
    with pytest.raises(Exception, match=r"constants do not fit the 1024 bytes of flash"):
        schedule_network(lg, tiny, "model")


def _target_name_comparisons(path: Path, names: set[str]) -> list[str]:
    """`x == "gap8"`, `x in ("gap8", ...)`, `match` cases on target names in one file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                consts = [side] if isinstance(side, ast.Constant) else (
                    side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [])
                if any(isinstance(c, ast.Constant) and c.value in names for c in consts):
                    found.append(f"{path}:{node.lineno}")
    return found


def test_no_stage_compares_a_target_name():
    names = set(TARGETS) | {"pulp-open", "diana"}
    pkg = REPO / "tilewise"
    offenders = [hit for p in pkg.rglob("*.py") if "targets" not in p.relative_to(pkg).parts
                 for hit in _target_name_comparisons(p, names)]
    assert not offenders, offenders
