/*
 * ne16_shim.c — test-only: one NE16 job through the task API (tw_ne16.h), from flat arguments
 * ctypes can pass, for tests/test_ne16.py.
 *   dims: kind, w_bits, stride, in_h, in_w, in_c, out_h, out_w, out_k, pad_t, pad_l, pad_b,
 *         pad_r, pad_value
 *   nq:   norm_quant, shift, relu, out_signed (scale, bias read when norm_quant)
 * Returns the number of jobs dispatched so far.
 */
#include "tw_ne16.h"

long shim_ne16(const int *dims, const uint8_t *in, const uint8_t *w, void *out, const int *nq,
               const int32_t *scale, const int32_t *bias)
{
    tw_ne16_task_t t;
    tw_ne16_task_init(&t, dims[0], dims[1], dims[2]);
    tw_ne16_task_set_dims(&t, dims[3], dims[4], dims[5], dims[6], dims[7], dims[8], dims[9],
                          dims[10], dims[11], dims[12], (uint8_t)dims[13]);
    tw_ne16_task_set_addr_conv(&t, in, w, out);
    if (nq[0])
        tw_ne16_task_set_norm_quant(&t, scale, bias, nq[1], nq[2], nq[3]);
    tw_ne16_wait(tw_ne16_dispatch(&t));
    return tw_ne16_jobs();
}
