"""Flash / RAM of a scheduled network, as MCU users read them (STM32Cube.AI's "weights (ro)" and
"activations (rw)"), and the labels that keep the two weight figures apart.

Two weight figures exist and they are different things:
- raw weights (`Layer.weight_bytes`, analyze's per-layer "raw W B" column and the totals' "raw
  weights"): the weight tensor (at its bit width) plus the int32 bias, as the model stores them;
- packed constants (`NetworkSchedule.const_bytes`, "constants … B in L2 / L3 / flash"): the blob
  each layer's binding lays out for its kernel — weights in the kernel's order plus
  `LayerSchedule.const_bytes` per output channel (bias, requantization multiplier and shift
  arrays; bindings/base.py) — which is what the generated image holds. It is the larger one.

flash (the non-volatile image) = every packed constant, wherever it lives at run time: resident in
L2 (copied there at start-up), in L3 (streamed into L2), or read in place from a read-only memory
(a Cortex-M's flash) — plus the generated code where it was measured: the network's code as its
firmware ELF holds it after the link (validate/code_size.py; `validate --on qemu|count|gvsoc`,
`analyze --code-size`), `with_code`. Where no firmware was built the code is not counted, and
the summary says so instead of guessing.

RAM = the L1 arena (the largest layer's L1 layout: tiles, double buffers, kernel scratch) + the L2
plan's peak (memory/network.py). The L2 plan holds the activations (network input and output
buffers included), the constants kept resident in L2, the streamed-weight buffers and the L3-tile
scratch; the figures per kind are each kind's largest live bytes at one step (their sum can exceed
the peak, since the kinds peak at different steps, and the planned peak can exceed the per-step
bound by fragmentation: `l2_lower_bound_bytes`).

On a Cortex-M target the summary also predicts the RAM an application linking the network pays
(validate/ram_elf.py `predict`: the arenas + the caller's input and output buffers + a stack
allowance), labelled predicted: `validate --on count|qemu --json` puts the ELF's figure with the
measured stack beside it ("ram").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..memory.buffers import lower_bound
from ..memory.inplace import lower_bound_linked
from ..memory.network import weight_name

if TYPE_CHECKING:  # pragma: no cover
    from ..pipeline import NetworkSchedule


def memory_summary(ns: NetworkSchedule) -> dict[str, int | bool]:
    """The flash / RAM figures of `ns` (module docstring); JSON-ready, all in bytes."""
    plan = ns.memory.plan
    by_kind = {kind: lower_bound([b for b in plan.buffers if b.kind == kind], plan.align)
               for kind in ("activation", "weight", "scratch")}
    if plan.links:
        # outputs written over their inputs (memory/inplace.py): a linked pair shares its bytes
        acts = [b for b in plan.buffers if b.kind == "activation"]
        names = {b.name for b in acts}
        by_kind["activation"] = lower_bound_linked(
            acts, [lk for lk in plan.links if lk.input in names and lk.output in names], plan.align)
    resident = {weight_name(n) for n in ns.memory.weights_in_l2}
    resident_bytes = sum(b.size for b in plan.buffers if b.kind == "weight" and b.name in resident)
    lg = ns.layers
    io_in = sum(lg.tensors[t].nbytes for t in lg.inputs)
    io_out = sum(lg.tensors[t].nbytes for t in lg.outputs)
    l1 = ns.l1_bytes if ns.target.has_memory("L1") else 0
    constants = ns.weights_l2_bytes + ns.weights_l3_bytes + ns.flash_bytes
    linked = {}
    if ns.target.platform.name == "cortex-m":
        from ..validate.ram_elf import predict

        p = predict(ns)
        linked = {"ram_linked_predicted_bytes": p.total, "ram_stack_allowance_bytes": p.stack}
    return {
        "flash_bytes": constants,
        "flash_constants_l2_bytes": ns.weights_l2_bytes,
        "flash_constants_l3_bytes": ns.weights_l3_bytes,
        "flash_constants_in_place_bytes": ns.flash_bytes,
        "code_counted": False,
        "raw_weight_bytes": sum(layer.weight_bytes for layer in lg.layers),
        "ram_bytes": ns.ram_bytes,
        "ram_l1_arena_bytes": l1,
        "ram_l2_peak_bytes": ns.memory.peak,
        "ram_activations_live_bytes": by_kind["activation"],
        "ram_input_bytes": io_in,
        "ram_output_bytes": io_out,
        "ram_constants_in_l2_bytes": resident_bytes,
        "ram_streamed_and_scratch_bytes": max(by_kind["weight"] - resident_bytes, 0)
        + by_kind["scratch"],
        **linked,
    }


def with_code(m: dict, code: dict) -> dict:
    """The summary `m` with the measured code (validate/code_size.py CodeSize.to_json) in flash."""
    return {**m, "code_counted": True, "code_bytes": code["code_bytes"], "code_isa": code["isa"],
            "flash_bytes": m["flash_bytes"] + code["code_bytes"]}


def summary_lines(m: dict) -> list[str]:
    """Two plain sentences: flash and RAM (module docstring), for analyze and report.txt."""
    where = [f"{m['flash_constants_l2_bytes']:,} B copied to L2 at start-up"]
    if m["flash_constants_l3_bytes"]:
        where.append(f"{m['flash_constants_l3_bytes']:,} B streamed from L3")
    if m["flash_constants_in_place_bytes"]:
        where = ([w for w in where if not w.startswith("0 B")]
                 + [f"{m['flash_constants_in_place_bytes']:,} B read in place from flash"])
    code = (f" + code {m['code_bytes']:,} B (network, layers, kernels, HAL as linked for "
            f"{m['code_isa']})" if m.get("code_counted") else "")
    flash = (f"flash: {m['flash_bytes']:,} B = packed constants "
             f"{m['flash_bytes'] - m.get('code_bytes', 0):,} B (weights in kernel order + bias + "
             f"requant arrays; {', '.join(where)}){code}"
             f"{'' if code else '; code not counted (analyze --code-size on stm32h7 and pulp-open)'} — raw "
             f"weights in the model are {m['raw_weight_bytes']:,} B")
    ram = (f"RAM: {m['ram_bytes']:,} B = L1 arena {m['ram_l1_arena_bytes']:,} B + L2 plan peak "
           f"{m['ram_l2_peak_bytes']:,} B (activations up to {m['ram_activations_live_bytes']:,} B "
           f"live at once, incl. input {m['ram_input_bytes']:,} B and output "
           f"{m['ram_output_bytes']:,} B buffers; constants resident in L2 "
           f"{m['ram_constants_in_l2_bytes']:,} B; streamed-weight / L3-tile buffers up to "
           f"{m['ram_streamed_and_scratch_bytes']:,} B)")
    if "ram_linked_predicted_bytes" in m:
        ram += (f"; as an application links it (predicted): {m['ram_linked_predicted_bytes']:,} B "
                f"= the arenas + input and output buffers + a stack allowance of "
                f"{m['ram_stack_allowance_bytes']:,} B (validate --on count|qemu --json measures "
                f"it from the ELF)")
    return [flash, ram]
