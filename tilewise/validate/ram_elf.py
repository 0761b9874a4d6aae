"""RAM of a Cortex-M firmware as a user's linker sees it, read from the ELF, next to the figure
analyze predicts for the same schedule.

A user who links the generated network into an application pays, in RAM (issue 30; TFLite
Micro's arena, the figure notes/anchors.md compares with, holds activations, input and output):
- the arenas the caller gives `tw_network_run`: the L1 arena (the ELF's `.dtcm`: tiles and kernel
  scratch) and the L2 arena (`.l2_arena`: every activation the static plan places);
- the network's own static variables: `.data` / `.bss` input sections of the network's objects
  (network.c, layers, kernels, runtime, HAL — the HAL's DMA counters), split from the test
  firmware's own ones (main.c's profiling arrays and output buffer, newlib) with the GNU ld map,
  as code_size.py splits flash;
- the I/O buffers the caller holds: the network reads its inputs where the caller keeps them and
  copies its outputs into the caller's buffers (network.c), so both are RAM of the application —
  but an input the plan holds in the L2 arena (memory/network.py `inputs_in_arena`: the caller
  writes it there, TW_INPUT_IN_ARENA, as a TFLite Micro caller writes its input tensor), which
  is in `.l2_arena` already
  and an output the caller reads in the arena (TW_OUTPUT_IN_ARENA, network.h: memory/network.py
  `outputs_in_arena`; as a TFLite Micro caller reads its output tensor), which the test firmware
  prints from there
  (the test firmware keeps its inputs in flash and, without TW_OUTPUT_IN_ARENA, its output in
  main.c's `.bss`, which is why the firmware's own variables are not counted twice);
- the stack: the measured high-water mark (tw_fw.c paints the stack at reset and prints
  `TW_STACK <bytes>` after the run: start-up, main, the inferences and the printing of their
  results; on the MLPerf Tiny models the inference's calls are the deepest).

Predicted (`predict`): the arenas from the schedule (the L1 layout's largest layer, at least one
word as network.h declares it, and the L2 plan's peak), the I/O bytes, and `STACK_ALLOWANCE`
for the stack — the measured peak of every model validated so far stays under it (the pulp
kernels' C path keeps its working set in registers and small frames; tests/test_qemu.py holds
it). The network's static variables are not predicted: they are the HAL's counters, a few dozen
bytes, and `measured - predicted` shows them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..codegen.network_c import output_in_arena
from .code_size import bytes_by_owner

#: bytes of stack the prediction allows (module docstring): measured peaks 444-452 B (ad_autoencoder:
#: the widened dense's common loop, its general path a call apart), 1,052 B (kws_dscnn), 1,060 B
#: (ic_resnet8, vww_mobilenet_v1_025) at -O2: the inference's deepest call (tests/test_qemu.py
#: holds every measured peak within 0.3-1x of it)
STACK_ALLOWANCE = 1280
#: input-section prefixes of initialised and zeroed RAM variables
RAM_SECTIONS = (".data", ".sdata", ".bss", ".sbss", "COMMON")


@dataclass(frozen=True)
class Ram:
    """RAM bytes of one network as an application linking it pays (module docstring); `stack`
    None when the run printed no TW_STACK line."""

    l1_arena: int
    l2_arena: int
    network_statics: int
    input_bytes: int
    output_bytes: int
    stack: int | None

    @property
    def total(self) -> int:
        return (self.l1_arena + self.l2_arena + self.network_statics + self.input_bytes
                + self.output_bytes + (self.stack or 0))

    def to_json(self) -> dict:
        return {"l1_arena_bytes": self.l1_arena, "l2_arena_bytes": self.l2_arena,
                "network_statics_bytes": self.network_statics, "input_bytes": self.input_bytes,
                "output_bytes": self.output_bytes, "stack_bytes": self.stack,
                "total_bytes": self.total}


def statics_by_owner(map_text: str) -> dict[str, int]:
    """`.data` / `.bss` bytes per owner ('code': the network, 'firmware', 'constants') of a GNU ld
    map's kept input sections."""
    return bytes_by_owner(map_text, RAM_SECTIONS)


def section_sizes(elf: Path) -> dict[str, int]:
    """Size of each section of `elf` by name (pyelftools)."""
    from elftools.elf.elffile import ELFFile

    with open(elf, "rb") as f:
        return {s.name: s["sh_size"] for s in ELFFile(f).iter_sections()}


def stack_of(text: str) -> int | None:
    """The stack high-water mark a firmware printed (`TW_STACK <bytes>`), None without one."""
    m = re.search(r"^TW_STACK (\d+)", text, re.M)
    return int(m.group(1)) if m else None


def measure(elf: Path, input_bytes: int, output_bytes: int, stack: int | None) -> Ram:
    """The Ram of the firmware `elf` (its linker map beside it) with the I/O bytes of its network
    and the stack its run measured."""
    sections = section_sizes(elf)
    statics = statics_by_owner(Path(elf).with_suffix(".map").read_text(errors="replace"))
    return Ram(sections.get(".dtcm", 0), sections.get(".l2_arena", 0), statics["code"],
               input_bytes, output_bytes, stack)


def predict(ns) -> Ram:
    """The Ram analyze predicts for the schedule `ns` on a Cortex-M target (module docstring)."""
    lg = ns.layers
    l1 = max(4, -(-ns.l1_bytes // 4) * 4) if ns.target.has_memory("L1") else 0
    held = [t for t in lg.inputs if t not in ns.memory.inputs_in_arena]   # the rest: in the arena
    given = [t for t in lg.outputs if t != output_in_arena(lg, ns.memory)]
    return Ram(l1, ns.memory.peak, 0, sum(lg.tensors[t].nbytes for t in held),
               sum(lg.tensors[t].nbytes for t in given), STACK_ALLOWANCE)
