/*
 * diana_analog_shim.c — test-only: one analog job through the task API (tw_diana_analog.h), from
 * flat arguments ctypes can pass, for tests/test_diana_analog.py.
 *   dims: k_h, k_w, stride, in_h, in_w, in_c, out_h, out_w, out_k, pad_t, pad_l, pad_b, pad_r,
 *         pad_value, divisor, adc_min, adc_max, zero_point, qmin, qmax
 *   blk:  [bias | m | a | s], out_k int32 each
 * Returns the number of jobs dispatched so far.
 */
#include "tw_diana_analog.h"

long shim_analog(const int *d, const int8_t *in, const uint8_t *w, const int32_t *blk,
                 int8_t *out)
{
    tw_analog_task_t t;
    int k = d[8];
    tw_analog_task_init(&t, d[0], d[1], d[2]);
    tw_analog_task_set_dims(&t, d[3], d[4], d[5], d[6], d[7], k, d[9], d[10], d[11], d[12],
                            (int8_t)d[13]);
    tw_analog_task_set_addr(&t, in, w, blk, out);
    tw_analog_task_set_adc(&t, d[14], d[15], d[16]);
    tw_analog_task_set_requant(&t, blk + k, blk + 2 * k, blk + 3 * k, d[17], d[18], d[19]);
    tw_analog_wait(tw_analog_dispatch(&t));
    return tw_analog_jobs();
}
