/*
 * tw_pulp_mm_act.h — MatMul of two int8 activations on the RI5CY cluster (and, built for Arm, on
 * a Cortex-M core): y[h] = a[h]·b[h] for every head h, each sum requantized as it is formed (a
 * MatMul fused with its RequantShift, passes/fuse_matmul.py) or stored as int32.
 * Deeploy's attention (Q·Kᵀ, softmax·V) and the layer template bindings/pulp/templates/
 * mm_act.c.j2, which moves the tiles (DMA, barriers) and calls these kernels on every core.
 *
 * The MatMul is the conv / dense kernels' (tw_pulp_matmul.h, seed 004 §3.3.3): output columns
 * play the output channels and a's rows the pixels, so b is needed column-major — bᵀ, n rows of
 * k values. tw_pulp_mm_act_transpose() builds bᵀ from a head's b ([k][n] as the graph has it),
 * and per column the correction of a uint8 a (stored biased as u − 128: Σ a·b = Σ (s + 128)·b =
 * Σ s·b + 128·Σ_k b, the column's "bias"). Then tw_pulp_mm_act_<v>() computes a tile of `rows`
 * rows of a (contiguous, k values each) against bᵀ: 4x2 blocks of sdotp4 (4 columns x 2 rows, 32
 * MACs in 14 cycles), the tile's row pairs split over the cores (and, with fewer pairs than
 * cores, the column blocks: tw_pulp_groups), each block's 8 sums requantized right away
 * (tw_pulp_rq, variant <v>: shift or shift32, constants.py) into the int8 output tile
 * [rows][n], or stored as int32 sums (tw_pulp_mm_act_i32). One shift32 requantization for the
 * whole tensor (`uniform`, Deeploy's RequantShift after a MatMul) keeps its words in registers
 * and stores each block's outputs inline (mm_uniform) on the cluster. Built for Arm (TW_PULP_ARM) with
 * k >= 4: each row pair unpacked once to int16 pairs and the 2x2 SMLAD MatMul of
 * tw_pulp_matmul_arm.h.
 *
 * CALL CONTRACT: every core of the team calls the same function with the same arguments (a
 * barrier after it before the outputs or bᵀ are read). bt holds n·k bytes, bias n int32 (4-byte
 * aligned), words 4·n int32 (the column's requantization words, constants.py words_of) or NULL
 * for int32 sums, col (Arm only) cores·4·round4(k) bytes, 4-byte aligned. b is not uint8.
 */
#ifndef TW_PULP_MM_ACT_H
#define TW_PULP_MM_ACT_H

#include <stddef.h>
#include <stdint.h>

#include "tw_pulp_requant.h"

typedef struct {
    int k, n;                  /* a tile is [rows][k] times bᵀ [n][k] */
    const int8_t *bt;          /* bᵀ: n rows of k values */
    const int32_t *bias;       /* n: the uint8 correction (0 for an int8 a) */
    const int32_t *words;      /* 4·n requantization words, NULL: int32 sums */
    int uniform;               /* 1: every column's words are the same (one requantization) */
    int32_t zero_point, qmin, qmax;   /* the output's, as stored */
    int32_t *col;              /* Arm: per core 4·round4(k) bytes of unpacked rows */
} tw_pulp_mm_act_t;

/* bᵀ and the column corrections of one head's b ([k][n] at src): bt[j·k + i] = src[i·n + j],
 * bias[j] = a_off·Σ_i src[i·n + j]; columns split over the cores. */
void tw_pulp_mm_act_transpose(const int8_t *src, int k, int n, int32_t a_off, int8_t *bt,
                              int32_t *bias, int core, int cores);

/* One tile: rows of a at `at` ([rows][k]) into y ([rows][n], int8 requantized with variant
 * shift / shift32, or int32 sums for _i32). */
void tw_pulp_mm_act_shift(const tw_pulp_mm_act_t *t, const int8_t *at, void *y, int rows,
                          int core, int cores);
void tw_pulp_mm_act_shift32(const tw_pulp_mm_act_t *t, const int8_t *at, void *y, int rows,
                            int core, int cores);
void tw_pulp_mm_act_i32(const tw_pulp_mm_act_t *t, const int8_t *at, void *y, int rows,
                        int core, int cores);

#endif /* TW_PULP_MM_ACT_H */
