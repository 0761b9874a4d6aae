/*
 * tw_ne16.h — jobs for GAP9's NE16 accelerator, an API shaped like pulp-nnx's (task set-up,
 * dispatch, wait: ne16_task_set_dims / _set_addr_conv / _set_addr_norm_quant, ne16_nnx_dispatch,
 * ne16_nnx_dispatch_wait), and the bit-exact functional model the host HAL runs a job with.
 *
 * A job is one 3x3 conv (padding given per side), 3x3 depthwise, 1x1 conv or linear layer (a 1x1
 * conv of a 1x1 map), stride 1 or 2, on a dense HWC tile:
 *   in   [in_h][in_w][in_c]   uint8 (tilewise's int8 activations as x + 128: x ^ 0x80)
 *   w    NE16's bit-plane layout of w_bits-bit weights stored as w - w_offset, w_offset =
 *        -2^(w_bits - 1): conv [out_k][ceil(in_c/16)][w_bits][k_h·k_w][2 bytes: bit j of the
 *        16-bit little-endian word = bit i of input channel 16·block + j], depthwise the same with
 *        one row, the out_k (= in_c) channels as its input channels (bindings/ne16/arith.py `pack`)
 *   out  [out_h][out_w][out_k] int32 accumulators, or int8 / uint8 after norm-quant
 * Arithmetic (bindings/ne16/arith.py states it in numpy; notes/accelerators.md):
 *   acc = sum over taps and input channels of (stored + w_offset) · u, wrapping at 32 bits, a
 *   padded tap reading pad_value; norm-quant: t = wrap32(acc · scale[k]) + bias[k] saturated to
 *   int32, ReLU if set, t >> shift (floor), saturated to the output type.
 */
#ifndef TW_NE16_H
#define TW_NE16_H

#include <stdint.h>

#include "tw_job_geometry.h"

enum { TW_NE16_CONV3X3 = 0, TW_NE16_DEPTHWISE3X3 = 1, TW_NE16_CONV1X1 = 2 };

typedef struct {
    int kind;                  /* TW_NE16_* */
    int w_bits;                /* 2..8 */
    int32_t w_offset;          /* -2^(w_bits - 1) */
    tw_job_geom_t geom;        /* kernel, stride, extents, padding (tw_job_geometry.h) */
    uint8_t pad_value;
    const uint8_t *in;
    const uint8_t *w;
    void *out;                 /* int32_t[] without norm-quant, else int8_t / uint8_t[] */
    int norm_quant;            /* 0: int32 output */
    const int32_t *scale, *bias;
    int shift, relu, out_signed;
} tw_ne16_task_t;

/* A task of `kind` with w_bits-bit weights at stride 1 or 2, no norm-quant. */
void tw_ne16_task_init(tw_ne16_task_t *t, int kind, int w_bits, int stride);
void tw_ne16_task_set_dims(tw_ne16_task_t *t, int in_h, int in_w, int in_c, int out_h, int out_w,
                           int out_k, int pad_t, int pad_l, int pad_b, int pad_r,
                           uint8_t pad_value);
void tw_ne16_task_set_addr_conv(tw_ne16_task_t *t, const uint8_t *in, const uint8_t *w,
                                void *out);
/* norm-quant with per-channel scale and bias (bias may be NULL), one right shift, int8 output
 * (out_signed) or uint8 */
void tw_ne16_task_set_norm_quant(tw_ne16_task_t *t, const int32_t *scale, const int32_t *bias,
                                 int shift, int relu, int out_signed);
/* The job of output rows [r0, r0 + h) of task `t` into `out` (dense [h][out_w][out_k]): its
 * input rows (in advanced to the first one the rows read, in_h cut to the last) and the padding
 * they synthesize. A tile's int32 output is computed in such row jobs, NE16 running one while
 * the cores requantize the previous (bindings/ne16/pipeline.py). */
void tw_ne16_task_rows(const tw_ne16_task_t *t, int r0, int h, void *out, tw_ne16_task_t *sub);

/* A tile's row jobs (bindings/ne16/pipeline.py): job j is tw_ne16_task_rows(task, j·rows,
 * rows or the rest, out). The engine builds the register image of the first, a middle and the
 * last job once per tile (tw_hal_ne16_pulp_open.c) and per job patches only its pointers, so a
 * row job costs core 0 its 24 register stores; the host HAL derives each job's task. */
typedef struct {
    tw_ne16_task_t task;       /* the tile's */
    int rows, jobs;            /* output rows per job (the last: the rest), jobs */
    int built;                 /* images built: bit 0 first, 1 middle, 2 last */
    uint32_t in_step;          /* INFEAT_PTR from one middle job to the next (bytes) */
    uint32_t img[3][24];       /* the engine's register images: first, middle, last job */
} tw_ne16_rows_t;

/* The row jobs of `rows` output rows of task `t` (t->out unused). */
void tw_ne16_rows_init(tw_ne16_rows_t *p, const tw_ne16_task_t *t, int rows);
/* Builds the engine's register image of row job 0 now (core 0, while the other cores convert
 * the input), so that dispatching it is its commit; the others are built while NE16 runs it
 * (tw_ne16_dispatch_rows). The host HAL has none (no-op). */
void tw_ne16_rows_prepare(tw_ne16_rows_t *p);
/* Dispatches row job j into `out` (as tw_ne16_dispatch: returns its id for tw_ne16_wait). */
int tw_ne16_dispatch_rows(tw_ne16_rows_t *p, int j, void *out);

/* Starts the job (the task is copied: `t` may be reused at once); returns its id for
 * tw_ne16_wait. Until that wait returns the job is in flight: its input must not be written nor
 * its output read. At most two jobs are in flight (NE16's job slots); jobs complete in order.
 * The host HAL poisons the output at dispatch and runs the job through tw_ne16_run at its wait
 * (tw_ne16.c), and counts it. */
int tw_ne16_dispatch(const tw_ne16_task_t *t);
/* Returns when job `id` (and every job dispatched before it) is complete. */
void tw_ne16_wait(int id);
/* jobs dispatched since the start */
long tw_ne16_jobs(void);

/* The functional model: the job's outputs, bit-exact (header comment). */
void tw_ne16_run(const tw_ne16_task_t *t);

#endif /* TW_NE16_H */
