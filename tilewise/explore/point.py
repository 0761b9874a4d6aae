"""One point of a sweep → one row: the prediction of `tilewise analyze --target`, or the reason
the point cannot run, and with `measure` the generated code run where the target has a runner.

The prediction is the analyze path itself: the model lowered once per process (`lowered`, cached
by the model's sha256 so each worker lowers each model once), the hypothetical chip built by
`targets.registry.get_target(..., beyond=True)` (and `Target.with_modules` for a module set), and
`pipeline.schedule_network` with the point's tiler and objective, under
`schedule.api.memoized_schedules` (a repeated layer geometry is tiled once per point; same
results, about a third less time on DS-CNN / MobileNet). The row's figures are
NetworkSchedule's and report/schedule_report.py `scheduled_totals`' (cycles, latency, MAC/cycle,
peak L2, L1 arena, RAM, weights in L2 / L3 / flash, layers per module).

Energy (µJ) is given only where every module the network runs on has an energy figure
(`Module.pj_per_cycle`; among the built-in targets only gap8, whose 510 pJ/cycle is the
assumption targets/gap8.py documents): Σ over layers of the module's pJ/cycle × the layer's
cycles, plus the L1's pJ/B × the layer's L2↔L1 DMA bytes, plus the hand-offs' energy — the same
figures partition weighs (schedule/cost.py `energy_pj`, partition/handoff.py), summed over the
network. Otherwise energy is None ("unknown"), never 0.

A point is `hypothetical` when one of its values exceeds the built-in part (free L1 / L2, core
count of the scalable modules, or the clock above the part's maximum where the target gives one,
`max_clock_mhz`, else above its nominal clock); `beyond` lists which.

`cycles` are in the target's `cycles_unit` (stm32h7: "cycles (Cortex-M7 model, estimated)"), and
`latency_ms` follows from them at the point's clock.

`measure`: pulp-open runs its firmware on GVSoC (validate --on gvsoc: measured cycles), stm32h7
counts the executed instructions of its Cortex-M7 firmware and estimates its cycles (validate
--on count: `measured_instructions`, `estimated_cycles`); one random
input plus the all-min / all-max ones, so the run also says whether the point is bit-exact. Other
targets have no runner: the row says so in `measure_note`. A measurement takes seconds to minutes
per point (a C build and a simulator run), against well under a second for a prediction.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import TilewiseError
from .grid import Point

_LOWERED: dict[tuple, Any] = {}


def lowered(path: str, sha: str, input_dtypes: tuple[tuple[str, str], ...] = ()):
    """The lowered LayerGraph of a model, once per process (keyed by its bytes' sha256 and the
    code types of its container inputs, --input-dtype)."""
    key = (sha, input_dtypes)
    lg = _LOWERED.get(key)
    if lg is None:
        from ..pipeline import Options, load, lower

        lg = _LOWERED[key] = lower(load(path, Options(input_dtypes=dict(input_dtypes))))
    return lg


def point_target(p: Point):
    """The hypothetical chip of a point (TilewiseError on an override the target cannot take)."""
    from ..targets.registry import get_target

    t = get_target(p.target, l1_kb=p.l1_kb, l2_kb=p.l2_kb, cores=p.cores, clock_mhz=p.clock_mhz,
                   beyond=True)
    if p.modules is None:
        return t
    try:
        return t.with_modules(list(p.modules))
    except ValueError as e:
        raise TilewiseError(f"bad --modules set {'+'.join(p.modules)!r}: {e}") from None


def beyond_part(p: Point) -> list[str]:
    """Which of the point's values exceed the built-in part (empty: a real part's settings)."""
    from ..targets.registry import get_target

    base = get_target(p.target)
    out = []
    for name, kb in (("L1", p.l1_kb), ("L2", p.l2_kb)):
        if kb is not None and base.has_memory(name) and round(kb * 1024) > base.memory(name).free:
            out.append(f"{name} {kb:g} kB > {base.memory(name).free / 1024:.1f} kB free")
    scal = [m.cores for m in base.modules if m.scalable]
    if p.cores is not None and scal and p.cores > max(scal):
        out.append(f"cores {p.cores} > {max(scal)}")
    top = base.max_clock_mhz or base.clock_mhz
    if p.clock_mhz is not None and p.clock_mhz > top:
        out.append(f"clock {p.clock_mhz:g} MHz > {top:g} MHz")
    return out


def network_energy_uj(ns) -> float | None:
    """Energy of one inference in µJ from the target's figures (module docstring), or None."""
    t = ns.target
    used = {ns.placement(i).module.name for i in range(len(ns.schedules))}
    if not used or any(t.module(m).pj_per_cycle <= 0 for m in used):
        return None
    l1 = t.memory("L1").pj_per_byte if t.has_memory("L1") else 0.0
    pj = 0.0
    for i in range(len(ns.schedules)):
        pj += ns.placement(i).module.pj_per_cycle * ns.layer_cycles(i)
        if ns.schedules[i].outer:
            pj += l1 * ns.layer_dma(i).bytes
    if ns.partition is not None:
        pj += sum(h.energy_pj for h in ns.partition.handoffs)
    return pj / 1e6


def _free_kb(target, name: str) -> float:
    """kB free for tiles at memory `name` of the point's chip (0 when it has none)."""
    return target.memory(name).free / 1024 if target.has_memory(name) else 0.0


def _measure(p: Point, ns) -> dict:
    """Run the point's firmware with the first runner of its target's platform (GVSoC's cycles,
    the instruction counter's instructions)."""
    runners = ns.target.platform.runners
    if not runners:
        from ..targets.registry import list_targets

        measured = sorted(t.name for t in list_targets() if t.platform.runners)
        return {"measure_note": f"target {p.target} has no runner (measured on: "
                                f"{', '.join(measured)})"}
    on = runners[0].on
    import tempfile

    from ..pipeline import Options, load
    from ..validate.check import validate_model

    with tempfile.TemporaryDirectory(prefix="tilewise_explore_") as work:
        r = validate_model(p.model, ns, load(p.model, Options(input_dtypes=dict(p.input_dtypes))),
                           n_random=1, seed=0,
                           out_dir=Path(work), on=on)
    return {"measured_cycles": r.measured_cycles, "measured_instructions": r.measured_instructions,
            "estimated_cycles": r.estimated_cycles,
            "bit_exact": r.bit_exact, "measure_note": f"validate --on {on}"}


def evaluate(p: Point) -> dict:
    """The row of one point (module docstring). Never raises for a point that cannot run: its
    one-sentence reason is the row's `reason`."""
    from ..pipeline import schedule_network
    from ..report.schedule_report import layers_per_module
    from ..schedule.api import memoized_schedules

    row: dict[str, Any] = {"model": p.model_name, **p.settings()}
    row["modules"] = "+".join(p.modules) if p.modules is not None else "all"
    over = beyond_part(p)
    row.update(hypothetical=bool(over), beyond="; ".join(over))
    empty = dict(chip_l1_kb=None, chip_l2_kb=None, cycles=None, cycles_unit=None, latency_ms=None,
                 energy_uj=None, edp=None,
                 mac_per_cycle=None, macs=None, l1_bytes=None, peak_l2_bytes=None, ram_bytes=None,
                 weights_l2_bytes=None, weights_l3_bytes=None, flash_bytes=None,
                 layers_per_module=None)
    try:
        target = point_target(p)
        with memoized_schedules():
            ns = schedule_network(lowered(p.model, p.model_sha, p.input_dtypes), target, p.tiler,
                                  objective=p.objective,
                                  ram_budget=None if p.ram_budget_kb is None
                                  else int(p.ram_budget_kb * 1024))
    except TilewiseError as e:
        row.update(status="refused", reason=str(e), **empty)
        return row
    cycles = ns.cycles
    energy = network_energy_uj(ns)
    row.update(chip_l1_kb=_free_kb(target, "L1"), chip_l2_kb=_free_kb(target, "L2"))
    row.update(status="ok", reason="", cycles=cycles, cycles_unit=target.cycles_unit,
               latency_ms=ns.latency_ms,
               energy_uj=energy, edp=energy * ns.latency_ms if energy is not None else None,
               mac_per_cycle=ns.macs / cycles if cycles else 0.0, macs=ns.macs,
               l1_bytes=ns.l1_bytes if target.has_memory("L1") else 0,
               peak_l2_bytes=ns.memory.peak, ram_bytes=ns.ram_bytes,
               weights_l2_bytes=ns.weights_l2_bytes, weights_l3_bytes=ns.weights_l3_bytes,
               flash_bytes=ns.flash_bytes, layers_per_module=layers_per_module(ns))
    if p.measure:
        try:
            row.update(_measure(p, ns))
        except TilewiseError as e:
            row.update(measure_note=f"measurement failed: {e}")
    return row
