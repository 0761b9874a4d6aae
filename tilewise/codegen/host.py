"""The host harness of a generated project: main_host.c, the Makefile and the project README.

main_host.c reads one file per network input, each of N inputs (raw, as tw_network_run takes
them, back to back), runs `tw_network_run` on each with the host HAL (tw_hal_host.c: pthreads as
cores, DMA that completes only at its wait), writes the N values of each output back to back into
one file per output and prints one line

    TW_STATS {"inferences": N, "dma_bytes": ..., "dma_bytes_min": ..., "dma_bytes_max": ..., ...}

with the DMA counters summed over the run and the per-inference extremes, so that a caller can
hold every inference against the schedule's prediction (TW_NETWORK_DMA_BYTES). Built with
-DTW_DUMP_LAYERS it also writes every layer's output, in order, to a dump file.

The files are templates (codegen/templates/main_host.c.j2, Makefile.j2, README.md.j2); this
module says what varies between projects: the target, its platform (the blocks its templates add:
platforms/templates/<platform>, e.g. the GAP SDK's `make pulp`, pulp-open's `make firmware gvsoc`),
whether the network has an L3 image, the kernel family folders.
"""

from __future__ import annotations

from ..platforms.base import Platform
from ..templating import render


def main_host(job_counters: tuple[tuple[str, str], ...] = ()) -> str:
    """main_host.c (the sizes come from network.h); `job_counters`: the (header, function) of
    every accelerator family of the project whose jobs the harness counts (Family.jobs)."""
    return render("main_host.c.j2", counters=job_counters)


def makefile(target: str, platform: Platform, l3: bool, kernel_dirs: tuple[str, ...],
             in_files: tuple[str, ...] = ("input.bin",),
             out_files: tuple[str, ...] = ("output.bin",)) -> str:
    """The project Makefile: host build, plus the platform's blocks (its usage lines, .PHONY
    targets and rules: the SDK build of its HAL, or its firmware build and run); `make run` reads
    `in_files` and writes `out_files` (project.py `run_files`)."""
    return render("Makefile.j2", platform.templates, target=target, l3=l3,
                  kernel_dirs=kernel_dirs, in_files=in_files, out_files=out_files,
                  make_phony=platform.make_phony, **platform.make_data())


def readme(model: str, target: str, tiler: str, platform: Platform, l3: bool, layers: int,
           kernel_dirs: tuple[str, ...], in_files: tuple[str, ...] = ("input.bin",),
           out_files: tuple[str, ...] = ("output.bin",), multi: bool = False) -> str:
    """The project README.md: what each file is, how to build and run it (the platform's
    paragraphs from its templates); `multi`: the network has several inputs or outputs
    (tw_network_run's in0, …, out0, … and TW_INPUT<k>_* macros)."""
    return render("README.md.j2", platform.templates, model=model, target=target, tiler=tiler,
                  l3=l3, layers=layers, kernel_dirs=kernel_dirs, in_files=in_files,
                  out_files=out_files, multi=multi)
