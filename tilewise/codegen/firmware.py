"""The firmware folder of a generated project, for targets whose platform ships one
(platforms/: pulp-open's and cortex-m's bare-metal firmware/, the GAP SDK application gap_sdk/).

`firmware_files(platform)` lists the shipped files of the platform's folder of codegen/c/firmware
for `render`; `inputs_files(...)` the embedded inputs (inputs.h / inputs.c: one array per network
input and a table of each sample's input pointers; generate writes one sample at the input
tensors' zero points, validate its own); `folder_makefile` the Makefile a platform's folder has
of its own (the GAP SDK application's: APP, APP_SRCS, APP_CFLAGS, the L3 image in the flash's
READFS_FILES, `include $(RULES_DIR)/pmsis_rules.mk`; its template firmware.mk.j2 in the
platform's template folder). How a firmware is built and run is the platform's (its Toolchain and
Runners).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..platforms.base import Platform
from ..templating import render

FIRMWARE_C = Path(__file__).resolve().parent / "c" / "firmware"


def firmware_files(platform: Platform) -> dict[str, Path]:
    """project path → shipped file, for the firmware of `platform`: every file of its folders of
    codegen/c/firmware (e.g. common/, the bare-metal main and output protocol, beside its own)."""
    return {f"{platform.folder}/{p.name}": p
            for p in sorted(p for d in platform.firmware_c for p in (FIRMWARE_C / d).iterdir()
                            if p.is_file())}


def folder_makefile(platform: Platform, target: str, l3: bool, kernel_dirs: tuple[str, ...],
                    prefix: str = "tw") -> dict[str, str]:
    """The Makefile of the platform's firmware folder, when its templates have one
    (firmware.mk.j2)."""
    if platform.templates is None or not (platform.templates / "firmware.mk.j2").is_file():
        return {}
    return {f"{platform.folder}/Makefile": render("firmware.mk.j2", platform.templates,
                                                  target=target, l3=l3, kernel_dirs=kernel_dirs,
                                                  prefix=prefix)}


def inputs_files(samples: Sequence[Sequence[bytes]], sizes: Sequence[int],
                 folder: str = "firmware", c_name: str = "tw") -> dict[str, str]:
    """`folder`/inputs.h and inputs.c: `samples` (each one bytes per network input, `sizes[k]`
    bytes for input k, as the network takes them) embedded as const data — one array per input
    (`tw_fw_inputs` for the first, `tw_fw_inputs_1`, … for the others) and the table of each
    sample's input pointers the firmware mains pass to TW_NETWORK_RUN_IO; their C names prefixed
    `c_name` (names.py: validate rewrites them in a project generated with --name)."""
    from .names import renamer

    rename = renamer(c_name, ("TW_NETWORK_INPUT_BYTES",)) or (lambda text: text)
    tensors = []
    for k, nbytes in enumerate(sizes):
        rows = []
        for xs in samples:
            x = xs[k]
            assert len(xs) == len(sizes) and len(x) == nbytes, (len(xs), len(x), nbytes)
            vals = [b - 256 if b > 127 else b for b in x]
            rows.append([", ".join(str(v) for v in vals[i:i + 24]) for i in range(0, nbytes, 24)])
        # every input 4-byte aligned: the layers read it in place
        tensors.append({"name": "tw_fw_inputs" + (f"_{k}" if k else ""), "rows": rows,
                        "nbytes": nbytes, "stride": (nbytes + 3) // 4 * 4})
    return {f"{folder}/inputs.h": rename(render("inputs.h.j2", count=len(samples), tensors=tensors)),
            f"{folder}/inputs.c": rename(render("inputs.c.j2", count=len(samples), tensors=tensors))}
