"""A network that cannot fit the chip is refused before any work, with the region named.

On a target with no off-chip level for activations (no L3: stm32h7, pulp-open, …) every activation
lives in the L2 arena, so the L2 plan's peak is at least the bytes live at once at the worst step
of the execution order (memory/buffers.py `lower_bound` over the activation buffers): known from
the graph alone, before partition, tiling, code generation or any build and simulator run. When
that bound exceeds the L2 the target leaves free, `check_fits` refuses the network in one sentence
naming the chip's region that backs L2 (`Target.regions`, e.g. stm32h7's AXI SRAM at 0x24000000)
— the same figure the generated linker script gives that region (codegen/linker.py), so what
analyze accepts also links for the chip, under QEMU too (its link script has the chip's sizes).

The firmware's own variables (the output buffer among them) live in the region that backs "data"
(stm32h7: SRAM1–3); outputs larger than it are refused the same way. `l2_refusal` rewords the
memory planner's later refusal (fragmentation, an L3-less plan that does not fit) to name the
region too.
"""

from __future__ import annotations

from ..errors import TilewiseError
from ..ir.layer import LayerGraph
from ..memory.buffers import lower_bound
from ..memory.network import LayerStep, activation_buffers
from ..targets.base import KB, Target


def _where(target: Target, level: str) -> str:
    """ "stm32h7's L2, the AXI SRAM (512 kB at 0x24000000)," or "pulp-open's L2"."""
    region = target.region(level)
    return f"{target.name}'s {level}" + (f", the {region.label}," if region else "")


def _kb(n: int) -> str:
    return f"{n / KB:,.1f} kB"


def check_fits(lg: LayerGraph, target: Target) -> None:
    """TilewiseError (one sentence, the region named) when `lg`'s activations cannot fit the L2
    of an L3-less `target`, or its outputs the region of the firmware's data."""
    source = lg.source or lg.name
    if target.has_memory("L2") and target.outer("L2") is None:
        steps = [LayerStep(layer.name, tuple(layer.inputs), layer.output) for layer in lg.layers]
        sizes = {name: t.nbytes for name, t in lg.tensors.items()}
        buffers = activation_buffers(steps, sizes, lg.outputs)
        need = lower_bound(buffers)
        free = target.memory("L2").free
        if need > free:
            live: dict[int, int] = {}
            for b in buffers:
                for i in range(b.first, b.last + 1):
                    live[i] = live.get(i, 0) + b.size
            worst = max(live, key=lambda i: live[i])
            raise TilewiseError(
                f"{source}: the activations live at once at layer '{steps[worst].name}' need "
                f"{_kb(need)}, more than the {_kb(free)} free in {_where(target, 'L2')} where "
                f"tilewise keeps every activation, so the network does not fit the chip")
    elif target.has_memory("L2"):
        _check_fits_l3(lg, target, source)
    data = target.region("data")
    if data is not None:
        out = sum(lg.tensors[t].nbytes for t in lg.outputs)
        if out > data.size:
            raise TilewiseError(
                f"{source}: the network's outputs take {_kb(out)}, more than the firmware's data "
                f"region of {target.name}, the {data.label}, holds")


def _check_fits_l3(lg: LayerGraph, target: Target, source: str) -> None:
    """With an off-chip level, every activation lives in L2 or in an outer level that holds
    activations: the bytes live at once at the worst step cannot exceed their free bytes together
    (a mutated or absurd model — a 2^31-element input — is refused here, before the tiler sizes
    its search by the tensors' extents)."""
    levels = [target.memory("L2")]
    while (m := target.outer(levels[-1].name)) is not None:
        levels.append(m)
    free = sum(m.free for m in levels)
    steps = [LayerStep(layer.name, tuple(layer.inputs), layer.output) for layer in lg.layers]
    sizes = {name: t.nbytes for name, t in lg.tensors.items()}
    need = lower_bound(activation_buffers(steps, sizes, lg.outputs))
    if need > free:
        names = f"{target.name}'s " + " and ".join(m.name for m in levels)
        raise TilewiseError(
            f"{source}: its activations need {_kb(need)} live at once, more than the {_kb(free)} "
            f"free in {names} together, so the network does not fit the chip")


def l2_refusal(target: Target, e: TilewiseError) -> TilewiseError:
    """The memory planner's refusal of an L3-less plan, the L2's region named (unchanged when the
    target has none)."""
    region = target.region("L2")
    if region is None:
        return e
    text = str(e).rstrip(".")
    return TilewiseError(f"{text} ({_where(target, 'L2').rstrip(',')})")
