/*
 * tw_pulp_elementwise.c — int8 ADD / SUB / MUL, TFLite arithmetic in 32 bits (contract in
 * tw_pulp_elementwise.h; the operations as in TFLite's reference integer_ops add.h / mul.h).
 *
 * ADD / SUB scale each input d = q - zp (|d| <= 255) by MBQM(d << L, M, shift), L = left_shift
 * (+ the shift when positive). Its SRDHM is floor((d·M·2^L + 2^30) / 2^31) =
 * floor((d·M + 2^(t-1)) / 2^t), t = 31 - L, and with M = Mh·2^t + Ml (0 <= Ml < 2^t) that is
 * d·Mh + ((d·Ml + 2^(t-1)) >> t): two p.mac and a shift instead of mul + mulh, exact while both
 * products fit int32, i.e. for 9 <= L <= 22 (|d·Ml| < 2^(8+t) <= 2^30, |d·Mh| < 2^(8+L) <= 2^30).
 * TFLite's int8 add has L = 20; other shifts take the general MBQM (tw_pulp_requant.h).
 */
#include "tw_pulp_elementwise.h"

#include "tw_pulp_common.h"
#include "tw_pulp_requant.h"

/* An input's MBQM(d << L, M, shift) in the split form above: the words of M, then RDBPOT's. */
typedef struct {
    int32_t mh, ml, rnd, t;
    tw_pulp_rqch_t rq;             /* tw_pulp_rq_tflite(M, shift): its b (e) and c (mask) */
} input_t;

/* The split form of an input's scaling, or 0 when L is outside [9, 22]. */
static int split_input(int32_t m, int32_t shift, int32_t left_shift, input_t *in)
{
    int32_t l = left_shift + (shift > 0 ? shift : 0);
    if (l < 9 || l > 22)
        return 0;
    in->t = 31 - l;
    in->mh = tw_pulp_asr(m, in->t);
    in->ml = m & (int32_t)(((uint32_t)1 << in->t) - 1u);
    in->rnd = (int32_t)((uint32_t)1 << (in->t - 1));
    in->rq = tw_pulp_rq_tflite(m, shift);
    return 1;
}

TW_PULP_INLINE int32_t scale_input(const input_t *in, int32_t d)
{
    int32_t s = tw_pulp_mac(tw_pulp_asr(tw_pulp_mac(in->rnd, d, in->ml), in->t), d, in->mh);
    return tw_pulp_rdbpot(s, in->rq.b, in->rq.c);
}

/* out = clamp(MBQM(MBQM((a - a_zp) << L, a) +/- MBQM((b - b_zp) << L, b), out) + out_zp). */
TW_PULP_INLINE void add_or_sub(const tw_add_params_t *p, const int8_t *a, const int8_t *b,
                               int8_t *out, int n, int core, int cores, const int sub)
{
    tw_add_params_t q = *p;                        /* locals: no int8 store aliases them */
    tw_pulp_rqch_t ra = tw_pulp_rq_tflite(q.a_mult, q.a_shift);
    tw_pulp_rqch_t rb = tw_pulp_rq_tflite(q.b_mult, q.b_shift);
    tw_pulp_rqch_t ro = tw_pulp_rq_tflite(q.out_mult, q.out_shift);
    tw_pulp_clip_t clip = tw_pulp_clip(q.qmin, q.qmax, q.out_zp);
    input_t ia, ib;
    int i, end;
    tw_pulp_share(n, core, cores, &i, &end);
    if (split_input(q.a_mult, q.a_shift, q.left_shift, &ia) &&
        split_input(q.b_mult, q.b_shift, q.left_shift, &ib)) {
        for (; i < end; i++) {
            int32_t sa = scale_input(&ia, a[i] - q.a_zp), sb = scale_input(&ib, b[i] - q.b_zp);
            out[i] = tw_pulp_rq(&ro, &clip, sub ? sa - sb : sa + sb, TW_RQ_TFLITE);
        }
        return;
    }
    for (; i < end; i++) {
        int32_t xa = (int32_t)((uint32_t)(a[i] - q.a_zp) << q.left_shift);
        int32_t xb = (int32_t)((uint32_t)(b[i] - q.b_zp) << q.left_shift);
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
    tw_mul_params_t q = *p;
    tw_pulp_rqch_t ro = tw_pulp_rq_tflite(q.out_mult, q.out_shift);
    tw_pulp_clip_t clip = tw_pulp_clip(q.qmin, q.qmax, q.out_zp);
    int i, end;
    tw_pulp_share(n, core_id, n_cores, &i, &end);
    for (; i < end; i++)
        out[i] = tw_pulp_rq(&ro, &clip, (a[i] - q.a_zp) * (b[i] - q.b_zp), TW_RQ_TFLITE);
}
