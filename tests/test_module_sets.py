"""Module sets: `--modules` restricts a target, `analyze --ablation` compares the sets a target lists
(seed 003 Table IV's shape), `analyze` shows the assignment and the hand-off cycles.

gap9's ablations name its host core "cpu" (the name every target's CPU module takes); while this
branch's gap9 still calls it "fc", `cpu_named` gives the tests gap9 with that module renamed — the
only place the old name is tolerated.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from tilewise.cli import main as cli_main
from tilewise.codegen import plan_project
from tilewise.errors import TilewiseError
from tilewise.frontend import load_model
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets import registry
from tilewise.targets.registry import get_target, list_targets

from .conftest import mlperf_path


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = cli_main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def cpu_named(monkeypatch):
    """The registry's gap9 with its host core named "cpu" (module docstring)."""
    g9 = registry._TARGETS["gap9"]
    if not any(m.name == "cpu" for m in g9.modules):
        g9 = replace(g9, modules=tuple(replace(m, name="cpu") if m.name == "fc" else m
                                       for m in g9.modules))
        monkeypatch.setitem(registry._TARGETS, "gap9", g9)
    return g9


def test_every_ablation_names_the_targets_modules(cpu_named):
    for t in list_targets():
        names = {m.name for m in t.modules}
        for label, mods in t.ablations:
            assert mods and set(mods) <= names, (t.name, label, mods)
    assert [label for label, _ in get_target("gap9").ablations] == \
        ["CPU only", "cluster + CPU", "NE16 + CPU", "all"]


def test_modules_restricts_the_target(tmp_path, capsys):
    model = str(mlperf_path("kws_dscnn"))
    code, out, _ = _run(["analyze", model, "--target", "gap9", "--modules", "cluster", "--json"],
                        capsys)
    assert code == 0
    data = json.loads(out)
    assert {l["module"] for l in data["layers"]} == {"cluster"}
    assert data["totals"]["layers_per_module"] == {"cluster": len(data["layers"])}
    # generate takes the same set and writes the same assignment
    code, _, _ = _run(["generate", model, "--target", "gap9", "--modules", "ne16,cluster", "-o",
                       str(tmp_path / "p")], capsys)
    manifest = json.loads((tmp_path / "p" / "tilewise.json").read_text())
    code2, out2, _ = _run(["analyze", model, "--target", "gap9", "--modules", "ne16,cluster",
                           "--json"], capsys)
    assert code == code2 == 0
    assert [l["module"] for l in manifest["layers"]] == \
        [l["module"] for l in json.loads(out2)["layers"]]
    assert {l["module"] for l in manifest["layers"]} == {"ne16", "cluster"}


@pytest.mark.parametrize("cmd", ["analyze", "generate", "validate"])
def test_a_bad_module_name_is_one_sentence(cmd, tmp_path, capsys):
    argv = [cmd, str(mlperf_path("kws_dscnn")), "--target", "gap9", "--modules", "cluster,npu"]
    if cmd != "analyze":
        argv += ["-o", str(tmp_path / "p")]
    code, _, err = _run(argv, capsys)
    names = ", ".join(m.name for m in get_target("gap9").modules)
    assert code == 2 and err.count("\n") == 1
    assert "no module 'npu'" in err and f"its modules are {names}" in err
    code, _, err = _run(["analyze", str(mlperf_path("kws_dscnn")), "--modules", "cluster"], capsys)
    assert code == 2 and "need --target" in err


def test_ablation_table(cpu_named, capsys):
    model = str(mlperf_path("ic_resnet8"))
    code, out, _ = _run(["analyze", model, "--target", "gap9", "--ablation", "--json"], capsys)
    assert code == 0
    rows = json.loads(out)["ablation"]
    assert [r["label"] for r in rows] == [label for label, _ in cpu_named.ablations]
    lg = lower(load_model(model))
    for r, (_, mods) in zip(rows, cpu_named.ablations):
        assert r["error"] is None and set(r["layers"]) == set(mods)
        ns = schedule_network(lg, cpu_named.with_modules(mods), "model")
        # the scheduled layers: a conv with the residual add it runs fused is one (NE16 sets)
        assert sum(r["layers"].values()) == len(ns.layers.layers) <= len(lg.layers)
        assert r["cycles"] == pytest.approx(ns.cycles)
        assert r["latency_ms"] == pytest.approx(ns.cycles / (cpu_named.clock_mhz * 1e3))
        assert r["speedup"] == pytest.approx(rows[0]["cycles"] / r["cycles"])
    assert rows[0]["speedup"] == 1.0
    # the exact partition over every module is at least as fast as over any subset
    assert rows[-1]["cycles"] <= min(r["cycles"] for r in rows) * (1 + 1e-12)
    assert rows[-1]["layers"]["ne16"] > 0 and rows[1]["layers"]["cluster"] > 0
    code, text, _ = _run(["analyze", model, "--target", "gap9", "--ablation"], capsys)
    assert code == 0 and "NE16 + CPU" in text and "speed-up" in text


def test_ablation_errors(capsys):
    model = str(mlperf_path("kws_dscnn"))
    code, _, err = _run(["analyze", model, "--target", "gap8", "--ablation"], capsys)
    assert code == 2 and "lists no module sets" in err and err.count("\n") == 1
    code, _, err = _run(["analyze", model, "--ablation"], capsys)
    assert code == 2 and "--ablation needs --target" in err
    code, _, err = _run(["analyze", model, "--target", "gap9", "--ablation", "--modules",
                         "cluster"], capsys)
    assert code == 2 and "neither --modules nor --why" in err


def _ne16_in_l1():
    g9 = get_target("gap9")
    return replace(g9, modules=tuple(replace(m, exchange="L1") if m.name == "ne16" else m
                                     for m in g9.modules))


def test_analyze_shows_hand_offs_and_generate_refuses_them(monkeypatch, capsys):
    """A gap9 whose NE16 exchanges tensors in L1: analyze counts the copies in the network's
    cycles and lists them; generate, which plans every activation in L2, says it cannot emit
    them (one sentence, exit 2)."""
    model = str(mlperf_path("kws_dscnn"))
    monkeypatch.setitem(registry._TARGETS, "gap9", _ne16_in_l1())
    code, out, _ = _run(["analyze", model, "--target", "gap9", "--json"], capsys)
    assert code == 0
    t = json.loads(out)["totals"]
    assert t["handoff_cycles"] > 0 and t["handoffs"]
    assert t["handoff_cycles"] == pytest.approx(sum(h["cycles"] for h in t["handoffs"]))
    layers = json.loads(out)["layers"]
    assert t["cycles"] == pytest.approx(sum(l["cycles"] for l in layers) + t["handoff_cycles"])
    code, text, _ = _run(["analyze", model, "--target", "gap9"], capsys)
    assert code == 0 and "hand-offs" in text and "L2→L1" in text
    ns = schedule_network(lower(load_model(model)), _ne16_in_l1(), "model")
    with pytest.raises(TilewiseError, match=r"is handed off from L\d to L\d .* --modules"):
        plan_project(ns)
    # without hand-offs, no line
    monkeypatch.undo()
    code, text, _ = _run(["analyze", model, "--target", "gap9"], capsys)
    assert code == 0 and "hand-offs" not in text and "ne16 runs" in text
