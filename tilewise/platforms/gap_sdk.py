"""The GAP SDK platform (gap8, gap9): a PMSIS application built by the SDK's own rules.

A gap8 / gap9 project gets `gap_sdk/` (codegen/c/firmware/gap_sdk): a GAP SDK application — its
Makefile (codegen/firmware.py `gap_sdk_makefile`: APP, APP_SRCS, APP_CFLAGS, the L3 image in the
flash's READFS_FILES, `include $(RULES_DIR)/pmsis_rules.mk`), main.c (fabric-controller main: L3
RAM open and load, cluster open, one cluster task per embedded input running tw_network_run) and
the inputs — with the PMSIS HAL (tw_hal/tw_hal_pulp.c, tw_hal_pulp_l3.c with an L3, and
tw_hal_pulp.h, the L3 loading API). tilewise does not build or run it (no toolchain here, no
runner); the project Makefile's `make pulp PMSIS_INC=...` and validate/build.compile_sdk compile
the objects against the PMSIS headers (the tests against tests/pmsis_stub).
"""

from __future__ import annotations

from pathlib import Path

from .base import Platform

GAP_SDK = Platform(
    name="pmsis", label="GAP SDK",
    description="a GAP SDK (PMSIS) application, built by the SDK's own rules",
    hal=("tw_hal_pulp.c",), hal_l3=("tw_hal_pulp_l3.c",),
    hal_headers=("tw_hal_pulp.h", "tw_dma_ring.h"),
    firmware_c=("gap_sdk",), folder="gap_sdk",
    templates=Path(__file__).resolve().parent / "templates" / "gap_sdk",
    make_phony=" pulp", sdk_include="PMSIS_INC")
