/*
 * tw_linear.h — int8 fully connected layer on one L1 tile.
 *
 * CALL CONTRACT (for the code generator)
 *   For input row r (batch) and tile-local output channel k:
 *       acc = (first C-tile ? bias[k] : psum[r][k]) + sum_c in[r][c] * w[k][c]
 *   then out[r][k] = requant(acc, k) on the last C-tile, else psum[r][k] = acc, acc first wrapped
 *   to acc_bits bits (tw_acc_wrap, tw_common.h; 32 = no wrap).
 *   Zero point folded: bias' = bias - zp_x * sum(w[k]) (over all C-tiles), weights without zero
 *   point. Golden: golden/conv.py dense_acc(x, w, bias', 0, 0) + apply_requant.
 *
 *   Buffers (dense, tile-local):
 *     in    [n_rows][in_c]     the tile's input-channel slice
 *     w     [out_c][in_c]      the tile's K x C slice
 *     bias  [out_c] or NULL
 *     out   [n_rows][out_c]
 *     psum  [n_rows][out_c]    int32; NULL allowed when acc_flags == TW_ACC_WHOLE
 *   C tiling: as tw_conv.h (TW_ACC_FIRST ... TW_ACC_LAST over the C-tiles of one output tile).
 *
 *   Core split: output channels, chunk = ceil(out_c / n_cores) (seed 004 §3.3.2: "the only
 *   dimension along which we can split the workload is the channel"); rows are taken two at a
 *   time through the 4x2 MatMul (4 channels x 2 rows). Same args on every core; barrier after.
 */
#ifndef TW_LINEAR_H
#define TW_LINEAR_H

#include <stdint.h>

#include "tw_common.h"
#include "tw_requant.h"

typedef struct {
    const int8_t *in;
    int n_rows;                /* batch rows (1 on MCUs) */
    int in_c;
    const int8_t *w;
    const int32_t *bias;
    int8_t *out;
    int out_c;
    int32_t *psum;
    int acc_flags;
    tw_requant_t rq;
    int acc_bits;              /* accumulator width, 32 = int32; narrower wraps (tw_acc_wrap) */
} tw_fc_args_t;

void tw_fully_connected_s8(const tw_fc_args_t *a, int core_id, int n_cores);

#endif /* TW_LINEAR_H */
