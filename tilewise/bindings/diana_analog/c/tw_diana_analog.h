/*
 * tw_diana_analog.h — jobs for DIANA's analog in-memory core: a task API (set-up, dispatch, wait,
 * shaped like tw_ne16.h) and the bit-exact functional model the host HAL runs a job with.
 *
 * A job is one conv of a dense HWC int8 tile with all its input channels, for out_k output
 * channels (one array column each), kernel k_h × k_w, stride 1 or 2, padding given per side:
 *   in    [in_h][in_w][in_c]  int8 (a padded tap reads pad_value)
 *   w     ternary weights as 2-bit codes (0 -> 00, +1 -> 01, -1 -> 11): per output channel its
 *         k_h·k_w·in_c weights in (fy, fx, c) order, four per byte, LSB first
 *         (bindings/diana_analog/arith.py `pack`)
 *   bias  [out_k] int32, added to the array's sum
 *   out   [out_h][out_w][out_k] int8
 * Arithmetic (bindings/diana_analog/arith.py, golden/requant.py "adc"; notes/accelerators.md):
 *   acc = sum of w·x + bias; a6 = clamp(floor(acc / divisor), adc_min, adc_max) (the 6-bit ADC);
 *   y = clamp(floor((m[k]·a6 + a[k]) / 2^s[k]) + zero_point, qmin, qmax).
 */
#ifndef TW_DIANA_ANALOG_H
#define TW_DIANA_ANALOG_H

#include <stdint.h>

#include "tw_job_geometry.h"

typedef struct {
    tw_job_geom_t geom;        /* kernel, stride, extents, padding (tw_job_geometry.h) */
    int8_t pad_value;
    const int8_t *in;
    const uint8_t *w;
    const int32_t *bias;
    int8_t *out;
    int32_t divisor, adc_min, adc_max;      /* the ADC stage */
    const int32_t *m, *a, *s;               /* the digital stage, per output channel */
    int32_t zero_point, qmin, qmax;
} tw_analog_task_t;

/* A task of a k_h × k_w kernel at stride 1 or 2. */
void tw_analog_task_init(tw_analog_task_t *t, int k_h, int k_w, int stride);
void tw_analog_task_set_dims(tw_analog_task_t *t, int in_h, int in_w, int in_c, int out_h,
                             int out_w, int out_k, int pad_t, int pad_l, int pad_b, int pad_r,
                             int8_t pad_value);
void tw_analog_task_set_addr(tw_analog_task_t *t, const int8_t *in, const uint8_t *w,
                             const int32_t *bias, int8_t *out);
/* the ADC (divisor > 0, its output range) and the digital stage (m, a, s per channel; the
 * output zero point and clamp) */
void tw_analog_task_set_adc(tw_analog_task_t *t, int32_t divisor, int32_t adc_min,
                            int32_t adc_max);
void tw_analog_task_set_requant(tw_analog_task_t *t, const int32_t *m, const int32_t *a,
                                const int32_t *s, int32_t zero_point, int32_t qmin, int32_t qmax);

/* Starts the job; returns its id for tw_analog_wait. The host HAL runs it at once through
 * tw_analog_run and counts it. */
int tw_analog_dispatch(const tw_analog_task_t *t);
void tw_analog_wait(int id);
/* jobs dispatched since the start */
long tw_analog_jobs(void);

/* The functional model: the job's outputs, bit-exact (header comment). */
void tw_analog_run(const tw_analog_task_t *t);

#endif /* TW_DIANA_ANALOG_H */
