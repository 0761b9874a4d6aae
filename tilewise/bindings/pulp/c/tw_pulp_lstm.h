/*
 * tw_pulp_lstm.h — TFLite's integer LSTM (tw_lstm.h: LiteRT's EvalInteger8x8_16, golden/lstm.py)
 * on the cluster's cores (bindings/pulp/lstm.py), bit for bit the portable kernel's arithmetic.
 *
 * The cores split the cells (tw_pulp_share over H): per time step each core computes, for each of
 * its cells k, the four gates' input and recurrent products as two 4x1 SIMD dot-product blocks
 * (tw_pulp_matmul.h tw_pulp_dot_4x1_rows: pv.sdotsp.b in a hardware loop on RI5CY, sxtb16 +
 * smlad on ARMv7E-M) — the weights laid out by the generator as [H][4][IP] and [H][4][HP]
 * (gate rows of a cell adjacent, rows zero-padded to IP = round4(I), HP = round4(H)) — rescales
 * them into Q3.12 as tw_lstm_gates does, and updates the cell with tw_lstm_cell (gemmlowp's int16
 * sigmoid / tanh, the clip, the new h). No core reads another's gates or cell, so a step needs
 * one barrier: h is double-buffered (step t reads h[t&1], writes h[(t+1)&1]) and so is the
 * step's input row (core 0 copies row t+1 while the cores compute step t).
 *
 * L1 (`l1`, the layer's scratch, word-aligned; bindings/pulp/lstm.py l1_layout is the same):
 *   b    int32 [H][4][2]   (b_x, b_h) of each cell's gates       32·H bytes
 *   c    int16 [H]                                               round4(2·H)
 *   h    int8  [2][HP]                                           2·HP
 *   x    int8  [2][IP]                                           2·IP
 *   w    int8  [H][4][IP] then [H][4][HP], when weights_l1       4·H·(IP + HP)
 * Each core copies its own cells' biases (and weights) in: no core reads another's rows. Without
 * weights_l1 the cores read the weights where they are (L2 / flash).
 */
#ifndef TW_PULP_LSTM_H
#define TW_PULP_LSTM_H

#include <stdint.h>

#include "tw_lstm.h"

typedef struct {
    const tw_lstm_t *p;        /* the constants (n_input, n_cell, multipliers, cell scale, ...) */
    const int8_t *w_x;         /* [H][4][IP] */
    const int8_t *w_h;         /* [H][4][HP] */
    const int32_t *b;          /* [H][4][2] */
    const int8_t *x;           /* L2: [B][T][I] or [T][B][I] */
    int8_t *y;                 /* L2: the same layout with H */
    int8_t *l1;
    int32_t batch, steps, time_major, weights_l1;
} tw_pulp_lstm_t;

/* Called outside a fork; forks `cores` cores itself. */
void tw_pulp_lstm(const tw_pulp_lstm_t *a, int cores);

#endif /* TW_PULP_LSTM_H */
