/*
 * tw_linear.c — int8 fully connected layer: the MatMul of tw_matmul.c without im2col (seed 004
 * §3.3.1: "there is no need to build the im2col buffer"), output channels split over cores.
 */
#include "tw_linear.h"

#include <stddef.h>

#include "tw_matmul.h"

void tw_fully_connected_s8(const tw_fc_args_t *a, int core_id, int n_cores)
{
    tw_mm_sink_t sink;
    int k_begin, k_end, r;

    sink.bias = a->bias;
    sink.psum = a->psum;
    sink.out = a->out;
    sink.row = a->out_c;
    sink.flags = a->acc_flags;
    sink.rq = &a->rq;
    sink.acc_bits = a->acc_bits;

    tw_core_range(a->out_c, core_id, n_cores, &k_begin, &k_end);
    if (k_begin >= k_end)
        return;
    for (r = 0; r + 2 <= a->n_rows; r += 2)
        tw_matmul_s8(a->in + (size_t)r * a->in_c, a->in + (size_t)(r + 1) * a->in_c, r, r + 1,
                     a->w, a->in_c, k_begin, k_end, &sink);
    if (r < a->n_rows)
        tw_matmul_s8(a->in + (size_t)r * a->in_c, NULL, r, 0, a->w, a->in_c, k_begin, k_end, &sink);
}
