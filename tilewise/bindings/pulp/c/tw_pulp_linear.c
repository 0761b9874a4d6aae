/*
 * tw_pulp_linear.c — int8 dense layer on the RI5CY cluster: vector x matrix through the MatMul of
 * tw_pulp_matmul.h with the input row as the column (seed 004 §3.3.1: "there is no need to build
 * the im2col buffer"), output neurons split evenly over the cores (§3.3.2: "the only dimension
 * along which we can split the workload is the channel"). Contract in tw_pulp_conv.h.
 */
#include "tw_pulp_conv.h"

#include "tw_pulp_common.h"
#include "tw_pulp_matmul.h"

TW_PULP_INLINE void dense(const tw_pulp_fc_args_t *t, int core, int cores, const int mode)
{
    const tw_fc_args_t *a = &t->a;
    tw_pulp_sink_t s = tw_pulp_sink(a->bias, a->psum, a->out, a->out_c, a->acc_flags, &t->rq);
    int k0, k1, r;

    tw_pulp_share(a->out_c, core, cores, &k0, &k1);
    for (r = 0; r < a->n_rows && k0 < k1; r += 2) {
        const int8_t *x0 = a->in + (size_t)r * a->in_c;
        const int8_t *x1 = r + 1 < a->n_rows ? x0 + a->in_c : NULL;
        tw_pulp_mm_cols(x0, x1, r, r + 1, a->w, a->in_c, k0, k1, &s, mode);
    }
}

#define TW_PULP_DENSE_DEF(name, mode)                                                       \
    void tw_pulp_fully_connected_s8_##name(const tw_pulp_fc_args_t *a, int core_id,         \
                                           int n_cores)                                     \
    {                                                                                       \
        dense(a, core_id, n_cores, mode);                                                   \
    }

TW_PULP_VARIANTS(TW_PULP_DENSE_DEF)
