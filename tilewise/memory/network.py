"""Network-level L2 plan: activation lifetimes over the execution order, and weight placement.

DESIGN.md "Memory planning" and seed 001 §4.4: activations live in L2 at static offsets computed
from their lifetimes (a residual output lives until its last consumer); weights live in L2 when
they fit alongside the activation plan, otherwise in L3, and the next layer's weights are
prefetched from L3 into an L2 buffer during the current layer (DORY Listing 2: "transfer from L3
the weights of the following layer", then run the layer). A streamed weight buffer therefore lives
from the step before its layer to its layer, and it is counted in the plan.

Placement policy: all weights resident if that fits; otherwise start from every weight streamed
(the smallest possible footprint) and pin weights back into L2, largest first, while the plan
still fits — each pinned byte is a byte the µDMA no longer moves per inference. Weights the L3
tiler streams by output-channel tiles are never pinned (their tiles are what fits), and with
`stream=False` (no L3 holds weights) every weight is resident. Constants kept in a read-only
memory (a Cortex-M's flash) are not steps' weight bytes at all: they never enter the L2 plan.

State tensors (ir/graph.py; an SVDF's int16 state) are passed with the network outputs: they live
from step 0 to the last step, so no other buffer shares their bytes and the value a stateful layer
leaves there is still there at the next inference (docs/c_api.md "State kept across inferences").

A reshape's output is a view of its input (the bindings' reshapes never change a byte, DESIGN.md
"Memory planning"): a step with `alias_of` shares one buffer with the tensor it reshapes, from the
first step either is written to the last either is read (layers never write their inputs — but a
stateful layer its state, which is never a view's root — so the bytes stay valid for every
reader), and the reshape copies nothing. Chains of reshapes share their
root's buffer. A tensor the L3 tiler keeps in L3 shares nothing (its reshape copies).

In-place execution (memory/inplace.py): a step may name inputs its kernel can overwrite with its
output as it goes (`in_place`: tensor and lag, bindings/pulp/in_place.py). Where such an input
dies at that step (its last reader; not a network output, a view or a tensor in L3), the output
is linked to it; the linked plan (plan.py `plan_in_place`) is kept when its peak is lower than
the plan without links — the cost of in-place is nil (no copy: the kernel is the same), so the
peak is the only criterion. In that plan the network inputs the generated code reads where the
caller holds them (`caller_inputs`: no copy into the arena, codegen/network_c.py's `direct`; not
with L3 tiles) are buffers of 0 bytes: every plan gives them an offset, but the arena never holds
them (the plan without links still counts their bytes, so that the C of every network without
in-place execution stays as it was). The inputs may instead be held in the arena (the caller writes
them there, as TFLite Micro's caller does, or network.c copies them there), where a layer's
output is written over them: kept when the arena with them is smaller than the arena without
them plus the caller's buffers (`inputs_in_arena`; issue 30, vww's first conv over its image).
A plan that keeps no links holds the input's bytes anyway (the plan without links counts them);
with `hold_inputs` (every layer untiled on a one-core module: the kernels read the arena) the input
is then held there too when that plan is smaller than the plan without its bytes plus the caller's
buffer (ad_autoencoder: its first dense layer's 640 B input and 128 B output are the peak), else
the plan without its bytes is kept. Likewise the outputs: every network output has its buffer in
the plan, live to the last step; `arena_outputs` names those the caller may read there after the
run instead of passing a buffer of its own (`outputs_in_arena`: TW_OUTPUT_IN_ARENA, network.h; as
a TFLite Micro caller reads its output tensor in the arena).

Tensors kept in L3 by the L3→L2 tiler (`schedule/l3.py`) are left out of the L2 plan; the L2 tile
buffers that layer needs are passed as the step's `scratch_bytes`, and a layer whose weights are
streamed by output-channel tiles passes the L2 size of those tiles as `streamed_weight_bytes`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from ..errors import TilewiseError
from .buffers import Buffer, live_bytes, lower_bound
from .inplace import Link
from .plan import Plan, plan_buffers, plan_in_place


class L2TooSmallError(TilewiseError):
    """The network cannot be planned in the given L2: names the first layer that does not fit and
    the smallest L2 the plan needs (`layer`, `needed`)."""

    def __init__(self, message: str, layer: str, needed: int):
        super().__init__(message)
        self.layer = layer
        self.needed = needed


@dataclass(frozen=True)
class LayerStep:
    """One layer of the execution order, as the memory planner sees it."""

    name: str
    inputs: tuple[str, ...]
    output: str
    #: constants of the layer (weights, bias, requant tables) in bytes
    weight_bytes: int = 0
    #: L2 bytes of this layer's weight buffer when its weights are streamed from L3
    #: (None: the whole weights; less when the L3 tiler streams them by output-channel tiles)
    streamed_weight_bytes: int | None = None
    #: L2 working bytes live only during this step (tiles of L3-resident tensors)
    scratch_bytes: int = 0
    #: streamed weights are prefetched during the previous step (False: loaded at this step's
    #: start, when the previous step has no room for them)
    prefetch: bool = True
    #: the input whose bytes the output is (a reshape): both share one buffer (module docstring)
    alias_of: str | None = None
    #: inputs the kernel may overwrite with the output as it goes, each with the bytes the output
    #: must start below it (module docstring: in-place execution)
    in_place: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class NetworkPlan:
    """The L2 plan of a network: buffer offsets, peak, lower bound and weight placement."""

    plan: Plan
    l2_bytes: int
    #: layers whose weights stay resident in L2 for the whole run
    weights_in_l2: tuple[str, ...]
    #: layers whose weights live in L3 and are prefetched into L2 during the previous step
    weights_in_l3: tuple[str, ...]
    #: tensors left in L3 by the L3→L2 tiler (not in the L2 plan)
    l3_tensors: tuple[str, ...]
    #: each reshape output that shares its input's buffer → the tensor owning that buffer
    aliases: Mapping[str, str] = field(default_factory=dict, hash=False)
    #: each output written over its dying input → (that input, bytes the output starts below it)
    in_place: Mapping[str, tuple[str, int]] = field(default_factory=dict, hash=False)
    #: the peak of the plan without in-place execution (None: that plan is this one)
    peak_without_in_place: int | None = None
    #: network inputs held in the arena (the caller writes them there; module docstring)
    inputs_in_arena: tuple[str, ...] = ()
    #: network outputs the caller reads where the plan holds them in the arena (module docstring)
    outputs_in_arena: tuple[str, ...] = ()

    @property
    def peak(self) -> int:
        return self.plan.peak

    @property
    def lower_bound(self) -> int:
        return self.plan.lower_bound

    @property
    def planner(self) -> str:
        return self.plan.planner

    def activation_offset(self, tensor: str) -> int:
        return self.plan.offsets[act_name(tensor)]   # a view's offset is in the plan (plan_network)

    def weight_offset(self, layer: str) -> int:
        return self.plan.offsets[weight_name(layer)]

    def scratch_offset(self, layer: str) -> int:
        return self.plan.offsets[scratch_name(layer)]


def act_name(tensor: str) -> str:
    return f"act:{tensor}"


def weight_name(layer: str) -> str:
    return f"w:{layer}"


def scratch_name(layer: str) -> str:
    return f"tmp:{layer}"


def aliases(steps: Sequence[LayerStep], l3_tensors: frozenset[str] = frozenset()) -> dict[str, str]:
    """Each reshape output sharing a buffer → the tensor owning it (the root of a reshape chain);
    none where either tensor stays in L3."""
    out: dict[str, str] = {}
    for s in steps:
        if s.alias_of is not None and s.output not in l3_tensors and s.alias_of not in l3_tensors:
            out[s.output] = out.get(s.alias_of, s.alias_of)
    return out


def activation_buffers(
    steps: Sequence[LayerStep], tensor_bytes: Mapping[str, int], outputs: Sequence[str] = (),
    l3_tensors: frozenset[str] = frozenset(),
) -> list[Buffer]:
    """One buffer per L2 activation: from its producing step (0 for network inputs) to its last
    consumer (the last step for network outputs); a reshape's output and its input share one
    (`aliases`), live from the first to the last step of either."""
    n = len(steps)
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for i, s in enumerate(steps):
        for t in s.inputs:
            first.setdefault(t, 0)
            last[t] = i
        if s.output in first:
            raise ValueError(f"tensor {s.output!r} is written by two layers or read before written")
        first[s.output] = i
        last.setdefault(s.output, i)
    for t in outputs:
        if t in first:   # a network input given back as an output, read by no layer: no buffer
            last[t] = n - 1
    alias = aliases(steps, l3_tensors)
    for t, root in alias.items():
        first[root], last[root] = min(first[root], first[t]), max(last[root], last[t])
    return [Buffer(act_name(t), int(tensor_bytes[t]), first[t], last[t], "activation")
            for t in first if t not in l3_tensors and t not in alias]


def _weight_buffers(steps: Sequence[LayerStep], pinned: set[str]) -> list[Buffer]:
    n = len(steps)
    out = []
    for i, s in enumerate(steps):
        if s.weight_bytes <= 0:
            continue
        if s.name in pinned:
            out.append(Buffer(weight_name(s.name), s.weight_bytes, 0, n - 1, "weight"))
        else:
            size = s.weight_bytes if s.streamed_weight_bytes is None else s.streamed_weight_bytes
            first = max(0, i - 1) if s.prefetch else i
            out.append(Buffer(weight_name(s.name), size, first, i, "weight"))
    return out


def _scratch_buffers(steps: Sequence[LayerStep]) -> list[Buffer]:
    return [Buffer(scratch_name(s.name), s.scratch_bytes, i, i, "scratch")
            for i, s in enumerate(steps) if s.scratch_bytes > 0]


def plan_network(
    steps: Sequence[LayerStep], tensor_bytes: Mapping[str, int], l2_bytes: int,
    outputs: Sequence[str] = (), l3_tensors: frozenset[str] = frozenset(), align: int = 4,
    stream: bool = True, caller_inputs: frozenset[str] = frozenset(), hold_inputs: bool = False,
    arena_outputs: frozenset[str] = frozenset(),
) -> NetworkPlan:
    """Plan activations and weights of `steps` in an L2 of `l2_bytes`; `hold_inputs`: the input
    may be held in the arena without in-place links, `arena_outputs`: the outputs the caller may
    read in the arena (module docstring: the inputs and outputs in the arena).

    Raises TilewiseError naming the first layer that cannot fit and the smallest L2 the plan needs.
    """
    if not steps:
        raise TilewiseError("cannot plan memory for a network without layers")
    acts = activation_buffers(steps, tensor_bytes, outputs, l3_tensors) + _scratch_buffers(steps)
    flips = [s.weight_bytes > 0 for s in steps]
    weighted = [s.name for s in steps if s.weight_bytes > 0]

    def attempt(pinned: set[str], capacity: int | None = None) -> Plan:
        return plan_buffers(acts + _weight_buffers(steps, pinned), flips, align, capacity)

    def fits(pinned: set[str]) -> bool:
        bufs = acts + _weight_buffers(steps, pinned)
        if lower_bound(bufs, align) > l2_bytes:
            return False
        return attempt(pinned, l2_bytes).peak <= l2_bytes

    tiled = {s.name for s in steps if s.streamed_weight_bytes is not None}
    pinnable = [n for n in weighted if n not in tiled]
    pinned = set(pinnable)
    if not fits(pinned):
        if not stream:
            raise _too_small(steps, attempt(pinned), l2_bytes)
        pinned = set()
        if not fits(pinned):
            raise _too_small(steps, attempt(pinned), l2_bytes)
        by_size = sorted(pinnable, key=lambda n: -next(s.weight_bytes for s in steps if s.name == n))
        for name in by_size:
            if fits(pinned | {name}):
                pinned.add(name)
    plan = attempt(pinned)  # the smallest peak the planners find for the chosen placement
    if plan.peak > l2_bytes:  # (a capacity-bounded search found a fit: keep that one)
        plan = attempt(pinned, l2_bytes)
    alias = aliases(steps, l3_tensors)
    unlinked = None
    arena_inputs: tuple[str, ...] = ()
    links = in_place_links(steps, plan.buffers, outputs, l3_tensors, alias, align)
    if links:
        # the network inputs read where the caller holds them take no arena bytes in this plan
        # (module docstring)
        phantom = set() if l3_tensors or any(s.streamed_weight_bytes is not None for s in steps) \
            else {act_name(t) for t in caller_inputs}
        bufs = [replace(b, size=0) if b.name in phantom else b for b in plan.buffers]
        linked = plan_in_place(bufs, links, align)
        if linked.peak < plan.peak:
            whole_bufs = plan.buffers
            unlinked, plan = plan.peak, linked
            # the inputs in the arena instead (module docstring), when the arena with them costs
            # less than the arena without them plus the caller's buffers
            held = sum(b.size for b in whole_bufs if b.name in phantom)
            ins = frozenset(t for t in caller_inputs if act_name(t) in phantom)
            inner = in_place_links(steps, whole_bufs, outputs, l3_tensors, alias, align, ins)
            # one caller input at most (network.h names it TW_INPUT_IN_ARENA)
            if held and len(ins) == 1 and len(inner) > len(links):
                whole = plan_in_place(whole_bufs, inner, align)
                if whole.peak < plan.peak + held:
                    plan, arena_inputs = whole, tuple(sorted(ins))
    if hold_inputs and unlinked is None and len(caller_inputs) == 1 and not l3_tensors \
            and not any(s.streamed_weight_bytes is not None for s in steps):
        # no links kept: this plan holds the input's bytes, which the layers may read there
        # rather than where the caller holds it (module docstring)
        name = act_name(next(iter(caller_inputs)))
        held = sum(b.size for b in plan.buffers if b.name == name)
        if held:
            apart = plan_buffers([replace(b, size=0) if b.name == name else b
                                  for b in plan.buffers], flips, align)
            if plan.peak < apart.peak + held:
                arena_inputs = tuple(sorted(caller_inputs))
            else:
                plan = apart
    if alias:   # a view's offset is its owner's
        plan = replace(plan, offsets={**plan.offsets, **{act_name(t): plan.offsets[act_name(r)]
                                                         for t, r in alias.items()}})
    return NetworkPlan(
        plan, l2_bytes,
        tuple(n for n in weighted if n in pinned), tuple(n for n in weighted if n not in pinned),
        tuple(sorted(l3_tensors)), alias,
        {lk.output[4:]: (lk.input[4:], lk.lag) for lk in plan.links}, unlinked, arena_inputs,
        tuple(t for t in outputs if t in arena_outputs and act_name(t) in plan.offsets
              and alias.get(t, t) not in caller_inputs - set(arena_inputs)))


def in_place_links(steps: Sequence[LayerStep], buffers: Sequence[Buffer], outputs: Sequence[str],
                   l3_tensors: frozenset[str], alias: Mapping[str, str], align: int,
                   arena_inputs: frozenset[str] = frozenset()) -> list[Link]:
    """The links of the steps' in-place candidates whose input dies at the step (module
    docstring), the first such candidate of each step; lags rounded up to `align`. Network inputs
    are linked only when in the arena (`arena_inputs`); elsewhere the layers read them where the
    caller holds them (codegen/network_c.py)."""
    by_name = {b.name: b for b in buffers}
    shared = set(alias) | set(alias.values())
    produced = {s.output for s in steps}     # a network input is read where the caller holds it
    links: list[Link] = []
    for i, s in enumerate(steps):
        out = by_name.get(act_name(s.output))
        if out is None or out.first != i or s.output in shared:
            continue
        for t, lag in s.in_place:
            b = by_name.get(act_name(t))
            if (b is None or b.last != i or t in outputs or t in shared or t in l3_tensors
                    or (t not in produced and t not in arena_inputs) or s.inputs.count(t) != 1):
                continue
            links.append(Link(out.name, b.name, -(-lag // align) * align))
            break
    return links


def _too_small(steps: Sequence[LayerStep], plan: Plan, l2_bytes: int) -> L2TooSmallError:
    """The one-sentence error for a plan whose smallest footprint still exceeds L2."""
    live = live_bytes(plan.buffers, plan.align)
    for i, s in enumerate(steps):
        if live.get(i, 0) > l2_bytes:
            return L2TooSmallError(
                f"layer '{s.name}' cannot fit in L2 of {l2_bytes} bytes: the buffers live while it "
                f"runs need {live[i]} bytes, and the whole network needs "
                f"an L2 of at least {plan.peak} bytes.", s.name, plan.peak)
    for i, s in enumerate(steps):
        if any(b.first <= i <= b.last and plan.offsets[b.name] + b.size > l2_bytes
               for b in plan.buffers):
            return L2TooSmallError(
                f"layer '{s.name}' is the first that cannot fit in L2 of {l2_bytes} bytes once "
                f"buffers are placed (fragmentation); the network needs an L2 of at least "
                f"{plan.peak} bytes.", s.name, plan.peak)
    return L2TooSmallError(f"the network needs an L2 of at least {plan.peak} bytes, more than the "
                           f"{l2_bytes} available.", steps[-1].name, plan.peak)


def steps_from_layer_graph(lg) -> tuple[list[LayerStep], dict[str, int]]:
    """LayerSteps and activation sizes (bytes) of a `ir.layer.LayerGraph`."""
    from ..ir.tensor import np_dtype

    steps = [LayerStep(l.name, tuple(l.inputs), l.output, l.weight_bytes) for l in lg.layers]
    sizes: dict[str, int] = {}
    for name, t in lg.tensors.items():
        n = 1
        for d in t.shape:
            n *= int(d)
        sizes[name] = n * np_dtype(t.dtype).itemsize
    return steps, sizes
