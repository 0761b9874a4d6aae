/*
 * tw_pulp_pool.h — int8 max / average pooling of one L1 tile and global average pooling, HWC,
 * channel SIMD on the RI5CY cluster.
 *
 * CALL CONTRACT — tw_pool.h's (same argument structs and semantics, bit-exact with golden/pool.py
 * and golden/onnx_ops.py), with:
 *   tw_pulp_maxpool_s8   4 channels per word: pv.max.b over the window's valid taps from
 *       0x80808080 (-128), then pv.max.b / pv.min.b with the clamp; leftover channels scalar.
 *   tw_pulp_avgpool_s8   TFLite's average (valid taps only, rounded half away from zero): the
 *       4 channel sums of a word by pv.sdotsp.b with the one-hot words 1, 1<<8, 1<<16, 1<<24, the
 *       division by the tap count n as a multiply-high by m = floor((2^32 - 1) / n) + 1, exact for
 *       every dividend N = |sum| + n/2 with N·n < 2^32 (the error N·(m·n - 2^32) / 2^32 stays below
 *       1/n); windows of more than 5780 taps, where that bound could fail, divide.
 *   tw_pulp_global_avgpool_s8 (TFLite MEAN, or a whole-map AVERAGE_POOL_2D with `divisor`) and
 *   tw_pulp_global_avgpool_rq_s8_onnx (onnxruntime's QLinearGlobalAveragePool, rq.mode onnx):
 *       per channel the sum over the tile's pixels of x, 4 channels per word through the one-hot
 *       pv.sdotsp.b in a hardware loop (one p.lw with a register post-increment of c bytes and
 *       four sdotp per pixel), minus pixels·in_zp; then as tw_pool.h.
 * Core split (tw_pulp_common.h): windowed pools — output pixels (rows, then pixels within a
 * row), and 4-channel groups of a pixel when there are fewer pixels than cores; global pools —
 * 4-channel blocks. Same args on every core; barrier after.
 */
#ifndef TW_PULP_POOL_H
#define TW_PULP_POOL_H

#include "tw_pool.h"

void tw_pulp_maxpool_s8(const tw_pool_args_t *a, int core_id, int n_cores);
void tw_pulp_avgpool_s8(const tw_pool_args_t *a, int core_id, int n_cores);
void tw_pulp_global_avgpool_s8(const tw_gap_args_t *a, int core_id, int n_cores);
void tw_pulp_global_avgpool_rq_s8_onnx(const tw_gap_rq_args_t *a, int core_id, int n_cores);

#endif /* TW_PULP_POOL_H */
