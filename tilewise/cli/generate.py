"""`tilewise generate MODEL --target T -o DIR`: the pipeline, then the C project (codegen)."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from ..codegen.owned import check_out_dir
from .common import (
    add_force_option,
    add_name_option,
    add_report_option,
    c_name,
    input_dtypes,
    output_dir,
    project_report,
    removed_on_failure,
)
from .options import add_input_dtype_option, add_target_options, ram_budget, target_from_args
from .paths import check_report_destination


def add(sub) -> None:
    """The `generate` subcommand and its options."""
    g = sub.add_parser("generate", help="write the tiled C project of a model for a target")
    g.add_argument("model", help=".tflite or .onnx model")
    g.add_argument("-o", "--out", required=True, help="directory of the generated project")
    add_target_options(g, required=True)
    add_report_option(g, "the generated network (one is also written to <project>/report)")
    add_name_option(g)
    add_force_option(g)
    add_input_dtype_option(g)
    g.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    from ..codegen import generate_model

    out = output_dir(args.out)
    check_out_dir(out, f"-o {args.out}", args.force)
    check_report_destination(args.report)
    target = target_from_args(args)
    dtypes = input_dtypes(args, args.model)
    with removed_on_failure(out):
        project, ns = generate_model(args.model, target, args.tiler, out,
                                     objective=args.objective, c_name=c_name(args),
                                     input_dtypes=dtypes, ram_budget=ram_budget(args))
    project = replace(project, path=Path(args.out))   # reported as the user wrote it
    m = project.manifest
    print(f"tilewise: wrote {project.path} — {len(m['layers'])} layers for {m['target']} "
          f"(tiler {m['tiler']}): L1 arena {m['l1_bytes']:,} B, L2 arena {m['l2_arena_bytes']:,} B + "
          f"{m['l2_image_bytes']:,} B of constants (plan peak {m['l2_peak_bytes']:,} B), "
          + (f"{m['flash_bytes']:,} B of constants in flash, " if m["flash_bytes"] else "")
          + f"L3 image {m['l3_bytes']:,} B, "
          f"DMA {m['dma_bytes_predicted']:,} B per inference; build with `make -C {project.path}`")
    for note in ns.layers.meta.get("notes", ()):
        print(f"tilewise: note: {note}")
    project_report(args, "generate", ns, project.path)
    if m.get("hypothetical"):
        print("tilewise: note: hypothetical chip — settings beyond the physical "
              f"{m['target']} (--hypothetical)")
    return 0
