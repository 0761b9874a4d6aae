/*
 * diana_shim.c — test-only: one job of DIANA's digital accelerator through its job API
 * (tw_diana_digital.h), from flat arguments ctypes can pass, for tests/test_diana.py.
 *   dims: kind, k_h, k_w, stride, in_h, in_w, in_c, out_h, out_w, out_k, pad_t, pad_l, pad_b,
 *         pad_r, pad_value
 *   rq:   requant, shift, qmin, qmax (int8 output when requant)
 * Returns the number of jobs dispatched so far.
 */
#include "tw_diana_digital.h"

long shim_diana(const int *dims, const int8_t *in, const uint8_t *w, const int32_t *bias,
                void *out, const int *rq)
{
    tw_diana_job_t j;
    tw_diana_job_init(&j, dims[0], dims[1], dims[2], dims[3]);
    tw_diana_job_set_dims(&j, dims[4], dims[5], dims[6], dims[7], dims[8], dims[9], dims[10],
                          dims[11], dims[12], dims[13], (int8_t)dims[14]);
    tw_diana_job_set_addr(&j, in, w, bias, out);
    if (rq[0])
        tw_diana_job_set_requant(&j, rq[1], rq[2], rq[3]);
    tw_diana_wait(tw_diana_dispatch(&j));
    return tw_diana_jobs();
}
