"""`tilewise demo` (`make demo`): the main job end to end on the bundled example model.

On tilewise/examples/example_cnn.onnx (an int8 QOperator CNN the project builds itself:
conv, depthwise, pointwise, residual add, max pool, global average pool, dense) for gap8:
1. analyze: the per-layer schedule table (report/tables.py);
2. generate: the C project (codegen) into OUT/example_cnn_gap8;
3. build it with the system C compiler and run it on the host (validate/build.py, run.py);
4. validate: bit for bit against the golden model and onnxruntime on 20 random inputs plus the
   extremes, DMA bytes measured against the schedule's prediction — once at gap8's default L1 and
   once at 8 kB of L1, which forces tiles with borders;
5. pulp-open at its default L1: the predicted cycles and MAC/cycle, and, where the GVSoC runner
   and the RISC-V toolchain are installed (../shared/tools/gvsoc, `make demo`'s packages), the
   firmware run on GVSoC's 8-core cluster — bit-exact, cycles per inference measured next to the
   prediction (issue 27: the example's ONNX requantization at TFLite speed); without them one
   sentence says what is missing and the demo goes on;
then prints the reports. Exit code 0 when everything is bit-exact, 1 otherwise. Without an
output directory the projects go to a temporary tilewise_demo_* directory, removed at the end
(kept, and said, on a mismatch) and when the demo stops early (an error, Ctrl-C).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from .examples import EXAMPLE_ONNX
from .tempdirs import remove_tree, temp_dir


def run_demo(out_dir: Path | None = None, n_inputs: int = 20, target: str = "gap8") -> int:
    from .pipeline import load, lower, schedule_network
    from .report.analysis import analyze_layers
    from .report.tables import make_console, print_analysis
    from .targets.registry import get_target
    from .validate import validate_model
    from .validate.text import format_report

    temporary = not out_dir   # removed at the end (kept on a mismatch), and on error or Ctrl-C
    console = make_console()
    ok = True
    with contextlib.nullcontext(Path(out_dir)) if out_dir else temp_dir("tilewise_demo_") as out:
        graph = load(EXAMPLE_ONNX)
        for l1_kb in (None, 8.0):
            tgt = get_target(target, l1_kb=l1_kb)
            ns = schedule_network(lower(graph), tgt, "model")
            label = f"{target}" if l1_kb is None else f"{target}_l1_{l1_kb:g}k"
            console.rule(f"[bold]tilewise demo — {EXAMPLE_ONNX.name} on {label}")
            print_analysis(analyze_layers(ns.layers, ns), console)
            project_dir = out / f"example_cnn_{label}"
            report = validate_model(EXAMPLE_ONNX, ns, graph, n_inputs, 0, project_dir)
            console.print(f"generated, built and ran {project_dir} (see its README.md and layers/)"
                          + (" — a temporary directory: `tilewise demo -o DIR` keeps the projects"
                             if temporary else ""), soft_wrap=True)   # a path is not folded
            print(format_report(report), flush=True)
            ok = ok and report.bit_exact
        ok = pulp_open_on_gvsoc(graph, out, n_inputs, console) and ok
    if temporary and ok:
        remove_tree(out, settle=0)
    elif temporary:
        console.print(f"the projects are kept in {out} to look at the mismatch", soft_wrap=True)
    console.rule("[bold green]demo: bit-exact" if ok else "[bold red]demo: MISMATCH")
    return 0 if ok else 1


def pulp_open_on_gvsoc(graph, out: Path, n_inputs: int, console) -> bool:
    """Step 5 (module docstring): the example on pulp-open, predicted and, where GVSoC runs,
    measured; False only on a mismatch."""
    from .errors import TilewiseError
    from .pipeline import lower, schedule_network
    from .platforms import gvsoc
    from .platforms.pulp_open import toolchain
    from .targets.registry import get_target
    from .validate import validate_model
    from .validate.text import format_report

    ns = schedule_network(lower(graph), get_target("pulp-open"), "model")
    console.rule(f"[bold]tilewise demo — {EXAMPLE_ONNX.name} on pulp-open (GVSoC)")
    predicted = f"predicted {ns.cycles:,.0f} cycles = {ns.macs / ns.cycles:.2f} MAC/cycle"
    try:
        gvsoc.runner()
        toolchain()
        report = validate_model(EXAMPLE_ONNX, ns, graph, n_inputs, 0, out / "example_cnn_pulp_open",
                                on="gvsoc")
    except TilewiseError as e:
        console.print(f"pulp-open: {ns.macs:,} MACs, {predicted}; not run on GVSoC: {e}", soft_wrap=True)
        return True
    print(format_report(report), flush=True)
    if report.measured_cycles:
        console.print(f"pulp-open: {ns.macs:,} MACs in {report.measured_cycles:,} cycles measured on "
                      f"GVSoC = {ns.macs / report.measured_cycles:.2f} MAC/cycle ({predicted})",
                      soft_wrap=True)
    return report.bit_exact
