/*
 * tw_pulp_elementwise.c — int8 ADD / SUB / MUL, TFLite arithmetic in 32 bits (contract in
 * tw_pulp_elementwise.h; the operations as in TFLite's reference integer_ops add.h / mul.h).
 */
#include "tw_pulp_elementwise.h"

#include "tw_pulp_common.h"
#include "tw_pulp_requant.h"

/* out = clamp(MBQM(MBQM((a - a_zp) << L, a) +/- MBQM((b - b_zp) << L, b), out) + out_zp). */
TW_PULP_INLINE void add_or_sub(const tw_add_params_t *p, const int8_t *a, const int8_t *b,
                               int8_t *out, int n, int core, int cores, const int sub)
{
    tw_pulp_rqch_t ra = tw_pulp_rq_tflite(p->a_mult, p->a_shift);
    tw_pulp_rqch_t rb = tw_pulp_rq_tflite(p->b_mult, p->b_shift);
    tw_pulp_rqch_t ro = tw_pulp_rq_tflite(p->out_mult, p->out_shift);
    tw_pulp_clip_t clip = tw_pulp_clip(p->qmin, p->qmax, p->out_zp);
    int i, end;
    tw_pulp_share(n, core, cores, &i, &end);
    for (; i < end; i++) {
        int32_t xa = (int32_t)((uint32_t)(a[i] - p->a_zp) << p->left_shift);
        int32_t xb = (int32_t)((uint32_t)(b[i] - p->b_zp) << p->left_shift);
        int32_t sa = tw_pulp_rq_raw(&ra, xa, TW_RQ_TFLITE);
        int32_t sb = tw_pulp_rq_raw(&rb, xb, TW_RQ_TFLITE);
        out[i] = tw_pulp_rq(&ro, &clip, sub ? sa - sb : sa + sb, TW_RQ_TFLITE);
    }
}

void tw_pulp_add_s8(const tw_add_params_t *p, const int8_t *a, const int8_t *b, int8_t *out,
                    int n, int core_id, int n_cores)
{
    add_or_sub(p, a, b, out, n, core_id, n_cores, 0);
}

void tw_pulp_sub_s8(const tw_add_params_t *p, const int8_t *a, const int8_t *b, int8_t *out,
                    int n, int core_id, int n_cores)
{
    add_or_sub(p, a, b, out, n, core_id, n_cores, 1);
}

void tw_pulp_mul_s8(const tw_mul_params_t *p, const int8_t *a, const int8_t *b, int8_t *out,
                    int n, int core_id, int n_cores)
{
    tw_pulp_rqch_t ro = tw_pulp_rq_tflite(p->out_mult, p->out_shift);
    tw_pulp_clip_t clip = tw_pulp_clip(p->qmin, p->qmax, p->out_zp);
    int i, end;
    tw_pulp_share(n, core_id, n_cores, &i, &end);
    for (; i < end; i++)
        out[i] = tw_pulp_rq(&ro, &clip, (a[i] - p->a_zp) * (b[i] - p->b_zp), TW_RQ_TFLITE);
}
