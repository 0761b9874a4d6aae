"""`tilewise explore` benchmarks: the 120-point sweep's time, and the seeds' three memory studies
reproduced with the published figures beside ours.

    .venv/bin/python bench/explore_studies.py [--only timing,dask,dory,match,idsp] [--workers N]

Writes bench/explore_studies.md (tables), bench/explore_results.json (every figure) and PNGs under
bench/out/explore/. Sections:

- timing: `tilewise explore` on the 4 MLPerf Tiny models × 5 L1 × 3 L2 × 2 tilers (120 points,
  gap8) as a subprocess in a fresh output directory: wall time and the CPU time of the command and
  its workers (getrusage of the children; the machine is shared, so CPU time is the steadier
  figure), then the same command again (every point read from the cache).
- dask: the same 120 points through a real Dask scheduler + 2 worker processes on localhost, and
  through the local pool: points.json equal after sorting by point key.
- dory (seed 001 §V-C, Fig. 11): DORY's L1/L2 sweep of 1.0-MobileNetV1-128 on GAP8, L1 22–400 kB ×
  L2 {256, 384, 512, 4096} kB. There is no 1.0-MobileNetV1-128 model file; bench/geometries.py
  rebuilds it with the paper's exact geometry (186.4 M MACs, random int8 weights — latency and
  tiling depend on geometry only), and that is the network used. The MLPerf Tiny VWW model is a
  MobileNetV1 too, but 0.25-wide at 96×96 (7.5 M MACs): its layers fit L1 and L2 far more easily,
  so it cannot show the paper's corners; it is given as a second row at the two corners for
  reference. Published: 9.74 MAC/cycle at L1 80 kB + L2 384 kB vs 10.57 at 400 kB + 4 MB (−8%).
- match (seed 003 §V, Fig. 9): L1 scaling of ResNet-8 (MLPerf Tiny ic_resnet8) on GAP9. DORY the
  tool = the DORY tiler on the cluster alone (DORY maps every layer to the cluster with PULP-NN);
  MATCH = the model tiler over all modules (cluster, NE16, CPU). Published: at 8 kB DORY cannot
  deploy ResNet-8; at 12 kB it is 8.85× slower than MATCH; 2.68× at full L1.
- idsp (seed 002 Alg. 1/3, Fig. 5.12): the tile × schedule Pareto front of the LeNet-style conv2
  on the IDSP (schedule/idsp.py `pareto`, the seed's model; its front recomputed with
  explore/pareto.py `front`), published 5 points, fastest 28.673 GOps/s at 166.1 Ops/B, most
  memory-efficient 28.390 at 252.9; and explore's network-level front on the idsp target (local
  memory 16–512 kB, kws_dscnn and ic_resnet8): latency × memory.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tilewise.explore.cache import Cache  # noqa: E402
from tilewise.explore.grid import Point, build_grid  # noqa: E402
from tilewise.explore.pareto import front, mark_pareto  # noqa: E402
from tilewise.explore.point import _LOWERED  # noqa: E402
from tilewise.explore.runner import run_points  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
MODELS = REPO.parent / "shared" / "models" / "mlperf_tiny"
MLPERF = ("ad_autoencoder", "ic_resnet8", "kws_dscnn", "vww_mobilenet_v1_025")
OUT = HERE / "out" / "explore"


def _md(title: str, cols: list[str], rows: list[list], note: str = "") -> str:
    def cell(v):
        if v is None:
            return "–"
        if isinstance(v, float) and v.is_integer():
            return f"{int(v):,}"
        if isinstance(v, float):
            return f"{v:.5g}" if abs(v) < 1000 else f"{v:,.1f}"
        return str(v)
    out = [f"### {title}\n", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    out += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return "\n".join(out) + ("\n\n" + note if note else "") + "\n"


def _run(points: list[Point], workers: int) -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="tw_explore_bench_") as d:
        rows, _ = run_points(points, Cache(d), workers=workers, progress=False)
    return rows


def _graph_point(name: str, lg, **kw) -> Point:
    """A point on a graph built in memory (bench/geometries.py): registered in the per-process
    lowered-graph cache under a digest of its name (forked workers inherit it)."""
    sha = hashlib.sha256(f"bench.geometries:{name}".encode()).hexdigest()
    _LOWERED[sha] = lg
    return Point(model=f"/bench/geometries/{name}.graph", model_sha=sha, **kw)


# --- timing ----------------------------------------------------------------------------------------

def timing() -> tuple[str, dict]:
    models = [str(MODELS / f"{m}.tflite") for m in MLPERF]
    res = {}
    with tempfile.TemporaryDirectory(prefix="tw_explore_timing_") as d:
        cmd = [str(REPO / ".venv" / "bin" / "tilewise"), "explore", *models, "--target", "gap8",
               "--l1", "8,16,32,64,128", "--l2", "256,512,1024", "--tiler", "model,dory",
               "-o", d]
        for run in ("first", "cached"):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            p = subprocess.run(cmd, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if p.returncode != 0:
                raise RuntimeError(p.stderr)
            res[run] = {"wall_s": wall, "user_s": after.ru_utime - before.ru_utime,
                        "sys_s": after.ru_stime - before.ru_stime, "stdout": p.stdout.strip()}
        pts = json.loads((Path(d) / "points.json").read_text())["points"]
    try:
        load = Path("/proc/loadavg").read_text().split()[:3]
    except OSError:
        load = []
    res["points"] = len(pts)
    res["ok"] = sum(r["status"] == "ok" for r in pts)
    res["loadavg"] = load
    rows = [[run, res[run]["wall_s"], res[run]["user_s"], res[run]["sys_s"],
             res["points"] / res[run]["wall_s"]] for run in ("first", "cached")]
    md = _md("explore: 4 MLPerf Tiny models × 5 L1 × 3 L2 × 2 tilers on gap8 (120 points)",
             ["run", "wall s", "user CPU s", "sys CPU s", "points/s"], rows,
             f"{res['ok']} of {res['points']} points predicted; 2 worker processes (CPU count); "
             f"load average when done {' '.join(load)} (the machine is shared: CPU time is the "
             f"steadier figure; target ≤ 60 s wall).")
    return md, res


def dask_identity() -> tuple[str, dict]:
    """The same 120 points through a real Dask scheduler and 2 worker processes on localhost:
    points.json equal (after sorting by key) to a local-pool run's."""
    import signal

    models = [str(MODELS / f"{m}.tflite") for m in MLPERF]
    venv = REPO / ".venv" / "bin"
    grid = ["--target", "gap8", "--l1", "8,16,32,64,128", "--l2", "256,512,1024",
            "--tiler", "model,dory"]
    res: dict = {}
    with tempfile.TemporaryDirectory(prefix="tw_explore_dask_") as d:
        sched = Path(d) / "scheduler.json"
        procs = [subprocess.Popen([str(venv / "dask"), "scheduler", "--host", "127.0.0.1",
                                   "--port", "0", "--no-dashboard", "--scheduler-file",
                                   str(sched)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)]
        try:
            while not sched.exists():
                time.sleep(0.2)
            procs.append(subprocess.Popen([str(venv / "dask"), "worker", "--scheduler-file",
                                           str(sched), "--nworkers", "2", "--nthreads", "1",
                                           "--no-dashboard"], stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL, cwd=d))
            from distributed import Client
            address = json.loads(sched.read_text())["address"]
            with Client(address) as c:
                c.wait_for_workers(2, timeout=120)
            for how, extra in (("local", []), ("dask", ["--cluster", address])):
                t0 = time.perf_counter()
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                p = subprocess.run([str(venv / "tilewise"), "explore", *models, *grid, *extra,
                                    "-o", str(Path(d) / how)], capture_output=True, text=True)
                if p.returncode:
                    raise RuntimeError(p.stderr)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                res[how] = {"wall_s": time.perf_counter() - t0,
                            "user_s": after.ru_utime - before.ru_utime}
            a, b = (sorted(json.loads((Path(d) / h / "points.json").read_text())["points"],
                           key=lambda r: r["key"]) for h in ("local", "dask"))
            res["points"] = len(a)
            res["identical"] = a == b
        finally:
            for pr in reversed(procs):
                pr.send_signal(signal.SIGTERM)
            for pr in procs:
                try:
                    pr.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    pr.kill()
    md = _md("explore: the 120 points through a Dask scheduler on localhost (2 worker processes)",
             ["run", "wall s", "driver user CPU s (Dask: workers not counted)"],
             [["local pool", res["local"]["wall_s"], res["local"]["user_s"]],
              ["Dask", res["dask"]["wall_s"], res["dask"]["user_s"]]],
             f"points.json of both runs equal after sorting by point key: {res['identical']} "
             f"({res['points']} points).")
    return md, res


# --- DORY, seed 001 Fig. 11 ----------------------------------------------------------------------

DORY_L1 = (22, 28, 30, 40, 56, 70, 80, 128, 400)
DORY_L2 = (256, 384, 512, 4096)
MODEL_L1 = (22, 30, 80, 400)


def dory(workers: int) -> tuple[str, dict]:
    from bench.geometries import mobilenet_v1

    lg = mobilenet_v1(1.0, 128)
    base = dict(target="gap8", cores=None, clock_mhz=None, modules=None)
    pts = [_graph_point("1.0-MobileNetV1-128", lg, l1_kb=float(a), l2_kb=float(b), tiler=t, **base)
           for t, l1s in (("dory", DORY_L1), ("model", MODEL_L1)) for b in DORY_L2 for a in l1s]
    vww = build_grid([MODELS / "vww_mobilenet_v1_025.tflite"], "gap8", l1="80,400",
                     l2="384,4096", tiler="dory,model")
    rows = _run(pts + vww, workers)
    return dory_markdown(rows)


def dory_markdown(rows: list[dict]) -> tuple[str, dict]:
    """The DORY study's tables and plot from its rows (also rebuilt from explore_results.json)."""
    def at(model, tiler, a, b):
        for r in rows:
            if (r["model"], r["tiler"], r["l1_kb"], r["l2_kb"]) == (model, tiler, a, b):
                return r
        return None

    table = []
    for t in ("dory", "model"):
        for b in DORY_L2:
            cells = []
            for a in DORY_L1:
                r = at("1.0-MobileNetV1-128", t, float(a), float(b))
                cells.append("" if r is None else r["mac_per_cycle"] if r["status"] == "ok"
                             else "refused")
            table.append([t, b, *cells])
    res = {"rows": rows}
    corners = []
    for m in ("1.0-MobileNetV1-128", "vww_mobilenet_v1_025"):
        for t in ("dory", "model"):
            small, big = at(m, t, 80.0, 384.0), at(m, t, 400.0, 4096.0)
            if small and big and small["status"] == big["status"] == "ok":
                s, g = small["mac_per_cycle"], big["mac_per_cycle"]
                corners.append([m, t, s, g, round(100 * (s / g - 1), 1),
                                9.74 if m[0] == "1" else None, 10.57 if m[0] == "1" else None,
                                -7.9 if m[0] == "1" else None])
    res["corners"] = corners
    md = _md("seed 001 (DORY) Fig. 11: 1.0-MobileNetV1-128 on GAP8, MAC/cycle at L1 (columns, kB)"
             " × L2 (rows, kB); tiler model at L1 " + ", ".join(map(str, MODEL_L1)) + " only",
             ["tiler", "L2 kB", *[f"L1 {a}" for a in DORY_L1]], table,
             "Points beyond the GAP8 part (L1 > 36.7 kB free, L2 > 512 kB) are hypothetical chips "
             "(targets built with beyond=True), as in the paper's sweep; 'refused' = the point "
             "cannot run (its reason is in explore_results.json).")
    md += "\n" + _md("seed 001: the two corners (published beside ours)",
                     ["network", "tiler", "ours L1 80 + L2 384", "ours L1 400 + L2 4096",
                      "ours change %", "DORY 80+384", "DORY 400+4096", "DORY change %"],
                     corners)
    _plot_dory(rows)
    return md, res


def _plot_dory(rows: list[dict]) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for t, ls in (("dory", "-"), ("model", "--")):
        for b in DORY_L2:
            rs = sorted((r for r in rows if r["model"] == "1.0-MobileNetV1-128" and r["tiler"] == t
                         and r["l2_kb"] == b and r["status"] == "ok"), key=lambda r: r["l1_kb"])
            if rs:
                ax.plot([r["l1_kb"] for r in rs], [r["mac_per_cycle"] for r in rs], ls,
                        marker="o", label=f"{t}, L2 {b} kB")
    ax.scatter([80, 400], [9.74, 10.57], marker="*", s=150, color="black", zorder=5,
               label="DORY published (L2 384 / 4096 kB)")
    ax.set_xscale("log")
    ax.set_xlabel("L1 free (kB)")
    ax.set_ylabel("MAC/cycle")
    ax.set_title("1.0-MobileNetV1-128 on GAP8: L1 × L2 (seed 001 Fig. 11)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    OUT.mkdir(parents=True, exist_ok=True)
    fig.savefig(OUT / "dory_l1_l2.png", dpi=110)
    plt.close(fig)


# --- MATCH, seed 003 Fig. 9 ------------------------------------------------------------------------

MATCH_L1 = "8,12,16,24,32,64,90"


def match(workers: int) -> tuple[str, dict]:
    pts = build_grid([MODELS / "ic_resnet8.tflite"], "gap9", l1=MATCH_L1, tiler="dory,model",
                     modules="cluster,all")
    rows = _run(pts, workers)
    by = {(r["tiler"], r["modules"], r["l1_kb"]): r for r in rows}
    table = []
    res = {"rows": rows, "ratio": {}}
    for a in (float(x) for x in MATCH_L1.split(",")):
        d, m = by[("dory", "cluster", a)], by[("model", "all", a)]
        d2, m2 = by[("dory", "all", a)], by[("model", "cluster", a)]
        ratio = d["latency_ms"] / m["latency_ms"] if d["status"] == m["status"] == "ok" else None
        res["ratio"][a] = ratio
        pub = {8.0: "cannot deploy", 12.0: "8.85×", 90.0: "2.68× (full L1)"}.get(a, "")
        table.append([a, d["latency_ms"] if d["status"] == "ok" else "refused",
                      m["latency_ms"], ratio, pub, d2["latency_ms"], m2["latency_ms"],
                      m["layers_per_module"] and ", ".join(f"{k} {v}" for k, v in
                                                           m["layers_per_module"].items())])
    _plot_match(rows)
    refused = by[("dory", "cluster", 8.0)]
    md = _md("seed 003 (MATCH) Fig. 9: ResNet-8 on GAP9, predicted latency (ms) vs L1",
             ["L1 kB", "DORY (dory tiler, cluster)", "MATCH (model tiler, all modules)",
              "DORY / MATCH", "published", "dory tiler, all", "model tiler, cluster",
              "MATCH layers per module"], table,
             "At 8 kB the DORY configuration is refused: " + (refused["reason"] or "(it ran)"))
    return md, res


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    OUT.mkdir(parents=True, exist_ok=True)
    return plt


def _plot_match(rows: list[dict]) -> None:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for tiler, mods, label in (("dory", "cluster", "DORY (dory tiler, cluster)"),
                               ("model", "all", "MATCH-like (model tiler, all modules)"),
                               ("dory", "all", "dory tiler, all modules"),
                               ("model", "cluster", "model tiler, cluster")):
        rs = sorted((r for r in rows if r["tiler"] == tiler and r["modules"] == mods),
                    key=lambda r: r["l1_kb"])
        ok = [r for r in rs if r["status"] == "ok"]
        line, = ax.plot([r["l1_kb"] for r in ok], [r["latency_ms"] for r in ok], marker="o",
                        label=label)
        for r in rs:
            if r["status"] != "ok":
                ax.annotate("refused", (r["l1_kb"], max(x["latency_ms"] for x in ok)),
                            color=line.get_color(), ha="center")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("L1 free (kB)")
    ax.set_ylabel("predicted latency (ms)")
    ax.set_title("ResNet-8 on GAP9 vs L1 (seed 003 Fig. 9: DORY fails at 8 kB, 8.85× at 12 kB)",
                 fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(OUT / "match_l1.png", dpi=110)
    plt.close(fig)


def _plot_idsp(front_rows: list[dict]) -> None:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    ax.plot([s["ops_per_byte"] for s in front_rows], [s["gops"] for s in front_rows], "o-",
            label="ours (schedule/idsp.py, front via explore/pareto.py)")
    ax.scatter([166.1, 252.9], [28.673, 28.390], marker="*", s=160, color="black", zorder=5,
               label="published (fastest, most memory-efficient)")
    for s in front_rows:
        ax.annotate(s["schedule"], (s["ops_per_byte"], s["gops"]), fontsize=7,
                    textcoords="offset points", xytext=(4, 4))
    ax.set_xlabel("memory efficiency (Ops/B)")
    ax.set_ylabel("attainable performance (GOps/s)")
    ax.set_title("IDSP conv2 Pareto front (seed 002 Fig. 5.12)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(OUT / "idsp_pareto.png", dpi=110)
    plt.close(fig)


# --- IDSP, seed 002 Fig. 5.12 ----------------------------------------------------------------------

def idsp_study(workers: int) -> tuple[str, dict]:
    from tilewise.schedule import idsp
    from tilewise.targets.registry import get_target

    sysm = idsp.IdspSystem.from_target(get_target("idsp"))
    n, sols = idsp.pareto(idsp.LENET["conv2"], sysm, padded_work_limit=1.05)
    # the same front through explore's Pareto (both maximized: negate)
    again = [sols[i] for i in front([(-s.gops, -s.ops_per_byte) for s in sols])]
    published = [(28.673, 166.1), None, None, None, (28.390, 252.9)]
    table = [[i + 1, s.schedule, str(s.tile), s.gops, s.ops_per_byte,
              *(published[i] if i < len(published) and published[i] else ("", ""))]
             for i, s in enumerate(sorted(sols, key=lambda s: -s.gops))]
    _plot_idsp([s.__dict__ for s in sols])
    res = {"solutions_weighed": n, "front": [s.__dict__ for s in sols],
           "explore_front_equal": sorted(map(id, again)) == sorted(map(id, sols))}
    md = _md("seed 002 (IDSP) Fig. 5.12: conv2 tile × schedule Pareto front (64 kB of 128 kB "
             "eligible, 450 MHz, 32 MAC/cycle)",
             ["#", "schedule", "tile (TOx,TOy,TOc,TOn,TKc)", "GOps/s", "Ops/B",
              "published GOps/s", "published Ops/B"], table,
             f"{n:,} solutions weighed (padded-work heuristic 1.05, same front); published: "
             f"exactly 5 Pareto points. explore/pareto.py `front` over the same solutions gives "
             f"the same points: {res['explore_front_equal']}.")
    pts = build_grid([MODELS / "kws_dscnn.tflite", MODELS / "ic_resnet8.tflite"], "idsp",
                     l1="16,32,64,128,256,512", tiler="model,dory")
    rows = _run(pts, workers)
    mark_pareto(rows)
    res["network_rows"] = rows
    net = [[r["model"], r["tiler"], r["l1_kb"], r["latency_ms"] if r["status"] == "ok" else "refused",
            r["mac_per_cycle"], "yes" if r["pareto"] else "", "yes" if r["hypothetical"] else ""]
           for r in rows]
    md += "\n" + _md("explore on the idsp target: latency × local memory (Alg. 3's memory-size "
                     "loop at network level)",
                     ["model", "tiler", "L1 kB", "latency ms", "MAC/cycle", "Pareto",
                      "beyond the part"], net)
    return md, res


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", default="timing,dask,dory,match,idsp")
    p.add_argument("--workers", type=int, default=None)
    a = p.parse_args(argv)
    import os
    workers = a.workers or os.cpu_count() or 1
    results: dict = {}
    for name in [s.strip() for s in a.only.split(",") if s.strip()]:
        t0 = time.perf_counter()
        fn = {"timing": lambda: timing(), "dask": lambda: dask_identity(),
              "dory": lambda: dory(workers),
              "match": lambda: match(workers), "idsp": lambda: idsp_study(workers)}[name]
        md, res = fn()
        res["seconds"] = time.perf_counter() - t0
        res["markdown"] = md
        print(md, flush=True)
        results[name] = res
    out_md = HERE / "explore_studies.md"
    out_json = HERE / "explore_results.json"
    old = json.loads(out_json.read_text()) if out_json.exists() else {}
    old.update(results)
    out_json.write_text(json.dumps(old, indent=1, default=str) + "\n")
    parts = [old[k]["markdown"] for k in ("timing", "dask", "dory", "match", "idsp") if k in old]
    out_md.write_text("# tilewise explore: timing and the seeds' memory studies\n\n"
                      "Generated by `bench/explore_studies.py` (figures in explore_results.json, "
                      "plots in bench/out/explore/).\n\n" + "\n".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
