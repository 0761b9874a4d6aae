"""A module with its own binding folder, added to a copy of a built-in target (issue: bindings).

The "ref" module (this folder: bindings in __init__.py, C in c/) runs conv2d whole from L2 with a
scalar reference kernel. On a copy of gap8 that also has it, partition gives each conv layer of
the bundled example to whichever module predicts fewer cycles; generate emits the ref kernel's
call and copies its C; validate finds the whole network bit-exact with the golden model and
onnxruntime, with the DMA the schedule predicts. Nothing outside this folder knows about it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tilewise.examples import EXAMPLE_ONNX
from tilewise.frontend import load_model
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets.base import Module
from tilewise.validate import validate_model

from ..pulp_targets import portable_target
from . import RefCost, bindings

REPO = Path(__file__).resolve().parents[2]
#: cycles per MAC of the ref module: between the cluster's cost of the example's small and large
#: convs, so partition gives it some of them
PER_MAC = 0.15


def ref_target(per_mac: float):
    # gap8's cluster on the portable family priced by PULP-NN (whose per-output costs are small
    # enough that the ref module's per-MAC price wins some convs and loses others)
    # (the cluster alone beside it: gap8's host core would take layers of its own)
    gap8 = portable_target("gap8").with_modules(("cluster",))
    ref = Module("ref", cores=1, bindings=bindings(RefCost(per_mac=per_mac)), memory="L2",
                 note="scalar reference conv, computing from L2")
    return replace(gap8, modules=(*gap8.modules, ref))


def test_partition_picks_the_cheaper_module_and_validate_is_bit_exact(tmp_path):
    graph = load_model(EXAMPLE_ONNX)
    ns = schedule_network(lower(graph), ref_target(per_mac=PER_MAC), "model")
    chosen = {}
    for layer, choice in zip(ns.layers.layers, ns.partition.choices):
        legal = [c for c in choice.candidates if c.reason is None]
        best = min(legal, key=lambda c: c.cycles)
        assert [c for c in legal if c.chosen] == [best], layer.name     # the cheapest wins
        chosen[layer.name] = choice.placement.module.name
        if layer.op == "conv2d":
            assert {c.module for c in choice.candidates} == {"cluster", "ref"}
    # at PER_MAC cycles per MAC the ref module wins some convs and loses the others
    names = [layer.name for layer in ns.layers.layers]
    convs = {n: m for n, m in chosen.items() if ns.layers.layers[names.index(n)].op == "conv2d"}
    assert set(convs.values()) == {"ref", "cluster"}, convs
    assert all(m == "cluster" for n, m in chosen.items() if n not in convs)
    ref_at = names.index(next(n for n, m in convs.items() if m == "ref"))
    cluster_at = names.index(next(n for n, m in convs.items() if m == "cluster"))

    report = validate_model(EXAMPLE_ONNX, ns, graph, 6, 0, tmp_path / "proj")
    assert report.bit_exact and report.dma_bytes_measured == report.dma_bytes_predicted, \
        report.to_json()
    proj = tmp_path / "proj"
    assert (proj / "ref_kernels" / "ref_conv.c").exists() and (proj / "tw_kernels").is_dir()
    assert "ref_conv2d_s8(&GEOM" in (proj / "layers" / f"layer_{ref_at:02d}.c").read_text()
    assert "tw_conv2d_s8" in (proj / "layers" / f"layer_{cluster_at:02d}.c").read_text()
    assert '#include "ref_conv.h"' in (proj / "layers" / "layers.h").read_text()

    # priced out of every layer, the module is never chosen and its C is not copied
    ns2 = schedule_network(lower(graph), ref_target(per_mac=50.0), "model")
    assert all(c.placement.module.name == "cluster" for c in ns2.partition.choices)


def test_tilewise_knows_nothing_of_this_module():
    names = ("refconv", "ref_conv", "ref_kernels", "RefCost")
    for path in (REPO / "tilewise").rglob("*"):
        if path.is_file() and path.suffix in (".py", ".c", ".h", ".j2"):
            text = path.read_text(errors="replace")
            assert not any(n in text for n in names), path
