"""The one flow of tilewise: model file → Graph → Layers → partition → schedule → memory plan →
`NetworkSchedule` (DESIGN.md "Pipeline"). Every command (analyze, generate, validate, explore,
demo) calls it; nothing else strings the stages together.

    compile(model, target, options)
      = compile_graph(load(model, options), target, options)
      = schedule_network(lower(graph), target, options.tiler, options.l3_strategy,
                         options.objective)

`schedule_network` is the back half, from the lowered network to the decisions codegen emits and
the report shows:
0. attentions (q·kᵀ → softmax → ·v) become one depth-first layer where a module of the target runs
   it (passes/fuse_attention.py), and a conv with the residual add that alone reads its output one
   conv2d_add layer where the target's cost model predicts it cheaper than the two
   (passes/fuse_residual.py, `fusion_saving`); `depth_first=False` keeps them layer by layer;
1. a network that cannot fit the chip is refused first (schedule/fit.py);
2. partition (tilewise/partition) gives every layer one placement — module and binding — chosen by
   the network's cost (layers and hand-offs of tensors between modules), with its L2→L1 schedule
   on the whole layer; the hand-offs' cycles are part of the network's (`cycles`);
3. every weighted int8 layer carries its module's accumulator width (`Layer.acc_bits`), so that
   the golden model and the C wrap alike;
4. constants of modules that read weights from a read-only memory (`Module.weights_from`: a
   Cortex-M's flash) stay there: they are not in the L2 plan, and they must fit that memory;
5. the L3→L2 decisions and the static L2 plan come from `schedule.l3.plan_memory` (seed 001 Eq. 5
   cascade, bidirectional stack vs best fit, weights in L2 or streamed from L3 with prefetch),
   under each placement's tile rules (untiled kernels and the 16x8 ones are never cut at L3) and
   the target's memory roles (activations go to L3 only where an L3 holds them);
6. a layer cut at L3→L2 is rescheduled on every distinct sub-layer its L2 tiles present
   (schedule/tiled.py), with the same placement; its reported schedule is the interior tile's;
7. the activations left in L3 get static L3 offsets (`memory.l3.plan_l3_activations`);
8. where the next layer's first-tile weights and constants fit in L1 beside a layer's buffers,
   the layer loads them while it computes (schedule/prefetch.py); `layer_cycles` carries the
   moved cost, `NetworkSchedule.prefetch` the placement codegen emits.
Between 4 and 5, with `chains`, fused chains (schedule/chain.py): runs of two or more layers
computed row band by row band, their intermediate tensors never in memory, each priced by its
bindings' cost model within chain.BUDGET of the unfused layers and kept when it lowers the L2
plan's peak (largest intermediate bytes first); the plan then holds one step per chain, its rings
as the step's scratch. With a RAM budget
(`ram_budget`, bytes of the L1 arena plus the L2 plan's peak: `NetworkSchedule.ram_bytes`) the
chains cost cycles only where the budget needs them: none when the unfused plan fits it, else
chains in the same order until it fits (the fastest schedule within the budget: the RAM × cycles
trade-off explore's `--ram-budget` sweeps); a budget no kept chain reaches is refused naming the
smallest RAM found. After each chain kept the candidates are taken again from the first (a
smaller one the peak's move made useful goes before a larger one overlapping it). Under a budget
the unfused plan misses, a layer the partition tiled (pulp-open's cluster: L1 tiles, which no
chain holds) may run in a chain on an untiled placement instead (`_untiled`: pulp-open's
cluster-l2, the 8 cores on the L2 tensors), priced by that placement's model; the other layers
keep the partition's.
Errors name the first layer that cannot fit and the smallest memory it would need.

`NetworkSchedule` — the decisions for a whole network, what `analyze` reports and `generate`
emits — lives here, above partition, schedule and memory, which know nothing of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

from .bindings.pulp.in_place import in_place_candidates
from .errors import TilewiseError
from .ir.graph import Graph, state_tensors
from .ir.layer import Layer, LayerGraph, LoopNest
from .ir.layout import input_perm
from .ir.operands import const_bytes
from .ir.ops import Op
from .memory.inplace import live_linked
from .memory.l3 import L3Plan, plan_l3_activations
from .memory.network import L2TooSmallError, LayerStep, NetworkPlan
from .partition import Choice, Partition, alternative, partition
from .passes import fuse_attention, fuse_residual, lower
from .schedule.chain import Chain, branch_of, candidates, chainable, copy_cycles, is_add, l1_layout, plan_chain
from .schedule.cost import band_cycles
from .schedule.fit import check_fits, l2_refusal
from .schedule.l3 import L3Tiling, NetworkL3, l3_dma, plan_memory
from .schedule.placement import Placement
from .schedule.prefetch import NONE, NetworkPrefetch, plan_prefetch
from .schedule.space import REDUCING, LayerSchedule
from .schedule.tiled import Dma, TiledLayer, embedded_dma, tile_jobs, tile_schedules
from .targets.base import Target


@dataclass(frozen=True)
class Options:
    """How to compile: the per-layer tiler (schedule/api.py TILERS), the partition objective
    (latency, energy, edp), the L3→L2 strategy, and the code types of an integer export's
    container inputs (frontend.load_model's `input_dtypes`; empty: as the model states)."""

    tiler: str = "model"
    objective: str = "latency"
    l3_strategy: str = "cascade"
    input_dtypes: Mapping[str, str] = field(default_factory=dict)
    #: fuse attentions into depth-first layers where the target runs them (passes/fuse_attention.py)
    depth_first: bool = True
    #: run pairs of layers as fused chains where the cost model picks them (schedule/chain.py)
    chains: bool = True
    #: bytes of RAM (L1 arena + L2 plan peak) the schedule may use: the fastest schedule within
    #: it (module docstring); None: the least RAM the chains reach
    ram_budget: int | None = None


def compile(model: str | Path, target: Target, options: Options = Options()) -> NetworkSchedule:
    """The whole flow: load `model`, lower it, partition, schedule and plan it on `target`."""
    return compile_graph(load(model, options), target, options)


def load(model: str | Path, options: Options = Options()) -> Graph:
    """The model file as a verified integer Graph (frontend: TFLite or ONNX)."""
    from .frontend import load_model

    return load_model(model, dict(options.input_dtypes) or None)


def runs_fused(layer: Layer, lg: LayerGraph, target: Target) -> bool:
    """Some module of `target` has a binding for fused `layer` that takes it and whose scratch
    fits the target's free L1 (passes/fuse_attention.py's `accept`)."""
    from .bindings.keys import layer_key, matches

    key = layer_key(layer, lg)
    free = target.memory("L1").free if target.has_memory("L1") else None
    for module in target.modules:
        for b in module.bindings:
            if not matches(b, key) or b.check(layer, lg) is not None:
                continue
            n = layer.nest
            scr = int(b.scratch(n, module.cores, n.K, n.C, n.OY, n.OX))
            if free is None or scr <= free:
                return True
    return False


def fusion_saving(fused: Layer, conv: Layer, add: Layer, lg: LayerGraph, target: Target,
                  tiler: str = "model", objective: str = "latency") -> float | None:
    """passes/fuse_residual.py's `accept`: the objective the fused conv + add layer saves on
    `target` — the conv's and the add's cheapest placements (each on its own, as
    partition.choose prices them; hand-offs ignored) less the fused layer's — or None where no
    module of the target runs the fused layer."""
    from .bindings.keys import layer_key, matches
    from .partition.choose import _objective, candidates

    def best(layer: Layer) -> float | None:
        try:
            cands, legal = candidates(layer, lg, target, tiler, objective)
        except TilewiseError:
            return None
        return min(_objective(objective, cands[i].cycles or 0.0, cands[i].energy_pj or 0.0)[0]
                   for i, _, _ in legal)

    key = layer_key(fused, lg)
    if not any(matches(b, key) for m in target.modules for b in m.bindings):
        return None
    f, c, a = best(fused), best(conv), best(add)
    return None if f is None or c is None or a is None else c + a - f


def compile_graph(graph: Graph, target: Target, options: Options = Options()) -> NetworkSchedule:
    """The flow from a loaded Graph (a caller that also needs the Graph: validate's reference)."""
    return schedule_network(lower(graph), target, options.tiler, options.l3_strategy,
                            options.objective, options.depth_first, options.chains,
                            options.ram_budget)


def schedule_network(lg: LayerGraph, target: Target, tiler: str = "model",
                     l3_strategy: str = "cascade", objective: str = "latency",
                     depth_first: bool = True, chains: bool = True,
                     ram_budget: int | None = None) -> NetworkSchedule:
    """Partition `lg` on `target`, schedule every layer and plan its memory (module docstring);
    with `depth_first`, attentions the target runs depth first and the residual adds it runs
    cheaper fused into their conv are fused first (0); with `chains`, fused chains where they
    lower the peak, or only as many as `ram_budget` needs (module docstring)."""
    if depth_first:
        lg = fuse_attention(lg, partial(runs_fused, target=target))     # 0
        lg = fuse_residual(lg, partial(fusion_saving, target=target, tiler=tiler,
                                       objective=objective))
    check_fits(lg, target)                                                  # 1
    part = partition(lg, target, tiler, objective)                          # 2
    lg = _with_acc_bits(lg, part)                                           # 3
    rom = _rom(lg, part, target)                                            # 4
    fused, l3, plan, part = _choose_chains(lg, part, target, l3_strategy, tiler, chains,  # 4-5
                                           ram_budget)
    tiled = {layer.name: tile_schedules(layer, l3.tilings[layer.name], c.placement, target, tiler)
             for layer, c in zip(lg.layers, part.choices) if layer.name in l3.tilings}   # 6
    schedules = tuple(tiled[layer.name].interior if layer.name in tiled else c.schedule
                      for layer, c in zip(lg.layers, part.choices))
    l3_plan = plan_l3_activations(l3.steps, _tensor_bytes(lg), l3.l3_tensors, lg.outputs)  # 7
    prefetch = _prefetch(lg, part, schedules, plan, frozenset(tiled), target)            # 8
    ns = NetworkSchedule(lg, target, tiler, schedules, l3, plan, tiled, l3_plan, part, rom,
                         prefetch, fused)
    if ram_budget is not None and ns.ram_bytes > ram_budget:
        raise TilewiseError(
            f"--ram-budget {ram_budget / 1024:g} kB cannot be met on {target.name}: the least RAM "
            f"tilewise finds is {ns.ram_bytes:,} B (L1 arena {ns.ram_bytes - plan.peak:,} B + L2 "
            f"peak {plan.peak:,} B{' with fused chains' if fused else ''}); give a budget of at "
            f"least {-(-ns.ram_bytes // 1024)} kB")
    return ns


def _prefetch(lg: LayerGraph, part: Partition, schedules: tuple[LayerSchedule, ...],
              plan: NetworkPlan, l3_tiled: frozenset[str], target: Target) -> NetworkPrefetch:
    """Step 8: the cross-layer weight prefetches (schedule/prefetch.py)."""
    in_l2 = set(plan.weights_in_l2)
    names = [layer.name for layer in lg.layers]
    return plan_prefetch(
        schedules, tuple(c.placement.binding.family.name for c in part.choices),
        tuple(c.placement.module.layer_overhead_cycles for c in part.choices),
        frozenset(i for i, n in enumerate(names) if n in in_l2),
        frozenset(i for i, n in enumerate(names) if n in l3_tiled), target)


@dataclass(frozen=True, eq=False)
class NetworkSchedule:
    """The decisions for a whole network: what `analyze` reports and `generate` emits."""

    layers: LayerGraph
    target: Target
    tiler: str
    #: one per layer, in execution order (for an L3-tiled layer: the schedule of one L2 tile)
    schedules: tuple[LayerSchedule, ...]
    #: L3→L2 tiling of the layers that needed it, by layer name
    l3: NetworkL3
    memory: NetworkPlan
    #: per L3-tiled layer (by name): its L2 tiles and their schedules
    l3_tiles: dict[str, TiledLayer] = field(default_factory=dict, hash=False)
    #: offsets in L3 of the activations left there
    l3_plan: L3Plan = field(default_factory=lambda: L3Plan({}, 0))
    #: the placement of every layer and the candidates partition weighed
    partition: Partition | None = None
    #: constant bytes kept in read-only memories (flash), by memory name
    rom: dict[str, int] = field(default_factory=dict, hash=False)
    #: cross-layer weight prefetches and each layer's L1 arena offset (schedule/prefetch.py)
    prefetch: NetworkPrefetch = NONE
    #: the fused chains (schedule/chain.py), in execution order
    chains: tuple[Chain, ...] = ()

    def chain_of(self, name: str) -> Chain | None:
        """The chain holding layer `name`, if any."""
        return next((c for c in self.chains if name in c.layers), None)

    def placement(self, i: int) -> Placement:
        assert self.partition is not None
        return self.partition.choices[i].placement

    def const_bytes(self, layer: Layer) -> int:
        """Bytes of `layer`'s whole constant blob as its binding lays it out — every output
        channel, also for a layer tiled at L3, whose reported schedule is one L2 tile's."""
        s = self.schedule(layer.name)
        t = self.l3.tilings.get(layer.name)
        return const_bytes(layer, s.const_bytes, t.nest if t is not None and t.nest else s.nest)

    def schedule(self, name: str) -> LayerSchedule:
        for layer, s in zip(self.layers.layers, self.schedules):
            if layer.name == name:
                return s
        raise KeyError(name)

    def l3_tiling(self, name: str) -> L3Tiling | None:
        return self.l3.tilings.get(name)

    def layer_cycles(self, i: int) -> float:
        """Predicted cycles of layer i: its L2 tiles' L1 schedules plus its L3 traffic."""
        layer = self.layers.layers[i]
        t = self.l3.tilings.get(layer.name)
        s = self.schedules[i]
        ch = self.chain_of(layer.name)
        if ch is not None:   # the producer's band calls; the consumer's with the ring's copies
            k = ch.layers.index(layer.name)
            return ch.member_cycles[k] + (ch.copy_cycles if k == len(ch.layers) - 1 else 0.0)
        if t is None:
            return s.cycles + self.prefetch.delta(i)
        tl = self.l3_tiles.get(layer.name)
        if tl is None:
            return s.cycles * t.n_tiles + t.l3_cycles
        return sum(tl.schedule_of(j).cycles for j in range(len(tl.tiles))) + t.l3_cycles

    def layer_jobs(self, i: int) -> int:
        """Accelerator jobs layer i dispatches: its binding's jobs per tile times the L1 tiles it
        runs (summed over its L2 tiles when it is tiled at L3)."""
        binding = self.placement(i).binding
        if not (binding.jobs_per_tile or binding.jobs_of_rows):
            return 0
        tl = self.l3_tiles.get(self.layers.layers[i].name)
        scheds = [self.schedules[i]] if tl is None else [tl.schedule_of(j)
                                                          for j in range(len(tl.tiles))]
        return sum(tile_jobs(s, binding) for s in scheds)

    def layer_dma(self, i: int) -> Dma:
        """L2↔L1 DMA of layer i as its code moves it (summed over its L2 tiles)."""
        layer = self.layers.layers[i]
        tl = self.l3_tiles.get(layer.name)
        s = self.schedules[i]
        if tl is None:
            d = embedded_dma(s, s.nest.C if s.nest.kind in REDUCING else s.nest.K, s.nest.K)
            if i in self.prefetch.packed:   # w and b in one transfer (schedule/prefetch.py)
                return Dma(d.bytes, d.transfers - 1, d.chunks - 1)
            return d
        n = layer.nest
        xc = n.C if n.kind in REDUCING else n.K
        parts = [embedded_dma(tl.schedule_of(j), xc, n.K) for j in range(len(tl.tiles))]
        return Dma(sum(p.bytes for p in parts), sum(p.transfers for p in parts),
                   sum(p.chunks for p in parts))

    @property
    def l3_bytes(self) -> int:
        """L3↔L2 bytes the L3-tiled layers move per inference (input / output row tiles, weight
        k tiles; whole streamed weights are counted by the memory plan)."""
        return sum(t.l3_bytes for t in self.l3.tilings.values())

    @property
    def handoff_cycles(self) -> float:
        """Cycles of the copies of tensors between modules' exchange memories (partition)."""
        return self.partition.handoff_cycles if self.partition is not None else 0.0

    @property
    def network_cycles(self) -> float:
        """tw_network_run's own cycles beside its layers: the target's network_call_cycles, its
        network_step_cycles per layer and network_copy_cycles_per_byte per byte it copies —
        every output out of the arena (memcpy, or the sign flip of a uint8 one) and every uint8
        input into it (codegen/network_c.py; an input copied because it is transposed or its
        layers are tiled at L3 is not counted)."""
        t, lg = self.target, self.layers
        if not (t.network_call_cycles or t.network_step_cycles or t.network_copy_cycles_per_byte):
            return 0.0
        copied = (sum(lg.tensors[o].nbytes for o in lg.outputs)
                  + sum(lg.tensors[i].nbytes for i in lg.inputs if lg.tensors[i].dtype == "uint8"))
        return (t.network_call_cycles + t.network_step_cycles * len(lg.layers)
                + t.network_copy_cycles_per_byte * copied)

    @property
    def cycles(self) -> float:
        return (sum(self.layer_cycles(i) for i in range(len(self.schedules)))
                + self.handoff_cycles + self.network_cycles)

    @property
    def latency_ms(self) -> float:
        return self.cycles / (self.target.clock_mhz * 1e3)

    @property
    def macs(self) -> int:
        return sum(layer.macs for layer in self.layers.layers)

    @property
    def weights_l2_bytes(self) -> int:
        names = set(self.memory.weights_in_l2)
        return sum(self.const_bytes(l) for l in self.layers.layers if l.name in names)

    @property
    def weights_l3_bytes(self) -> int:
        names = set(self.memory.weights_in_l3)
        return sum(self.const_bytes(l) for l in self.layers.layers if l.name in names)

    @property
    def flash_bytes(self) -> int:
        """Constant bytes kept in read-only memories (not in RAM)."""
        return sum(self.rom.values())

    @property
    def l1_bytes(self) -> int:
        """The L1 arena: the largest of the layers' L1 layouts (tiles, buffers, scratch), each at
        its offset in the arena (schedule/prefetch.py moves a prefetched layer's)."""
        return max((*(s.l1_bytes + (self.prefetch.bases[i] if self.prefetch.bases else 0)
                      for i, s in enumerate(self.schedules)), *(c.l1_bytes for c in self.chains)),
                   default=0)

    @property
    def ram_bytes(self) -> int:
        """On-chip RAM the network needs: the L1 arena plus the L2 plan's peak (activations and
        the weights kept in L2; constants in read-only memory are not RAM)."""
        l1 = self.l1_bytes if self.target.has_memory("L1") else 0
        return l1 + self.memory.peak


def _rom(lg: LayerGraph, part: Partition, target: Target) -> dict[str, int]:
    """Constant bytes per read-only memory (modules with `weights_from`); they must fit it. An
    LSTM's or an SVDF's constant inputs (their weights and folded biases, static arrays of its
    layer file: Layer.weight_bytes) are there too."""
    rom: dict[str, int] = {}
    for layer, c in zip(lg.layers, part.choices):
        src = c.placement.module.weights_from
        if src is None:
            continue
        if layer.weights is not None:
            n = const_bytes(layer, c.placement.binding.const_bytes, c.schedule.nest)
        else:
            n = layer.weight_bytes if layer.op in (Op.LSTM, Op.SVDF) else 0
        if n:
            rom[src] = rom.get(src, 0) + n
    for name, used in rom.items():
        mem = target.memory(name)
        if used > mem.free:
            raise TilewiseError(f"the network's {used} bytes of constants do not fit the {mem.free} "
                                f"bytes of {name} on {target.name}")
    return rom


#: the layers whose accumulator a module's `acc_bits` narrows (the int8 weighted kernels)
_ACC_OPS = (Op.CONV2D, Op.DEPTHWISE, Op.FULLY_CONNECTED)


def _with_acc_bits(lg: LayerGraph, part: Partition) -> LayerGraph:
    """`lg` with every weighted layer carrying its module's accumulator width (`Layer.acc_bits`),
    so that the golden model and the C wrap alike; unchanged when every module has 32 bits.
    Narrow accumulators exist for the int8 kernels only: an int16 layer on such a module is
    refused (TilewiseError naming the layer and module)."""
    layers = []
    for layer, c in zip(lg.layers, part.choices):
        bits = c.placement.module.acc_bits
        if bits < 32 and layer.op in _ACC_OPS:
            if lg.tensors[layer.inputs[0]].dtype != "int8":
                raise TilewiseError(
                    f"layer '{layer.name}': module {c.placement.module.name} has {bits}-bit "
                    f"accumulators, which tilewise implements for int8 layers only (this one reads "
                    f"{lg.tensors[layer.inputs[0]].dtype})")
            layer = replace(layer, acc_bits=bits)
        layers.append(layer)
    if all(a is b for a, b in zip(layers, lg.layers)):
        return lg
    return replace(lg, layers=tuple(layers))


def _tensor_bytes(lg: LayerGraph) -> dict[str, int]:
    return {name: t.nbytes for name, t in lg.tensors.items()}


def _in_place(layer: Layer, lg: LayerGraph, placement: Placement, schedule: LayerSchedule
              ) -> tuple[tuple[str, int], ...]:
    """The inputs `layer`'s kernel may overwrite with its output as it goes (memory/network.py
    "In-place execution"): a pulp kernel whose loop order allows it (bindings/pulp/in_place.py),
    run untiled on a one-core module (the kernel alone reads and writes the L2 tensors, in its
    own order: no L1 tiles, no other core writing rows concurrently)."""
    if placement.module.cores != 1 or not schedule.untiled:
        return ()
    return in_place_candidates(layer, lg, placement.binding.label)


def _chain_step(ch: Chain, members: list[LayerStep]) -> LayerStep:
    """The one step of a chain in the L2 plan: the first member's inputs, the last one's output,
    the rings as its scratch, the output written over the chain's input as the bands go."""
    p = members[0]
    return LayerStep(p.name, p.inputs, members[-1].output,
                     weight_bytes=sum(m.weight_bytes for m in members),
                     scratch_bytes=ch.ring_bytes, in_place=((p.inputs[0], ch.lag),))


def _choose_chains(lg: LayerGraph, part: Partition, target: Target, l3_strategy: str, tiler: str,
                   enabled: bool, ram_budget: int | None = None
                   ) -> tuple[tuple[Chain, ...], NetworkL3, NetworkPlan, Partition]:
    """The chains kept (module docstring: between steps 4 and 5), the plan and the partition
    with them; with `ram_budget`, only until the L1 arena plus the plan's peak is within it."""
    l3, plan = _plan_l2(lg, part, target, l3_strategy)

    def fits(part: Partition, kept: Sequence[Chain]) -> bool:
        return ram_budget is not None and _l1_arena(part, kept, target) + plan.peak <= ram_budget

    if not enabled or fits(part, ()):
        return (), l3, plan, part
    # under a budget the plan misses, a member may leave its tiled placement for an untiled one
    # (_untiled): the partition's own choice elsewhere
    alt = _untiled(lg, part, target, tiler) if ram_budget is not None else {}
    ch_ = tuple(alt.get(i, c) for i, c in enumerate(part.choices))

    def ok(i: int) -> bool:
        c = ch_[i]
        return chainable(lg.layers[i], c.placement.binding.label, c.placement.module.cores,
                         c.schedule.untiled, lg)

    memo: dict[tuple[int, LoopNest, bool], float] = {}   # the runs overlap: their bands recur

    def fixed_of(k: int) -> float:
        """A member's call cost once per chain (a one-core module: the chain calls its rows
        function directly); 0 on a multi-core one, whose every band call forks its cores."""
        pl = ch_[k].placement
        return pl.module.fixed_cycles(pl.binding.direct_call) if pl.module.cores == 1 else 0.0

    def member_cycles(i: int):
        pl = ch_[i].placement
        fork = pl.module.fixed_cycles(pl.binding.direct_call) - fixed_of(i)

        # one band: the kernel's own terms (its per-call ones included; the add's tables in its
        # first band call only), not the layer's call — but on a multi-core module the fork of
        # each band call (the layer's fixed cycles)
        def cyc(n: LoopNest, first: bool) -> float:
            if (i, n, first) not in memo:
                memo[i, n, first] = band_cycles(n, pl, first) + fork
            return memo[i, n, first]
        return cyc

    priced = []
    for i, j in candidates(lg, ok):
        fixed = sum(fixed_of(k) for k in range(i, j))
        chain = plan_chain(tuple(lg.layers[k].name for k in range(i, j)),
                           [ch_[k].schedule.nest for k in range(i, j)],
                           [member_cycles(k) for k in range(i, j)], copy_cycles(target),
                           branch=branch_of(lg, i, j))
        if chain is not None:
            per = chain.member_cycles
            offs, l1 = l1_layout([ch_[k].schedule.l1_bytes for k in range(i, j)],
                                 [is_add(ch_[k].placement.binding.label) for k in range(i, j)])
            # unfused: the members as the partition placed them
            unfused = (chain.unfused_cycles + fixed if not alt.keys() & range(i, j)
                       else sum(part.choices[k].schedule.cycles for k in range(i, j)))
            chain = replace(chain, member_cycles=(per[0] + fixed, *per[1:]), l1_offsets=offs,
                            l1_bytes=l1, cycles=chain.cycles + fixed, unfused_cycles=unfused)
            # the chain's own step: its input, its output and its rings, the input and output
            # overlapping at most by the smaller (a lower bound of the peak with it), smallest
            # first — a long chain's rings may cost more than it saves
            x = sum(lg.tensors[t].nbytes for t in lg.layers[i].inputs)
            y = lg.tensors[lg.layers[j - 1].output].nbytes
            priced.append((x + y + chain.ring_bytes - min(x, y), i, chain))
    kept: list[Chain] = []
    used: set[str] = set()
    index = {layer.name: k for k, layer in enumerate(lg.layers)}
    steps = _plan_steps(plan, kept, index)
    # passes until none keeps a chain: a chain that lowers nothing while another step holds the
    # peak may lower it once that step is fused; a chain whose own step (its input and output
    # overlapping at most by the smaller) is not below the peak is not planned
    again = True
    while again:
        again = False
        for floor, i, chain in sorted(priced, key=lambda t: (t[0], t[1])):
            if (used & set(chain.layers) or floor >= plan.peak
                    or _peak_outside(steps, chain) >= plan.peak):
                continue
            try:
                partb = _members_on(part, ch_, index, (*kept, chain))
                l3b, planb = _plan_l2(lg, partb, target, l3_strategy, (*kept, chain))
            except TilewiseError:
                continue
            if planb.peak < plan.peak:
                kept.append(chain)
                used |= set(chain.layers)
                l3, plan, part = l3b, planb, partb
                steps = _plan_steps(plan, kept, index)
                again = not fits(part, kept)   # the L1 arena moves with the members' placement
                break
    return tuple(sorted(kept, key=lambda c: index[c.layers[0]])), l3, plan, part


def _l1_arena(part: Partition, kept: Sequence[Chain], target: Target) -> int:
    """The L1 arena of `part` with the `kept` chains (NetworkSchedule.l1_bytes before the
    prefetch's offsets): the largest layer's L1 layout or chain's L1 bytes."""
    if not target.has_memory("L1"):
        return 0
    return max((*(c.schedule.l1_bytes for c in part.choices), *(ch.l1_bytes for ch in kept)),
               default=0)


#: the ops a chain's member may be (schedule/chain.py `chainable`)
_CHAIN_OPS = frozenset({Op.CONV2D, Op.DEPTHWISE, Op.ADD})


def _untiled(lg: LayerGraph, part: Partition, target: Target, tiler: str) -> dict[int, Choice]:
    """Per layer the partition tiled (pulp-open's cluster: L2 -> L1 tiles), its cheapest untiled
    placement a chain may hold — a chain's members read and write their rows where they are,
    which L1 tiles do not: pulp-open's cluster-l2 (the 8 cores on the L2 tensors,
    Module.chains_only) or its cpu (core 0 alone), priced by the kernels' models for cores on
    the L2 tensors (targets/pulp_open.py CLUSTER_L2, HOST). Slower than the cluster's tiles, so only chains a
    RAM budget asks for take it (_choose_chains)."""
    out = {}
    for i, (layer, c) in enumerate(zip(lg.layers, part.choices)):
        if c.schedule.untiled or layer.op not in _CHAIN_OPS:
            continue
        a = alternative(layer, lg, target, tiler, part.objective,
                        lambda p, s: chainable(layer, p.binding.label, p.module.cores,
                                               s.untiled, lg))
        if a is not None:
            out[i] = a
    return out


def _members_on(part: Partition, choices: tuple[Choice, ...], index: Mapping[str, int],
                chains: tuple[Chain, ...]) -> Partition:
    """`part` with the `chains`' members placed as `choices` place them (_untiled's)."""
    members = {index[name] for ch in chains for name in ch.layers}
    return replace(part, choices=tuple(choices[k] if k in members else c
                                       for k, c in enumerate(part.choices)))


def _plan_steps(plan: NetworkPlan, kept: list[Chain], index: Mapping[str, int]
                ) -> tuple[dict[str, int], dict[int, int]]:
    """The step of each layer in `plan` (the plan of the `kept` chains: one step per layer, one
    per kept chain, as _plan_l2 makes them) and the bytes live at each step (memory/inplace.py
    `live_linked`, the plan's links); computed once per plan, read by `_peak_outside`."""
    heads = {index[c.layers[0]]: len(c.layers) for c in kept}
    by_index: dict[int, int] = {}
    t = k = 0
    while k < len(index):
        n = heads.get(k, 1)
        for m in range(k, k + n):
            by_index[m] = t
        k, t = k + n, t + 1
    p = plan.plan
    return ({name: by_index[k] for name, k in index.items()},
            live_linked(p.buffers, p.links, p.align))


def _peak_outside(steps: tuple[dict[str, int], dict[int, int]], chain: Chain) -> int:
    """The most bytes live at a step of the current plan (`_plan_steps`) that `chain` leaves as
    it is: those steps keep their tensors with the chain, so the chain cannot bring the peak
    below this — _choose_chains plans only the chains that might (a plan costs ~0.1 s; vww has
    ~100 candidate runs)."""
    step_of, live = steps
    inside = {step_of[name] for name in chain.layers}
    return max((b for s, b in live.items() if s not in inside), default=0)


def _plan_l2(lg: LayerGraph, part: Partition, target: Target, l3_strategy: str,
             chains: tuple[Chain, ...] = ()) -> tuple[NetworkL3, NetworkPlan]:
    """The L3→L2 cuts and the static L2 plan of the partitioned network (step 5), one step per
    chain; a network whose L2 is too small is refused naming the layer (schedule/fit.py
    `l2_refusal`)."""
    in_rom = {c.layer for c in part.choices if c.placement.module.weights_from is not None}
    # a reshape is a view of its input (memory/network.py), but not of a state tensor, which its
    # stateful layer rewrites in place
    state = set(state_tensors(lg.meta))
    steps = [LayerStep(layer.name, layer.inputs, layer.output,
                       weight_bytes=0 if layer.name in in_rom
                       else const_bytes(layer, c.placement.binding.const_bytes, c.schedule.nest),
                       alias_of=layer.inputs[0] if layer.op is Op.RESHAPE and layer.inputs[0] not in state
                       else None,
                       in_place=_in_place(layer, lg, c.placement, c.schedule))
             for layer, c in zip(lg.layers, part.choices)]
    for ch in chains:
        k = next(j for j, st in enumerate(steps) if st.name == ch.layers[0])
        n = len(ch.layers)
        steps[k:k + n] = [_chain_step(ch, steps[k:k + n])]
    nests = {layer.name: c.schedule.nest for layer, c in zip(lg.layers, part.choices)}
    rules = {c.layer: c.placement.rules for c in part.choices}
    l2 = target.memory("L2")
    hold = all(c.placement.module.cores == 1 and c.schedule.untiled for c in part.choices)
    try:
        return plan_memory(
            # a state tensor (svdf) lives from the first step to the last like an output: no other
            # buffer ever shares its bytes, so it keeps its value from one inference to the next
            steps, nests, _tensor_bytes(lg), l2.free, outputs=(*lg.outputs, *state_tensors(lg.meta)),
            strategy=l3_strategy,  # type: ignore[arg-type]
            rules=rules, l3_acts=target.outer("L2") is not None,
            l3_weights=target.outer("L2", "weight") is not None,
            const_per_channel={c.layer: c.placement.binding.const_bytes for c in part.choices},
            # the inputs network.c reads where the caller holds them (codegen/network_c.py `direct`:
            # not uint8, not transposed on a copy)
            caller_inputs=frozenset(t for k, t in enumerate(lg.inputs)
                                    if lg.tensors[t].dtype != "uint8"
                                    and (k != 0 or input_perm(lg.meta) is None)),
            # where every layer runs untiled on one core (the kernels read and write the arena:
            # a Cortex-M) the input may be held in the arena without in-place links, and the
            # caller reads its outputs there (not uint8 ones: network.c flips them on their copy)
            hold_inputs=hold,
            arena_outputs=frozenset(t for t in lg.outputs if hold and t not in lg.inputs
                                    and lg.tensors[t].dtype != "uint8"),
            **l3_dma(target),
        )
    except L2TooSmallError as e:
        raise l2_refusal(target, e) from None
