"""Built-in targets: figures, overrides, registry errors (DESIGN.md "Targets are data")."""

from __future__ import annotations

import dataclasses
import importlib
import re

import pytest

from tilewise.errors import TilewiseError
from tilewise.targets import KB, MB, Target, get_target, list_targets

from .pulp_targets import match_gap9, portable_target

NAMES = ("diana", "gap8", "gap9", "idsp", "pulp-open", "pulp-open-ne16", "stm32h7", "stm32l4r5")


def test_registry_lists_the_builtins():
    assert tuple(t.name for t in list_targets()) == NAMES
    for t in list_targets():
        assert isinstance(t, Target)
        assert [m.name for m in t.memories][:2] == ["L1", "L2"]
        assert t.modules and t.sources and t.clock_mhz > 0
        assert all(m.bindings for m in t.modules)
        for m in t.memories:
            assert 0 <= m.reserved < m.size
        # every chip file documents where its figures come from
        doc = importlib.import_module(f"tilewise.targets.{t.name.replace('-', '_')}").__doc__
        assert "seed" in doc


def test_gap8_figures():
    t = get_target("gap8")
    l1 = t.memory("L1")
    assert l1.size == 64 * KB
    assert l1.reserved == 3584 + 7 * 3482          # core stacks 3.5 kB + 7 x 3.4 kB
    assert 36 * KB < l1.free < 37 * KB
    assert t.memory("L2").size == 512 * KB and t.memory("L3").size == 8 * MB
    assert l1.bandwidth == 8.0 and l1.dma_chunk_cycles == 27 and l1.dma_async
    cl = t.module("cluster")
    assert cl.cores == 8 and cl.memory == "L1" and cl.scalable
    ops = {b.key.op for b in cl.bindings}
    assert {"conv2d", "depthwise", "fully_connected", "avg_pool", "max_pool", "add",
            "global_avg_pool", "softmax"} <= ops
    assert cl.families == ("pulp", "portable") and cl.cost_models == ("pulp-kernels", "pulp-subbyte", "pulp-rows",
                                                                      "pulp-attention", "pulp-svdf",
                                                                      "pulp-lstm", "pulp-lstm16", "pulp-mm-act")
    assert t.platform.sdk == "pmsis" and get_target("stm32h7").platform.sdk == "cortex-m"


def test_gap9_match_figures():
    t = get_target("gap9")
    assert t.clock_mhz == 260
    assert t.memory("L1").size == 128 * KB and t.memory("L1").free == 90 * KB
    assert t.memory("L2").free == 1408 * KB
    assert t.memory("L1").dma_chunk_cycles == 27
    assert {m.name for m in t.modules} == {"cluster", "cpu", "ne16"}
    assert t.module("cpu").memory == "L2" and t.module("cpu").cores == 1
    # NE16 on the cluster's L1 tiles, priced by MATCH's NE16 model (bindings/ne16/cost.py)
    ne16 = t.module("ne16")
    assert ne16.memory == "L1" and ne16.families == ("ne16",) and ne16.cost_models == ("ne16",)
    # MATCH's GAP9 cluster model: 550 + 370 cycles per transfer; seed 004 Table 3.2: 1.3k
    # cold-I$ cycles per kernel call, once per layer
    assert t.memory("L1").dma_setup_cycles == 920
    cl = t.module("cluster")
    assert cl.layer_overhead_cycles == 1300
    # the cluster runs tilewise's pulp kernels, as gap8 and pulp-open
    assert cl.families == ("pulp", "portable") and cl.cost_models == ("pulp-kernels", "pulp-subbyte", "pulp-rows",
                                                                      "pulp-attention", "pulp-svdf",
                                                                      "pulp-lstm", "pulp-lstm16", "pulp-mm-act")
    # the peer model: PULP-NN as MATCH prices it, depthwise input at 1 B/cycle
    m = match_gap9().module("cluster")
    dw = [b for b in m.bindings if b.key.op == "depthwise"]
    assert dw and all(b.x_dma_bytes_per_cycle == 1.0 for b in dw)
    assert all(b.x_dma_bytes_per_cycle == 0 for b in m.bindings if b.key.op != "depthwise")
    assert m.bindings[0].cost.dw_flat and m.layer_overhead_cycles == 1300
    assert not portable_target("gap8").module("cluster").bindings[0].cost.dw_flat
    assert get_target("gap8").module("cluster").cost_models == ("pulp-kernels", "pulp-subbyte", "pulp-rows",
                                                                 "pulp-attention", "pulp-svdf",
                                                                 "pulp-lstm", "pulp-lstm16", "pulp-mm-act")


def test_idsp_and_stm32h7_figures():
    d = get_target("idsp")
    l1 = d.memory("L1")
    assert (d.clock_mhz, l1.size, l1.bandwidth, l1.dma_issue_cycles) == (450, 128 * KB, 64.0, 150)
    assert d.module("dsp").bindings[0].cost.macs_per_cycle == 32
    s = get_target("stm32h7")
    assert s.clock_mhz == 480 and s.memory("L1").size == 128 * KB
    # weights stay in the read-only flash, which holds nothing else; activations have no L3
    flash = s.memory("flash")
    assert flash.read_only and flash.roles == {"weight"} and s.module("cpu").cores == 1
    assert s.module("cpu").weights_from == "flash"
    assert s.outer("L2") is None and s.outer("L2", "weight") is flash


def test_overrides():
    base = get_target("gap9")
    t = get_target("gap9", l1_kb=16, l2_kb=300, cores=2, clock_mhz=100)
    assert t.memory("L1").free == 16 * KB                 # --l1 is the free part
    assert t.memory("L1").reserved == base.memory("L1").reserved
    assert t.memory("L2").free == 300 * KB
    assert t.module("cluster").cores == 2
    assert t.module("cpu").cores == 1                       # not a scalable module
    assert t.clock_mhz == 100
    # off-chip bandwidth is MB/s: its bytes per cycle follow the clock, on-chip DMA's do not
    assert t.memory("L2").bytes_per_cycle(100) == pytest.approx(2.0)
    assert base.memory("L2").bytes_per_cycle(260) == pytest.approx(200 / 260)
    assert t.memory("L1").bytes_per_cycle(100) == base.memory("L1").bytes_per_cycle(260)
    # the registry's values are untouched
    assert get_target("gap9") == base


def test_targets_are_frozen_values():
    t = get_target("gap8")
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.clock_mhz = 1.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.memory("L1").size = 1  # type: ignore[misc]
    # values all the way down: explore's schedule memo (schedule/api.py) keys on the target
    for target in list_targets():
        assert hash(target) == hash(get_target(target.name)), target.name


@pytest.mark.parametrize("kwargs,msg", [
    ({"name": "gap10"}, "unknown target 'gap10'; built-in targets: diana, gap8, gap9, idsp, pulp-open, "
                        "pulp-open-ne16, stm32h7, stm32l4r5"),
    ({"name": "gap8", "l1_kb": 0}, "bad override for target gap8"),
    ({"name": "gap8", "cores": 0}, "bad override for target gap8"),
    ({"name": "gap8", "clock_mhz": -5}, "bad override for target gap8"),
    # more than the part has: its schedule would not fit the real L1 with its stacks
    ({"name": "gap8", "l1_kb": 64}, "--l1 64 kB is more than gap8 has: its L1 is 64 kB with 27.3 kB "
                                    "reserved (stacks, runtime), so at most 36.7 kB are free"),
    ({"name": "pulp-open", "l1_kb": 60}, "at most 51.0 kB are free"),
    ({"name": "gap8", "l2_kb": 100000}, "--l2 100000 kB is more than gap8 has"),
    ({"name": "gap8", "cores": 64}, "--cores 64 is more than gap8 has (8)"),
    ({"name": "stm32h7", "cores": 8}, "--cores does not apply to stm32h7"),
    ({"name": "gap8", "l1_kb": float("inf")}, "L1 size must be a positive number of kB"),
    ({"name": "gap8", "l1_kb": float("nan")}, "L1 size must be a positive number of kB"),
])
def test_errors_are_one_sentence(kwargs, msg):
    with pytest.raises(TilewiseError, match=re.escape(msg)):
        get_target(**kwargs)


def test_design_studies_may_go_beyond_the_part():
    t = get_target("gap8", l1_kb=64, cores=16, beyond=True)
    assert t.memory("L1").free == 64 * KB and t.module("cluster").cores == 16


def test_lookups():
    t = get_target("gap9")
    assert t.outer("L1").name == "L2" and t.outer("L3") is None
    assert t.outer("L2").name == "L3" and t.has_memory("L3") and not t.has_memory("L4")
    with pytest.raises(KeyError):
        t.memory("L4")
    with pytest.raises(KeyError):
        t.module("diana_digital")



def test_a_chip_is_registered_by_its_own_file(tmp_path, monkeypatch):
    """Adding a chip touches its own file only: a module of the tilewise.targets package that
    defines TARGET is a built-in target without a line anywhere else (targets/registry.py)."""
    import sys

    import tilewise.targets as pkg
    from tilewise.targets import registry

    (tmp_path / "mychip.py").write_text(
        "from dataclasses import replace\n\nfrom tilewise.targets.gap8 import TARGET as _GAP8\n\n"
        "TARGET = replace(_GAP8, name='mychip')\n")
    monkeypatch.setattr(pkg, "__path__", [*pkg.__path__, str(tmp_path)])
    monkeypatch.setitem(sys.modules, "tilewise.targets.mychip", None)   # removed again after the test
    monkeypatch.delitem(sys.modules, "tilewise.targets.mychip")
    found = registry._builtin()
    assert "mychip" in found and found["mychip"].memories == found["gap8"].memories
    assert set(found) - {"mychip"} == {t.name for t in list_targets()}
