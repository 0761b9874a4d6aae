/*
 * tw_pulp_lstm16.h — TFLite Micro's 16x8 LSTM (tw_lstm16.h, golden/lstm16.py) on the cluster's
 * cores (bindings/pulp/lstm16.py), bit for bit the portable kernel's arithmetic; the structure of
 * the int8 kernel (tw_pulp_lstm.h).
 *
 * The cores split the cells (tw_pulp_share over H): per time step each core computes, for each of
 * its cells k, the four gates' input and recurrent FCs as dot products of int16 words — the
 * generator widens the int8 weights to int16 and lays them out as [H][4][IP] and [H][4][HP]
 * (a cell's four gate rows adjacent, rows zero-padded to IP = round2(I), HP = round2(H)), so one
 * word of x or h meets the same word of the four rows: pv.sdotsp.h (two int16 x int16 lanes) on
 * RI5CY, smlad on ARMv7E-M. The sums are int32: the binding takes rows of fewer than 512 terms
 * (tw_lstm16.h: then they are TFLM's int64 ones). Each gate is rescaled as tw_lstm16_gates does
 * and the cell updated with tw_lstm16_cell. One barrier per step: h and the step's input row are
 * double-buffered (core 0 copies row t+1 while the cores compute step t).
 *
 * L1 (`l1`, the layer's scratch, 8-byte aligned; bindings/pulp/lstm16.py l1_layout is the same):
 *   b    int64 [H][4]      the gates' biases                      32·H bytes
 *   c    int16 [H]                                                round8(2·H)
 *   h    int16 [2][HP]                                            4·HP
 *   x    int16 [2][IP]                                            4·IP
 *   w    int16 [H][4][IP] then [H][4][HP], when weights_l1        8·H·(IP + HP)
 * Each core copies its own cells' biases (and weights) in. Without weights_l1 the cores read the
 * weights where they are (L2 / flash).
 */
#ifndef TW_PULP_LSTM16_H
#define TW_PULP_LSTM16_H

#include <stdint.h>

#include "tw_lstm16.h"

typedef struct {
    const tw_lstm16_t *p;      /* the constants (n_input, n_cell, multipliers, cell scale, ...) */
    const int16_t *w_x;        /* [H][4][IP] */
    const int16_t *w_h;        /* [H][4][HP] */
    const int64_t *b;          /* [H][4] */
    const int16_t *x;          /* L2: [B][T][I] or [T][B][I] */
    int16_t *y;                /* L2: the same layout with H */
    int8_t *l1;
    int32_t batch, steps, time_major, weights_l1;
} tw_pulp_lstm16_t;

/* Called outside a fork; forks `cores` cores itself. */
void tw_pulp_lstm16(const tw_pulp_lstm16_t *a, int cores);

#endif /* TW_PULP_LSTM16_H */
