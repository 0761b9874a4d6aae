/*
 * tw_diana_digital.h — jobs for DIANA's digital accelerator: a small HAL-shaped API (job set-up,
 * dispatch, wait) and the bit-exact functional model the host HAL runs a job with.
 *
 * A job is one conv (kernel 1/3/5/7, stride 1 or 2, padding per side: 0 .. k_h/2 rows on top and
 * bottom, 0 .. k_w/2 columns left and right, arith.py's decision), depthwise conv or dense
 * layer on a dense int8 HWC tile in the activation memory:
 *   in    [in_h][in_w][in_c]   int8 (depthwise: in_c = out_k)
 *   w     the core's weight layout in the weight memory (bindings/diana_digital/arith.py `pack`):
 *         output channels padded to 16; conv (Cout/16, Cin, FY, FX, 16), depthwise each channel
 *         followed by 3 zero rows as (4·Cout/16, 1, FY, FX, 16), dense [Cout][Cin padded to 16];
 *         every 4 bytes reversed (layout position p stored at p ^ 3)
 *   bias  [out_k] int32
 *   out   [out_h][out_w][out_k] int32 accumulators, or int8 with the core's requantization
 * Arithmetic (arith.py states it in numpy and holds the two decisions the sources leave open:
 * the pad value and the int32 output):
 *   acc = bias[k] + sum over taps and input channels of w * x, 32-bit wrapping, a padded tap
 *   reading pad_value; requant: clip(acc >> shift, qmin, qmax) (arithmetic shift: floor).
 * An add job (TW_DIANA_ADD, HTVM's element_wise_add_pattern: add -> right shift -> clip -> cast)
 * takes two int8 tiles of the same extent [out_h][out_w][out_k], dense, and always requantizes:
 *   out = clip((in + in2) >> shift, qmin, qmax) (no weights, no bias).
 */
#ifndef TW_DIANA_DIGITAL_H
#define TW_DIANA_DIGITAL_H

#include <stdint.h>

#include "tw_job_geometry.h"

enum { TW_DIANA_CONV = 0, TW_DIANA_DEPTHWISE = 1, TW_DIANA_DENSE = 2, TW_DIANA_ADD = 3 };

typedef struct {
    int kind;                  /* TW_DIANA_* */
    tw_job_geom_t geom;        /* kernel, stride, extents, padding (tw_job_geometry.h) */
    int8_t pad_value;
    const int8_t *in;
    const int8_t *in2;         /* TW_DIANA_ADD: the second addend */
    const uint8_t *w;
    const int32_t *bias;
    void *out;                 /* int32_t[] without requant, else int8_t[] */
    int requant;               /* 0: int32 output */
    int shift, qmin, qmax;
} tw_diana_job_t;

/* A job of `kind` with a k_h x k_w kernel at stride 1 or 2, int32 output. */
void tw_diana_job_init(tw_diana_job_t *j, int kind, int k_h, int k_w, int stride);
void tw_diana_job_set_dims(tw_diana_job_t *j, int in_h, int in_w, int in_c, int out_h, int out_w,
                           int out_k, int pad_t, int pad_l, int pad_b, int pad_r,
                           int8_t pad_value);
void tw_diana_job_set_addr(tw_diana_job_t *j, const int8_t *in, const uint8_t *w,
                           const int32_t *bias, void *out);
/* TW_DIANA_ADD: the two addends and the int8 output (set its requantization too). */
void tw_diana_job_set_add(tw_diana_job_t *j, const int8_t *a, const int8_t *b, int8_t *out);
/* The core's requantization: clip(acc >> shift, qmin, qmax), int8 output (0 <= shift <= 31). */
void tw_diana_job_set_requant(tw_diana_job_t *j, int shift, int qmin, int qmax);

/* Starts the job; returns its id for tw_diana_wait. The host HAL runs it at once through
 * tw_diana_run and counts it. */
int tw_diana_dispatch(const tw_diana_job_t *j);
void tw_diana_wait(int id);
/* jobs dispatched since the start */
long tw_diana_jobs(void);

/* The functional model: the job's outputs, bit-exact (header comment). */
void tw_diana_run(const tw_diana_job_t *j);

#endif /* TW_DIANA_DIGITAL_H */
