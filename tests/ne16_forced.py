"""A target whose NE16 runs every layer its checks accept: the cluster and the cpu module refuse
those layers (what the partition would give NE16 if it were the cheapest everywhere) — for the NE16
tests (test_ne16*.py, test_ne16_engine_gvsoc.py) and bench/calibrate_ne16.py's forced layers."""

from __future__ import annotations

from dataclasses import replace

from tilewise.bindings.ne16 import checks
from tilewise.targets.base import Target
from tilewise.targets.registry import get_target

#: the ops NE16 runs
NE16_OPS = frozenset({"conv2d", "depthwise", "fully_connected"})


def ne16_forced(target: str = "gap9", norm_quant: bool = False, stride_one: bool = False,
                l1_kb: float | None = None) -> Target:
    """`target` with every layer NE16's checks accept refused by its other modules. `norm_quant`:
    NE16 requantizes every shift-mode layer its norm-quant can take (its cluster-requantized shift
    bindings left out); `stride_one`: only stride-1 layers forced (pulp-open-ne16: stride 2 is not
    verified on GVSoC's NE16, targets/pulp_open_ne16.py); `l1_kb`: the L1 size overridden."""

    def refusing(b):
        def check(layer, lg):
            if (b.key.op in NE16_OPS and checks.ne16(layer, lg) is None
                    and (not stride_one or layer.nest.SY == 1)):
                return "forced onto NE16"
            return b.check(layer, lg)
        return replace(b, check=check)

    t = get_target(target)
    mods = []
    for m in t.modules:
        if m.name != "ne16":
            mods.append(replace(m, bindings=tuple(refusing(b) for b in m.bindings)))
        elif norm_quant:
            mods.append(replace(m, bindings=tuple(b for b in m.bindings if not b.name.endswith("_shift"))))
        else:
            mods.append(m)
    t = replace(t, modules=tuple(mods))
    return t.with_overrides(l1_kb=l1_kb) if l1_kb else t
