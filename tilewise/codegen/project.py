"""`generate`: a NetworkSchedule → the self-contained C project of DESIGN.md "Generated C project".

Nothing here decides anything: tiles, loop orders, buffering and L1 offsets come from each
layer's `LayerSchedule`, activation/weight offsets and weight placement from the memory plan
(`NetworkSchedule.memory`). Files written:

    network.h / network.c        tw_network_run (network_c.py)
    layers/layers.h, layer_NN.c  one function per layer (layer_c.py)
    weights.h / weights.c        constants resident in L2; weights_l3.bin for those in L3
    tw_kernels/ tw_runtime/ tw_hal/   the shipped C library (codegen/c), copied
    main_host.c, Makefile, README.md  host harness (host.py)
    tilewise.json                 the manifest validate reads (tensors, layers, predicted DMA)

The PULP HAL is added for PULP targets (gap8, gap9). Layers tiled at L3→L2 (ns.l3.tilings) get
an outer L3 loop (l3_c.py): one function per L2 tile geometry (layer_NN_gG.c) and a driver
(layer_NN.c). The L3 image weights_l3.bin is [constants streamed whole | weight k tiles of
L3-tiled layers | the L3 activation region (ns.l3_plan), zeros].
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import TilewiseError
from ..ir.layer import LayerGraph
from ..memory.network import act_name, weight_name
from ..schedule.network import NetworkSchedule
from ..schedule.space import LayerSchedule
from .constants import LayerConstants, layer_constants
from .host import MAIN_HOST, makefile, readme
from .l3_c import L3Layer, Where, check_supported, driver, emit_l3_layer
from .layer_c import LayerEmit, emit_tiled, emit_untiled
from .s16 import check_int16
from .network_c import L3Stream, arena_map, layers_h, network_c, network_h, weights_files

C_LIB = Path(__file__).resolve().parent / "c"
#: targets whose clusters run PMSIS (the PULP HAL is generated for them)
PULP_TARGETS = frozenset({"gap8", "gap9", "pulp-open"})
WEIGHTED = ("conv2d", "depthwise", "fully_connected")
INCLUDES = (".", "layers", "tw_kernels", "tw_hal", "tw_runtime")


@dataclass(frozen=True)
class Project:
    """A generated project on disk and its manifest (tilewise.json)."""

    path: Path
    manifest: dict[str, Any]

    @property
    def l3(self) -> bool:
        return self.manifest["l3_bytes"] > 0

    def sources(self, hal: str = "host") -> list[Path]:
        """C sources of the host (or PULP) build, harness included for the host."""
        p = self.path
        srcs = [p / "network.c", p / "weights.c", *sorted((p / "layers").glob("*.c")),
                *sorted((p / "tw_kernels").glob("*.c")), p / "tw_runtime" / "tw_tile.c"]
        if hal == "host":
            return srcs + [p / "tw_hal" / "tw_hal_host.c", p / "main_host.c"]
        return srcs + [p / "tw_hal" / "tw_hal_pulp.c"] + (
            [p / "tw_hal" / "tw_hal_pulp_l3.c"] if self.l3 else [])

    def includes(self) -> list[Path]:
        return [self.path / d for d in INCLUDES]


def _schedule_or_none(ns: NetworkSchedule, name: str) -> LayerSchedule | None:
    try:
        return ns.schedule(name)
    except (KeyError, ValueError):
        return None


def _check_network(lg: LayerGraph, ns: NetworkSchedule) -> None:
    if len(lg.inputs) != 1 or len(lg.outputs) != 1:
        raise TilewiseError(f"{lg.source or lg.name}: generate supports networks with one input and "
                            f"one output (this one has {len(lg.inputs)} and {len(lg.outputs)})")
    for name, t in lg.tensors.items():
        if t.dtype not in ("int8", "uint8", "int16"):
            raise TilewiseError(f"{lg.source or lg.name}: tensor '{name}' is {t.dtype}; the C "
                                f"kernels of generate are int8, uint8 and int16 (16x8) only")
    for layer in lg.layers:
        check_int16(layer, lg, _schedule_or_none(ns, layer.name), layer.name in ns.l3.tilings)
    check_supported(ns)


def _copy_library(out: Path, pulp: bool, l3: bool) -> None:
    for sub in ("tw_kernels", "tw_runtime"):
        dst = out / sub
        if dst.exists():
            shutil.rmtree(dst)
        shutil.copytree(C_LIB / sub, dst)
    hal = out / "tw_hal"
    if hal.exists():
        shutil.rmtree(hal)
    hal.mkdir()
    files = ["tw_hal.h", "tw_hal_chunks.h", "tw_hal_host.c", "tw_hal_host.h"]
    if pulp:
        files.append("tw_hal_pulp.c")
        if l3:
            files.append("tw_hal_pulp_l3.c")
    for f in files:
        shutil.copy2(C_LIB / "tw_hal" / f, hal / f)


def generate(ns: NetworkSchedule, out_dir: str | Path, model_name: str | None = None) -> Project:
    """Write the C project of `ns` into `out_dir` (created; generated files are overwritten)."""
    lg = ns.layers
    _check_network(lg, ns)
    target = ns.target
    plan = ns.memory
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "layers").mkdir(exist_ok=True)
    for old in (out / "layers").glob("layer_*.c"):
        old.unlink()
    l1_free = target.memory("L1").free if any(m.name == "L1" for m in target.memories) else None
    in_l3 = set(plan.weights_in_l3)

    # the arena: planned buffers the code uses (activations, weight buffers filled from L3)
    used = {act_name(t) for l in lg.layers for t in (*l.inputs, l.output)}
    used |= {weight_name(n) for n in in_l3}
    used |= {f"tmp:{n}" for n in ns.l3_tiles}
    arena = arena_map(plan, used)
    l3_layers: dict[int, L3Layer] = {}

    consts: dict[int, LayerConstants] = {}
    emits: list[LayerEmit] = []
    cores_used = 1
    l1_bytes = 4
    for i, (layer, s) in enumerate(zip(lg.layers, ns.schedules)):
        if layer.name in ns.l3_tiles:   # the driver is emitted once L3 offsets are known
            lay = l3_layers[i] = emit_l3_layer(i, layer, ns, l1_free)
            if lay.consts is not None:
                consts[i] = lay.consts
            emits.append(lay.emits[0])
            cores_used, l1_bytes = max(cores_used, lay.cores), max(l1_bytes, lay.l1_bytes)
            continue
        cores = target.module(s.module).cores
        cores_used = max(cores_used, cores)
        k = layer_constants(layer, lg, s) if layer.op in WEIGHTED and layer.weights is not None else None
        if k is not None:
            consts[i] = k
        in_off = [arena.act(t) for t in layer.inputs]
        out_off = arena.act(layer.output)
        emit = emit_untiled if s.untiled else emit_tiled
        emits.append(emit(i, layer, lg, s, cores, k, l1_free, in_off, out_off))
        l1_bytes = max(l1_bytes, s.l1_bytes)

    # L3 image and streams: a weight buffer is live from its prefetch step to its layer
    l3_streams: list[L3Stream] = []
    l3_image = bytearray()
    w_tiled = frozenset(i for i in l3_layers if ns.l3.tilings[lg.layers[i].name].w_tiled)
    for i, layer in enumerate(lg.layers):
        if layer.name not in in_l3 or i in w_tiled:
            continue
        if i not in consts:
            raise TilewiseError(f"layer '{layer.name}': constants planned in L3 but the layer has none")
        buf = next(b for b in plan.plan.buffers if b.name == weight_name(layer.name))
        if buf.size != consts[i].size:
            raise TilewiseError(f"layer '{layer.name}': the plan streams {buf.size} bytes of "
                                f"constants from L3, the layer has {consts[i].size}")
        l3_image += bytes(-len(l3_image) % 4)
        l3_streams.append(L3Stream(i, buf.first, len(l3_image), arena.offset(buf.name),
                                   consts[i].size))
        l3_image += consts[i].blob
    k_blobs: dict[int, list[int]] = {}
    for i in sorted(w_tiled):
        for blob in l3_layers[i].k_blobs:
            l3_image += bytes(-len(l3_image) % 4)
            k_blobs.setdefault(i, []).append(len(l3_image))
            l3_image += blob
    l3_image += bytes(-len(l3_image) % 4)
    act_base = len(l3_image)
    l3_acts = {t: act_base + o for t, o in ns.l3_plan.offsets.items()}
    l3_image += bytes(ns.l3_plan.bytes)
    streamed = {st.layer: st for st in l3_streams}
    for i, lay in l3_layers.items():
        layer = lg.layers[i]
        w_const = None
        if i in streamed or i in consts:
            w_const = "a->w"
        where = Where(
            tuple(None if x in l3_acts else arena.act(x) for x in layer.inputs),
            tuple(l3_acts.get(x) for x in layer.inputs),
            None if layer.output in l3_acts else arena.act(layer.output), l3_acts.get(layer.output),
            arena.offset(f"tmp:{layer.name}") if f"tmp:{layer.name}" in plan.plan.offsets else None,
            arena.offset(weight_name(layer.name)) if i in w_tiled else None, w_const,
            tuple(k_blobs.get(i, ())))
        emits[i] = driver(i, layer, ns, lay, where)
    in_t, out_t = lg.tensors[lg.inputs[0]], lg.tensors[lg.outputs[0]]
    layer_dma = [ns.layer_dma(i) for i in range(len(lg.layers))]
    dma = sum(d.bytes for d in layer_dma)
    l3_used = len(l3_image) > 0
    pulp = target.name in PULP_TARGETS
    out_sizes = [lg.tensors[l.output].nbytes for l in lg.layers]

    _copy_library(out, pulp, l3_used)
    (out / "layers" / "layers.h").write_text(layers_h(emits, [l.name for l in lg.layers]))
    for e in [*emits, *(g for lay in l3_layers.values() for g in lay.emits)]:
        (out / "layers" / e.filename).write_text(e.text)
    image = {i: (lg.layers[i].name, k) for i, k in consts.items() if lg.layers[i].name not in in_l3}
    image_bytes = sum(k.size for _, k in image.values())
    wh, wc = weights_files(image)
    (out / "weights.h").write_text(wh)
    (out / "weights.c").write_text(wc)
    l3_path = out / "weights_l3.bin"
    if l3_used:
        l3_path.write_bytes(bytes(l3_image))
    elif l3_path.exists():
        l3_path.unlink()
    (out / "network.h").write_text(network_h(lg, in_t.nbytes, out_t.nbytes, l1_bytes, arena,
                                             image_bytes, len(l3_image), dma, cores_used, target.name,
                                             l3_act_base=act_base if l3_used else 0))
    (out / "network.c").write_text(network_c(lg, arena, emits, consts, l3_streams, len(l3_image),
                                             out_sizes, l3_acts, w_tiled))
    (out / "main_host.c").write_text(MAIN_HOST)
    (out / "Makefile").write_text(makefile(target.name, pulp, l3_used))
    name = model_name or lg.name
    (out / "README.md").write_text(readme(name, target.name, ns.tiler, pulp, l3_used,
                                          len(lg.layers)))
    manifest = {
        "model": name, "source": lg.source, "target": target.name, "tiler": ns.tiler,
        "input": {"name": in_t.name, "shape": list(in_t.shape), "bytes": in_t.nbytes, "dtype": in_t.dtype},
        "output": {"name": out_t.name, "shape": list(out_t.shape), "bytes": out_t.nbytes, "dtype": out_t.dtype},
        "layers": [{
            "index": i, "name": l.name, "op": l.op, "kind": l.nest.kind, "output": l.output,
            "shape": list(lg.tensors[l.output].shape), "bytes": out_sizes[i],
            "function": e.function, "file": f"layers/{e.filename}", "untiled": s.untiled,
            "tiles": {t.dim: t.tile for t in s.tiles}, "loop_order": list(s.loop_order),
            "dma_bytes": layer_dma[i].bytes, "dma_transfers": layer_dma[i].transfers,
            "l3_tiled": l.name in ns.l3_tiles,
        } for i, (l, s, e) in enumerate(zip(lg.layers, ns.schedules, emits))],
        "dma_bytes_predicted": dma,
        "dma_transfers_predicted": sum(d.transfers for d in layer_dma),
        "dma_chunks_predicted": sum(d.chunks for d in layer_dma),
        "l3_bytes": len(l3_image),
        "l3_bytes_predicted": sum(s.bytes for s in l3_streams) + ns.l3_bytes,
        "l3_transfers_predicted": len(l3_streams) + sum(t.l3_transfers
                                                        for t in ns.l3.tilings.values()),
        "l3_activation_bytes": ns.l3_plan.bytes,
        "l1_bytes": l1_bytes, "l2_arena_bytes": arena.size, "l2_arena_base": arena.base,
        "l2_arena_holes": arena.holes, "l2_image_bytes": image_bytes, "l2_peak_bytes": plan.peak,
        "cores": cores_used, "pulp": pulp,
    }
    (out / "tilewise.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return Project(out, manifest)


def load_project(path: str | Path) -> Project:
    """A project generated earlier (reads its tilewise.json)."""
    p = Path(path)
    try:
        manifest = json.loads((p / "tilewise.json").read_text())
    except FileNotFoundError:
        raise TilewiseError(f"{p}: not a tilewise project (no tilewise.json)") from None
    return Project(p, manifest)
