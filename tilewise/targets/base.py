"""Targets are data: memory levels with operand roles, execution modules and their bindings.

A `Target` is a frozen value (DESIGN.md "Targets are data"): adding a chip is one file of parameters
(`targets/<chip>.py`); its modules list the bindings they run (`bindings/<family>/`, built for the
module's kernel cost model). Nothing here is a subclass per chip, and no stage compares a target's
name: capabilities are fields (`Target.platform`, `Memory.roles`, `Module.weights_from`).

- `Memory`: one level of the hierarchy, innermost first (L1, L2, L3, or a read-only flash). It says
  which operands it may hold (`roles`: activations, weights, tile buffers) and whether it is
  read-only. The DMA fields describe the engine that moves data between this level and the next
  outer one:
  ``dma = dma_setup_cycles + chunks * dma_chunk_cycles + bytes / bandwidth`` per transfer (seed 003
  §V: a fixed overhead per contiguous chunk; seed 002 eq. 5.9: a fixed penalty per transfer), plus
  ``dma_issue_cycles`` of core time per transfer to program it (seed 002's CC_dma_init is core time).
- `Module`: an execution unit (8-core cluster, a single core, an accelerator) with its bindings
  (what it runs and how), the memory level it computes from, and where it reads weights from
  (`weights_from`: a read-only memory such as a Cortex-M's flash keeps const weights in place; None
  = the activation path, L2 or streamed from L3).
- Hand-offs (partition/handoff.py): a module exchanges tensors between layers in one memory
  (`Module.exchange`: it reads its input tensors from and writes its output tensor to that level;
  every built-in module exchanges in L2). A tensor produced in one exchange memory and read by a
  module that exchanges in another is moved by the DMA of the levels between them, priced from the
  `Memory` figures; the network's input and output live in `Target.io_memory`. The representation
  a kernel reads and writes (int8, or u8 = int8 + 128 as NE16 reads it) is the binding's
  (`Binding.input_offset`, `Binding.output_offsets`).
- `Target.ablations`: named module sets (seed 003 Table IV's columns) that `analyze --ablation`
  compares; `Target.with_modules` restricts a target to a set (`--modules`).
- `Target.cycles_unit`: what its cost model's cycles are, as reports label them ("cycles" where
  they are the chip's cycles as its simulator measures them; stm32h7's are a timing model's
  estimate); `Target.instruction_model`: for a core whose code is also counted in executed
  instructions (Cortex-M, `validate --on count`), the same target priced in instructions
  (validate/instructions.py re-prices a schedule with it).
- `Energy` figures are optional (0 = unknown).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ..platforms.base import HOST_ONLY, Platform

if TYPE_CHECKING:  # pragma: no cover
    from ..bindings.base import Binding

KB = 1024
MB = 1024 * 1024

#: operand roles a memory may serve: activations (network tensors), weights (layer constants),
#: tile buffers (L1 operand tiles, partial sums, kernel scratch)
ROLES = frozenset({"act", "weight", "tile"})


@dataclass(frozen=True)
class Memory:
    """One memory level. `size` is physical; `free` = size - reserved is what tiles may use."""

    name: str
    size: int
    #: bytes taken by stacks and the runtime (DESIGN.md: --l1/--l2 set size - reserved)
    reserved: int = 0
    #: DMA bandwidth between this level and the next outer one, bytes per core cycle
    bandwidth: float = 8.0
    #: DMA-side fixed cycles per transfer (latency of one command)
    dma_setup_cycles: float = 0.0
    #: DMA-side cycles per contiguous chunk of a transfer (seed 003: 27 on GAP9, 70 on DIANA)
    dma_chunk_cycles: float = 0.0
    #: core-side cycles to program one transfer (charged to the compute side of the tile)
    dma_issue_cycles: float = 0.0
    #: True: the DMA runs concurrently with compute (double buffering hides it); False: blocking
    dma_async: bool = True
    #: off-chip levels on their own clock: bandwidth in MB/s, converted with the target clock
    bandwidth_mb_s: float | None = None
    #: the operands this memory may hold (ROLES)
    roles: frozenset[str] = ROLES
    #: read-only at run time (flash): only constants live there, written by the programmer
    read_only: bool = False
    #: the modules read this memory directly at their own speed (a Cortex-M's flash through its
    #: accelerator / cache): constants stored here are read in place, never copied into tiles
    in_place: bool = False
    #: energy per byte moved into this level from the next outer one (pJ/B), 0 = unknown
    pj_per_byte: float = 0.0
    note: str = ""

    @property
    def free(self) -> int:
        return self.size - self.reserved

    def holds(self, role: str) -> bool:
        return role in self.roles

    def bytes_per_cycle(self, clock_mhz: float) -> float:
        if self.bandwidth_mb_s is not None:
            return self.bandwidth_mb_s / clock_mhz
        return self.bandwidth


@dataclass(frozen=True)
class Region:
    """One physical memory region of the chip, as its datasheet / reference manual gives it: the
    linker scripts are generated from these figures (codegen/linker.py) and a plan that does not
    fit them is refused before any work (schedule/fit.py). `backs` names the `Memory` level the
    region holds ("L1", "L2", "flash"), "data" for the firmware's own variables (.data, .bss), or
    "" for a region the firmware leaves unused; `ld` is its name in the linker script."""

    name: str
    origin: int
    size: int
    backs: str = ""
    ld: str = ""
    note: str = ""

    @property
    def label(self) -> str:
        """How an error names it: "AXI SRAM (512 kB at 0x24000000)"."""
        return f"{self.name} ({self.size / KB:g} kB at 0x{self.origin:08X})"



@dataclass(frozen=True)
class Module:
    """An execution module of a target (MATCH's "hardware execution module", seed 003 §IV)."""

    name: str
    cores: int
    #: what the module runs and how: one binding per (op, mode, precisions, geometry) it takes
    bindings: tuple[Binding, ...]
    #: memory level the kernels read and write; "L2" = computes in place from L2, never tiled
    memory: str = "L1"
    #: memory the module reads constant weights from when it is not the activation path: a
    #: read-only memory (a Cortex-M's flash) keeps const weights in place, never copied to RAM;
    #: None = weights live with the activations (L2, or streamed from L3 when they do not fit)
    weights_from: str | None = None
    #: operands whose tiles live in a memory of their own at the module's level, as (operand,
    #: memory name) pairs — DIANA's weight tiles in its weight memory ("w", "WMEM"): the tilers
    #: fit each memory's buffers to that memory's free bytes; () = every tile in `memory`
    operand_memory: tuple[tuple[str, str], ...] = ()
    #: --cores applies to this module
    scalable: bool = False
    #: average energy per active cycle (pJ), 0 = unknown
    pj_per_cycle: float = 0.0
    #: fixed cycles once per layer, outside the per-tile sum (cold instruction cache of the layer's
    #: kernel, runtime set-up): added to every schedule of the layer alike, so it never changes
    #: which schedule is best and keeps the tile terms superadditive
    layer_overhead_cycles: float = 0.0
    #: fixed cycles once per layer whose binding's function the network's core calls directly,
    #: with no fork, no tile loop and no DMA (Binding.direct_call: the portable family's whole
    #: functions — softmax, the lookup tables, slices, broadcast add / sub on the L2 tensors), in
    #: place of layer_overhead_cycles: the call, the layer's profiling stamps, its code's first
    #: fetches; None = layer_overhead_cycles
    call_overhead_cycles: float | None = None
    #: the memory the module exchanges tensors in between layers: it reads its input tensors from
    #: and writes its output tensor to this level; a tensor another module left elsewhere is moved
    #: here first (the hand-off, partition/handoff.py)
    exchange: str = "L2"
    #: width of the module's accumulator register in bits (two's complement): 32 = the int32
    #: accumulators of the portable / PULP / CMSIS kernels; narrower (the IDSP's 16, seed 002 ch. 4)
    #: makes every weighted int8 layer placed here wrap its accumulator modulo 2^acc_bits, in the
    #: golden model and the C alike (ir/layer.py `Layer.acc_bits`, golden/acc_bounds.py)
    acc_bits: int = 32
    #: runs only the members of fused chains (pipeline.py `_untiled`: the cluster's cores on the
    #: L2 tensors, a band's rows split over them): the partition never places a layer here alone
    chains_only: bool = False
    note: str = ""

    @property
    def families(self) -> tuple[str, ...]:
        """Names of the kernel families the module's bindings come from (in order)."""
        return tuple(dict.fromkeys(b.family.name for b in self.bindings))

    def with_acc_bits(self, bits: int) -> Module:
        """Copy with `bits`-bit accumulators, its bindings re-priced where their cost model
        depends on the accumulator width (a model with `for_acc_bits(bits)`: the IDSP's SimdDsp,
        seed 002 §3.2)."""
        def priced(b):
            f = getattr(b.cost, "for_acc_bits", None)
            return b if f is None else replace(b, cost=f(bits))

        return replace(self, acc_bits=bits, bindings=tuple(priced(b) for b in self.bindings))

    def fixed_cycles(self, direct_call: bool) -> float:
        """The layer's fixed cycles outside its kernel's terms: call_overhead_cycles for a layer
        called directly (Binding.direct_call) where the module has that figure, else
        layer_overhead_cycles."""
        if direct_call and self.call_overhead_cycles is not None:
            return self.call_overhead_cycles
        return self.layer_overhead_cycles

    @property
    def cost_models(self) -> tuple[str, ...]:
        """Names of the cost models pricing the module's bindings (in order)."""
        return tuple(dict.fromkeys(b.cost.name for b in self.bindings))


@dataclass(frozen=True)
class Target:
    """A chip: clock, memory levels (innermost first), execution modules, citations."""

    name: str
    description: str
    clock_mhz: float
    memories: tuple[Memory, ...]
    modules: tuple[Module, ...]
    sources: tuple[str, ...] = field(default=())
    #: the software platform of its projects (platforms/: HAL, firmware, toolchain, runners);
    #: HOST_ONLY = the portable C and the host harness only
    platform: Platform = HOST_ONLY
    #: its kernels requantize in shift mode ((k·acc + λ) >> d: PULP-NN's, NE16's, DIANA's), so
    #: `quantize` writes shift-mode models for it
    shift_requant: bool = False
    #: False: its accelerator's shift requantization has no multiplier (DIANA's digital core:
    #: clip((acc + bias) >> d)), so `quantize` writes the power-of-two form (k = 1, one weight
    #: scale per layer: quantize/shift_out.py pow2_codes)
    shift_multiplier: bool = True
    #: where the network's input and output tensors are (`tw_network_run`'s buffers)
    io_memory: str = "L2"
    #: tw_network_run's own cycles beside its layers (NetworkSchedule.network_cycles): per run
    #: (its call and set-up), per layer its step (the arguments, the profiling stamps around the
    #: call) and per byte the copies of the outputs out of the arena and of the uint8 inputs into
    #: it (memcpy, the sign flip); 0 = not counted
    network_call_cycles: float = 0.0
    network_step_cycles: float = 0.0
    network_copy_cycles_per_byte: float = 0.0
    #: named module sets `analyze --ablation` compares, the first being the baseline of the
    #: speed-ups (seed 003 Table IV: CPU only, cluster + CPU, accelerator + CPU, all)
    ablations: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: the highest clock the part runs at (MHz; each chip file cites where the figure comes from):
    #: `--clock` above it is refused unless `--hypothetical`; None = no known limit
    max_clock_mhz: float | None = None
    #: True when an override went beyond the physical part (`with_overrides(beyond=True)`): a
    #: design study of a hypothetical chip, which reports and manifests say
    hypothetical: bool = False
    #: the chip's physical memory regions (datasheet figures, `Region`): the firmware's linker
    #: scripts and the fit check come from them; () = the SDK's own linker script places the code
    regions: tuple[Region, ...] = ()
    #: what the cost model's cycles are, as reports print them next to the figure
    cycles_unit: str = "cycles"
    #: the target priced in executed instructions (its modules' bindings with instruction
    #: coefficients), for a core whose runs are also counted in instructions; None = not modelled
    instruction_model: Callable[[Target], Target] | None = field(default=None, compare=False)

    @property
    def cycles_column(self) -> str:
        """`cycles_unit` short, for a column header: "cycles", "est. cycles" (a model's estimate),
        "instructions"."""
        word = self.cycles_unit.split(" (")[0]
        return f"est. {word}" if "estimated" in self.cycles_unit else word

    def region(self, backs: str) -> Region | None:
        """The region that holds memory level (or "data") `backs`, or None."""
        return next((r for r in self.regions if r.backs == backs), None)

    def memory(self, name: str) -> Memory:
        for m in self.memories:
            if m.name == name:
                return m
        raise KeyError(f"target {self.name} has no memory level {name}")

    def has_memory(self, name: str) -> bool:
        return any(m.name == name for m in self.memories)

    def outer(self, name: str, role: str = "act") -> Memory | None:
        """The level a tile of level `name` is moved from: the next outer level that holds
        `role` (activations by default), or None."""
        names = [m.name for m in self.memories]
        for m in self.memories[names.index(name) + 1:]:
            if m.holds(role) and not (m.read_only and role == "act"):
                return m
        return None

    def module(self, name: str) -> Module:
        for m in self.modules:
            if m.name == name:
                return m
        raise KeyError(f"target {self.name} has no module {name}")

    def with_modules(self, names: tuple[str, ...] | list[str]) -> Target:
        """Copy with only the modules named (in the target's order); ValueError naming the
        target's modules for an unknown name or an empty set."""
        have = tuple(m.name for m in self.modules)
        bad = [n for n in names if n not in have]
        if bad or not names:
            what = (f"target {self.name} has no module {', '.join(repr(n) for n in bad)}" if bad
                    else "the module set is empty")
            raise ValueError(f"{what}; its modules are {', '.join(have)}")
        return replace(self, modules=tuple(m for m in self.modules if m.name in names))

    def with_overrides(self, *, l1_kb: float | None = None, l2_kb: float | None = None,
                       cores: int | None = None, clock_mhz: float | None = None,
                       beyond: bool = False) -> Target:
        """Copy with the CLI overrides applied.

        l1_kb / l2_kb set the *free* bytes of L1 / L2 (DESIGN.md: the space left after stacks and
        runtime reservations); the physical size becomes reserved + that. `cores` changes every
        scalable module; `clock_mhz` the clock (off-chip bandwidths given in MB/s follow it).
        A part has the memories and cores it has: more free L1/L2 than its physical memory leaves
        after its reservations, or more cores than its modules have, is refused (ValueError)
        unless `beyond` (a design study of a hypothetical chip), so that a schedule always fits
        the real part with its stacks; so is a clock above `max_clock_mhz`. With `beyond`, a copy
        that exceeds any of these limits has `hypothetical` set.
        """
        over = False
        mems = list(self.memories)
        for name, kb in (("L1", l1_kb), ("L2", l2_kb)):
            if kb is None:
                continue
            if not kb > 0 or kb == float("inf"):
                raise ValueError(f"{name} size must be a positive number of kB, got {kb}")
            i = [m.name for m in mems].index(name)
            free = int(round(kb * KB))
            if 0 < free - mems[i].free <= KB // 20:   # the free size as printed (to 0.1 kB) typed back
                free = mems[i].free
            over = over or free > mems[i].free
            if free > mems[i].free and not beyond:
                raise ValueError(
                    f"--{name.lower()} {kb:g} kB is more than {self.name} has: its {name} is "
                    f"{mems[i].size / KB:g} kB with {mems[i].reserved / KB:.1f} kB reserved (stacks, "
                    f"runtime), so at most {mems[i].free / KB:.1f} kB are free")
            mems[i] = replace(mems[i], size=mems[i].reserved + free)
        mods = self.modules
        if cores is not None:
            if cores < 1:
                raise ValueError(f"cores must be >= 1, got {cores}")
            scalable = [m for m in mods if m.scalable]
            if not scalable:
                raise ValueError(f"--cores does not apply to {self.name}: none of its modules "
                                 f"has a configurable core count")
            most = max(m.cores for m in scalable)
            over = over or cores > most
            if cores > most and not beyond:
                raise ValueError(f"--cores {cores} is more than {self.name} has ({most})")
            mods = tuple(replace(m, cores=cores) if m.scalable else m for m in mods)
        clock = self.clock_mhz if clock_mhz is None else float(clock_mhz)
        if not clock > 0 or clock == float("inf"):
            raise ValueError(f"clock must be a positive number of MHz, got {clock}")
        if self.max_clock_mhz is not None and clock > self.max_clock_mhz:
            over = True
            if not beyond:
                raise ValueError(f"--clock {clock:g} MHz is more than {self.name} runs at (at most "
                                 f"{self.max_clock_mhz:g} MHz)")
        return replace(self, memories=tuple(mems), modules=mods, clock_mhz=clock,
                       hypothetical=self.hypothetical or over)

    def with_acc_bits(self, bits: int, module: str | None = None) -> Target:
        """Copy whose module `module` (every module when None) has `bits`-bit accumulators;
        ValueError outside 8..32 bits or for an unknown module."""
        if not 8 <= bits <= 32:
            raise ValueError(f"accumulator bits must be between 8 and 32, got {bits}")
        if module is not None:
            self.module(module)
        return replace(self, modules=tuple(m.with_acc_bits(bits) if module in (None, m.name) else m
                                           for m in self.modules))
