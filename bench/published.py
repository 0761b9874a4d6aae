"""Published figures the benchmark compares against — the only numbers typed in by hand.

Every figure is copied from ../shared/notes/anchors.md (the project's checked reading of the seeds)
and carries its source; tests/test_bench.py checks each against that file so a typo cannot hide.

- MATCH / DORY on GAP9 silicon, MLPerf Tiny, 260 MHz (seed 003): DORY (GAP9) from Table III;
  MATCH with the cluster only ("cluster+CPU", no NE16) from the Table IV ablation.
- PULP-NN benchmark layer on GAP8 (seed 004 ch. 3, Table 3.2): total cycles per core count.
- DORY end to end on GAP8 at 100 MHz (seed 001 Table 4 = seed 004 Table 3.3): MACs and cycles.
- TFLite Micro + CMSIS-NN on Cortex-M7 (anchors.md, measured on this machine kind): executed
  instructions per inference and TFLM's arena.
- GAP9's module ablation (seed 003 Table IV: CPU only / cluster+CPU / NE16+CPU / all) and
  GreenWaves' own MLPerf Tiny v1.0 results on GAP9 (NE16 + cluster, 240 MHz and 370 MHz).
- DIANA silicon at 260 MHz (seed 003 Table III): MATCH, HTVM and plain TVM on the host.
- MLPerf Tiny on the STM32L4R5 (Cortex-M4, 120 MHz, the reference board NUCLEO-L4R5ZI): ST's
  X-CUBE-AI 10.2 (v1.3) and Plumerai (v1.1), latency in ms.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    value: float
    source: str


SEED3_T3 = "seed 003 Table III (GAP9 silicon, 260 MHz)"
SEED3_T4 = "seed 003 Table IV (GAP9 ablation, cluster+CPU)"
SEED4_T32 = "seed 004 ch. 3, Table 3.2 (GAP8)"
SEED1_T4 = "seed 001 Table 4 / seed 004 Table 3.3 (GAP8, 100 MHz)"

#: latency in ms on GAP9, by MLPerf Tiny model file stem
DORY_GAP9_MS = {
    "vww_mobilenet_v1_025": Figure(11.29, SEED3_T3),
    "ic_resnet8": Figure(5.76, SEED3_T3),
    "kws_dscnn": Figure(4.19, SEED3_T3),
    "ad_autoencoder": Figure(0.52, SEED3_T3),
}
MATCH_GAP9_CLUSTER_MS = {
    "vww_mobilenet_v1_025": Figure(11.2, SEED3_T4),
    "ic_resnet8": Figure(5.48, SEED3_T4),
    "kws_dscnn": Figure(4.25, SEED3_T4),
    "ad_autoencoder": Figure(0.54, SEED3_T4),
}

SEED3_T4_ALL = "seed 003 Table IV (GAP9 ablation, 260 MHz)"
GREENWAVES = "anchors.md, MLPerf Tiny v1.0: GAP9 @240 MHz, NE16 + cluster, GreenWaves GapFlow"
#: seed 003 Table IV on GAP9 silicon, ms: CPU only / cluster+CPU / NE16+CPU / all modules
MATCH_GAP9_ABLATION_MS = {
    "vww_mobilenet_v1_025": tuple(Figure(v, SEED3_T4_ALL) for v in (236.22, 11.2, 5.02, 4.94)),
    "ic_resnet8": tuple(Figure(v, SEED3_T4_ALL) for v in (342.72, 5.48, 2.90, 2.15)),
    "kws_dscnn": tuple(Figure(v, SEED3_T4_ALL) for v in (83.41, 4.25, 14.46, 1.57)),
    "ad_autoencoder": tuple(Figure(v, SEED3_T4_ALL) for v in (6.12, 0.54, 6.12, 0.54)),
}
#: GreenWaves' own MLPerf Tiny results on GAP9 (NE16 + cluster, 240 MHz), ms
GREENWAVES_GAP9_MS = {
    "vww_mobilenet_v1_025": Figure(1.733, GREENWAVES),
    "ic_resnet8": Figure(0.949, GREENWAVES),
    "kws_dscnn": Figure(0.732, GREENWAVES),
    "ad_autoencoder": Figure(0.271, GREENWAVES),
}
GREENWAVES_370 = "anchors.md, MLPerf Tiny v1.0: GAP9 @370 MHz, GreenWaves (NE16 weights 7/5/5/6 bits)"
#: the same submission's GAP9 results at 370 MHz (its fastest clock), ms
GREENWAVES_GAP9_370_MS = {
    "vww_mobilenet_v1_025": Figure(1.125, GREENWAVES_370),
    "ic_resnet8": Figure(0.616, GREENWAVES_370),
    "kws_dscnn": Figure(0.475, GREENWAVES_370),
    "ad_autoencoder": Figure(0.176, GREENWAVES_370),
}

#: the PULP-NN benchmark layer: 16x16x32 input, 64 filters 3x3x32, pad 1, stride 1 (seed 004 §3.4)
PULPNN_MACS = Figure(4_718_592, SEED4_T32)
PULPNN_CYCLES = {
    1: Figure(2_586_000, SEED4_T32),
    2: Figure(1_299_000, SEED4_T32),
    4: Figure(660_000, SEED4_T32),
    8: Figure(361_000, SEED4_T32),
}

#: DORY's end-to-end networks on GAP8 (8 cores, 100 MHz): MACs and cycles
DORY_GAP8 = {
    "1.0-MobileNetV1-128": (Figure(186.4e6, SEED1_T4), Figure(23.3e6, SEED1_T4)),
    "0.5-MobileNetV1-192": (Figure(110.0e6, SEED1_T4), Figure(16.0e6, SEED1_T4)),
    "0.25-MobileNetV1-128": (Figure(13.5e6, SEED1_T4), Figure(2.8e6, SEED1_T4)),
    "1.0-MobileNetV2-128": (Figure(100.1e6, SEED1_T4), Figure(19.0e6, SEED1_T4)),
}


ANCHORS_M7 = "anchors.md, Cortex-M7: TFLite Micro + CMSIS-NN (counted instructions)"
#: executed instructions per inference of TFLM + CMSIS-NN, and TFLM's arena in bytes
TFLM_CMSIS_M7_INSTR = {
    "ic_resnet8": Figure(29_960_145, ANCHORS_M7),
    "kws_dscnn": Figure(7_596_202, ANCHORS_M7),
    "vww_mobilenet_v1_025": Figure(23_884_021, ANCHORS_M7),
    "ad_autoencoder": Figure(582_935, ANCHORS_M7),
}
TFLM_ARENA_B = {
    "ic_resnet8": Figure(54_996, ANCHORS_M7),
    "kws_dscnn": Figure(22_820, ANCHORS_M7),
    "vww_mobilenet_v1_025": Figure(100_708, ANCHORS_M7),
    "ad_autoencoder": Figure(2_580, ANCHORS_M7),
}

ANCHORS_MEM = "anchors.md, Memory-minimal engines (published)"
#: TinyEngine's and TFLM + CMSIS-NN's peak SRAM on mcunet-vww0 (kB, STM32H743)
TINYENGINE_VWW0_KB = Figure(59, ANCHORS_MEM + ", TinyEngine")
TFLM_VWW0_KB = Figure(163, ANCHORS_MEM + ", TinyEngine's TFLM + CMSIS-NN")
#: MCUNetV2's MobileNetV2 first stage peak memory, per layer and patch-based (kB)
MCUNETV2_MBV2_KB = (Figure(1_372, ANCHORS_MEM + ", MCUNetV2"), Figure(172, ANCHORS_MEM + ", MCUNetV2"))

ANCHORS_MLPERF_M7 = ("anchors.md, MLPerf Tiny latest published rounds: STM32H7A3 (NUCLEO-H7A3ZI-Q) "
                     "Cortex-M7 at 280 MHz")
#: the clock of those runs (MHz): cycles = latency x clock
MLPERF_M7_MHZ = Figure(280, ANCHORS_MLPERF_M7)
#: the fastest published Cortex-M7 latency per model (ms at 280 MHz): ST X-CUBE-AI 9.0 (v1.2) on
#: IC / KWS / VWW, Bosch HALE (v1.2, weights in RAM) on AD
MLPERF_M7_MS = {
    "ic_resnet8": Figure(40.845, ANCHORS_MLPERF_M7 + ", X-CUBE-AI 9.0"),
    "kws_dscnn": Figure(11.318, ANCHORS_MLPERF_M7 + ", X-CUBE-AI 9.0"),
    "vww_mobilenet_v1_025": Figure(23.804, ANCHORS_MLPERF_M7 + ", X-CUBE-AI 9.0"),
    "ad_autoencoder": Figure(1.083, ANCHORS_MLPERF_M7 + ", Bosch HALE"),
}
#: who published each of those
MLPERF_M7_WHO = {"ic_resnet8": "X-CUBE-AI 9.0", "kws_dscnn": "X-CUBE-AI 9.0",
                 "vww_mobilenet_v1_025": "X-CUBE-AI 9.0", "ad_autoencoder": "Bosch HALE"}

ANCHORS_L4 = "anchors.md, MLPerf Tiny latest rounds: STM32L4R5 Cortex-M4 @120 MHz"
#: the STM32L4R5's clock in those submissions (MHz): ms x this = cycles
L4R5_MHZ = 120.0
#: MLPerf Tiny latency in ms on the STM32L4R5: X-CUBE-AI 10.2 (v1.3), Plumerai (v1.1)
XCUBE_L4R5_MS = {
    "ic_resnet8": Figure(165.7, ANCHORS_L4),
    "kws_dscnn": Figure(43.4, ANCHORS_L4),
    "vww_mobilenet_v1_025": Figure(89.4, ANCHORS_L4),
    "ad_autoencoder": Figure(4.79, ANCHORS_L4),
}
PLUMERAI_L4R5_MS = {
    "ic_resnet8": Figure(167.8, ANCHORS_L4),
    "kws_dscnn": Figure(47.8, ANCHORS_L4),
    "vww_mobilenet_v1_025": Figure(98.8, ANCHORS_L4),
    "ad_autoencoder": Figure(4.05, ANCHORS_L4),
}

SEED3_T3_DIANA = "seed 003 Table III (DIANA silicon, 260 MHz)"
#: latency in ms on DIANA, by MLPerf Tiny model file stem: MATCH, HTVM, TVM on the host (None:
#: out of memory)
MATCH_DIANA_MS = {
    "vww_mobilenet_v1_025": Figure(6.08, SEED3_T3_DIANA),
    "ic_resnet8": Figure(0.79, SEED3_T3_DIANA),
    "kws_dscnn": Figure(7.30, SEED3_T3_DIANA),
    "ad_autoencoder": Figure(0.40, SEED3_T3_DIANA),
}
HTVM_DIANA_MS = {
    "vww_mobilenet_v1_025": Figure(6.17, SEED3_T3_DIANA),
    "ic_resnet8": Figure(1.27, SEED3_T3_DIANA),
    "kws_dscnn": Figure(7.26, SEED3_T3_DIANA),
    "ad_autoencoder": Figure(0.36, SEED3_T3_DIANA),
}
TVM_DIANA_MS = {
    "vww_mobilenet_v1_025": None,
    "ic_resnet8": Figure(133.1, SEED3_T3_DIANA),
    "kws_dscnn": Figure(49.16, SEED3_T3_DIANA),
    "ad_autoencoder": Figure(2.58, SEED3_T3_DIANA),
}


def all_figures() -> list[tuple[str, Figure]]:
    """(label, figure) for every published number used, for the source check."""
    out: list[tuple[str, Figure]] = []
    for k, f in DORY_GAP9_MS.items():
        out.append((f"DORY GAP9 {k}", f))
    for k, f in MATCH_GAP9_CLUSTER_MS.items():
        out.append((f"MATCH GAP9 cluster {k}", f))
    out.append(("PULP-NN MACs", PULPNN_MACS))
    for c, f in PULPNN_CYCLES.items():
        out.append((f"PULP-NN {c} cores", f))
    for k, (m, c) in DORY_GAP8.items():
        out.append((f"{k} MACs", m))
        out.append((f"{k} cycles", c))
    for k, f in TFLM_CMSIS_M7_INSTR.items():
        out.append((f"TFLM+CMSIS-NN {k} instructions", f))
    out.append(("MLPerf Tiny STM32H7A3 clock", MLPERF_M7_MHZ))
    for k, f in MLPERF_M7_MS.items():
        out.append((f"MLPerf Tiny fastest Cortex-M7 {k} ms", f))
    for k, f in TFLM_ARENA_B.items():
        out.append((f"TFLM arena {k}", f))
    out += [("TinyEngine mcunet-vww0 kB", TINYENGINE_VWW0_KB), ("TFLM mcunet-vww0 kB", TFLM_VWW0_KB),
            ("MCUNetV2 MobileNetV2 per-layer kB", MCUNETV2_MBV2_KB[0]),
            ("MCUNetV2 MobileNetV2 patch-based kB", MCUNETV2_MBV2_KB[1])]
    for k, figs in MATCH_GAP9_ABLATION_MS.items():
        out += [(f"MATCH GAP9 ablation {k} {i}", f) for i, f in enumerate(figs)]
    for k, f in GREENWAVES_GAP9_MS.items():
        out.append((f"GreenWaves GAP9 {k}", f))
    for k, f in GREENWAVES_GAP9_370_MS.items():
        out.append((f"GreenWaves GAP9 370 MHz {k}", f))
    for label, figs in (("X-CUBE-AI", XCUBE_L4R5_MS), ("Plumerai", PLUMERAI_L4R5_MS)):
        out += [(f"{label} STM32L4R5 {k}", f) for k, f in figs.items()]
    for label, figs in (("MATCH", MATCH_DIANA_MS), ("HTVM", HTVM_DIANA_MS),
                        ("TVM", TVM_DIANA_MS)):
        out += [(f"{label} DIANA {k}", f) for k, f in figs.items() if f is not None]
    return out
