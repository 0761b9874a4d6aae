"""The u8 hand-off to NE16 on gap9: a tensor every consumer of which is an NE16 layer is stored as
u8 (x + 128) by its producer, its NE16 consumers read it in place (their *_u8in twins, no
conversion); the partition chooses it by cost, the network and every per-layer dump stay int8 and
bit-exact."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tilewise.codegen import generate
from tilewise.frontend import load_model
from tilewise.partition.handoff import tensor_uses
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets.registry import get_target
from tilewise.validate import validate_model
from tilewise.validate.check import locate_first_difference

from .conftest import mlperf_path


def _int8_only(t):
    """gap9 without the u8 hand-off: no u8-input twins, every binding writes int8."""
    mods = []
    for m in t.modules:
        bs = tuple(replace(b, output_offsets=(0,)) for b in m.bindings if b.input_offset == 0)
        mods.append(replace(m, bindings=bs))
    return replace(t, modules=tuple(mods))


@pytest.mark.parametrize("name", ["kws_dscnn", "vww_mobilenet_v1_025"])
def test_u8_tensors_are_read_by_ne16_only_and_save_cycles(name):
    lg = lower(load_model(mlperf_path(name)))
    g9 = get_target("gap9")
    ns = schedule_network(lg, g9, "model")
    part = ns.partition
    u8 = {lg.layers[i].output for i, c in enumerate(part.choices) if c.out_offset == 128}
    assert u8, "the case must hand tensors to NE16 as u8"
    assert not u8 & set(lg.outputs)
    for u in tensor_uses(lg):
        readers = [part.choices[i].placement.binding for i in u.consumers]
        if u.name in u8:
            assert readers and all(b.input_offset == 128 and b.family.name == "ne16"
                                   for b in readers), u.name
        else:
            assert all(b.input_offset == 0 for b in readers), u.name
    # priced: the same network without the hand-off costs more, by at most the conversions
    base = schedule_network(lg, _int8_only(g9), "model")
    assert ns.cycles < base.cycles
    assert [c.placement.module.name for c in base.partition.choices] == \
        [c.placement.module.name for c in part.choices]


@pytest.mark.parametrize("name", ["kws_dscnn", "vww_mobilenet_v1_025"])
def test_u8_hand_off_bit_exact_with_int8_dumps(name, tmp_path):
    path = mlperf_path(name)
    graph = load_model(path)
    lg = lower(graph)
    ns = schedule_network(lg, get_target("gap9"), "model")
    r = validate_model(path, ns, graph, 2, 0, tmp_path / "p").to_json()
    assert r["bit_exact"], r
    assert r["dma_bytes_measured"] == r["dma_bytes_predicted"]
    assert r["jobs_measured"] == r["jobs_predicted"]
    project = generate(ns, tmp_path / "q", model_name=path.name)
    m = project.manifest
    stored = [l for l in m["layers"] if l["output_u8"]]
    assert stored
    net_c = (project.path / "network.c").read_text()
    assert net_c.count("tw_flip_sign_bits(a.y") == 2 * len(stored)
    for l in m["layers"]:
        text = (project.path / l["file"]).read_text()
        if l["binding"].startswith("ne16/") and "_u8in" in l["binding"]:
            assert "tw_ne16_to_u8" not in text
    # the per-layer dumps show int8 values: every layer equals the golden model
    x = np.random.default_rng(1).integers(-128, 128, size=tuple(m["input"]["shape"]),
                                          dtype=np.int8)
    assert locate_first_difference(project, lg, x) is None
