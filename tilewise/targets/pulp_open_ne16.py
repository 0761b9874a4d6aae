"""pulp-open-ne16: pulp-open (targets/pulp_open.py) with GAP9's NE16 accelerator in its cluster, as
GVSoC runs it with GVSOC_NE16=1 (../shared/tools/gvsoc README "NE16 on pulp-open": NE16 at
0x10201000 on the cluster's peripheral bus, its memory port on the L1 interleaver, its end-of-job
event on line 12). The chip tilewise's NE16 cost model is measured on: `validate --on gvsoc` runs
the NE16 layers on the simulated engine.

Figures and where they come from:
- cluster, cpu, L1, L2, DMA, clock: pulp-open's (targets/pulp_open.py), unchanged — NE16 shares
  the cluster's 64 kB L1 (its tiles are the cluster's L1 tiles, moved by the same DMA).
- ne16: GAP9's NE16 (seed 003 §V, notes/accelerators.md), the NE16 kernel family (bindings/ne16:
  conv 3×3 / 1×1, depthwise 3×3, dense; the cores
  convert the input to u8 and requantize the int32 outputs, or NE16's norm-quant does), priced by
  bindings/ne16/cost.py `GVSOC_CLUSTER` (`Ne16Kernels` with the cluster's per-job and per-tile
  work fitted on this chip's GVSoC runs); the same 473 cycles per layer as the cluster (its fork).
  The firmware (platforms/pulp_open.py PULP_OPEN_NE16) runs its jobs on the engine through the
  HAL on NE16's registers (codegen/c/tw_hal/tw_hal_ne16_pulp_open.c), from cluster core 0.
- padding: GVSoC's NE16 applies a job's bottom / right padding only where the last 3×3 output
  subtile is whole (measured here: with 7 output columns and right padding the last column was
  wrong; with 6 it was right, the input remainder programmed as the output's + 2), so the cores
  write that padding into the u8 tile they convert and the job has none there (bindings/ne16
  `bindings(data_pad=True)`); the *_u8in twins, which read a producer's u8 tile in place, are left
  out.
- stride 2: NE16's stride-2×2 mode is not verified on this GVSoC model (README: "Not verified:
  ... stride 2x2"), and pulp-nnx runs it as one job per 2×2 output block; here stride-2 layers
  are refused by the ne16 module (`_STRIDE1`) and stay on the cluster — but for the *_im2col
  bindings (bindings/ne16/im2col.py), whose stride is the im2col's: their jobs are 1×1, stride 1.
"""

from __future__ import annotations

from dataclasses import replace

from ..bindings import ne16
from ..bindings.base import Binding
from ..bindings.ne16.cost import GVSOC_CLUSTER
from ..ir.layer import Layer, LayerGraph
from ..platforms.pulp_open import PULP_OPEN_NE16
from .base import Module
from .pulp_open import TARGET as PULP_OPEN

#: why a stride-2 layer stays off NE16 here (module docstring)
STRIDE2 = "stride 2 (NE16's stride-2×2 mode is not verified on GVSoC's model; the cluster runs it)"


def _stride1(b: Binding) -> Binding:
    """Binding `b` refusing stride-2 layers (module docstring)."""
    def check(layer: Layer, lg: LayerGraph) -> str | None:
        if layer.nest.SY != 1 or layer.nest.SX != 1:
            return STRIDE2
        return b.check(layer, lg)
    return replace(b, check=check)


TARGET = replace(
    PULP_OPEN,
    name="pulp-open-ne16",
    description="PULP open platform on GVSoC with NE16 in the cluster: 8-core RI5CY cluster, "
                "NE16, 64 kB L1, 1.5 MB L2",
    modules=(*PULP_OPEN.modules,
             Module("ne16", cores=8, bindings=tuple(b if "_im2col" in b.name else _stride1(b)
                                            for b in ne16.bindings(GVSOC_CLUSTER, data_pad=True)),
                    memory="L1", layer_overhead_cycles=473.0,
                    note="NE16 (GVSoC's model) on the cluster's L1; the cluster converts and "
                         "requantizes")),
    sources=(*PULP_OPEN.sources, "../shared/tools/gvsoc README (NE16 on pulp-open)",
             "notes/accelerators.md (NE16)"),
    platform=PULP_OPEN_NE16,
)
