/*
 * tw_elementwise.c — int8 ADD / SUB / MUL, TFLite reference arithmetic (contract in
 * tw_elementwise.h), elements split over cores.
 */
#include "tw_elementwise.h"
#include "tw_host.h"

#include <stddef.h>

#include <math.h>

#include "tw_requant.h"

/* sign = +1 for ADD, -1 for SUB */
static void add_or_sub(const tw_add_params_t *p, const int8_t *a, const int8_t *b, int8_t *out,
                       int n, int sign, int core_id, int n_cores)
{
    int begin, end, i;
    tw_core_range(n, core_id, n_cores, &begin, &end);
    for (i = begin; i < end; i++) out[i] = (int8_t)tw_add_value(p, a[i], b[i], sign);
}

void tw_add_s8(const tw_add_params_t *p, const int8_t *a, const int8_t *b, int8_t *out, int n,
               int core_id, int n_cores)
{
    add_or_sub(p, a, b, out, n, 1, core_id, n_cores);
}

void tw_sub_s8(const tw_add_params_t *p, const int8_t *a, const int8_t *b, int8_t *out, int n,
               int core_id, int n_cores)
{
    add_or_sub(p, a, b, out, n, -1, core_id, n_cores);
}

void tw_mul_s8(const tw_mul_params_t *p, const int8_t *a, const int8_t *b, int8_t *out, int n,
               int core_id, int n_cores)
{
    int begin, end, i;
    tw_core_range(n, core_id, n_cores, &begin, &end);
    for (i = begin; i < end; i++) out[i] = (int8_t)tw_mul_value(p, a[i], b[i]);
}

void tw_add_onnx_s8(const tw_add_onnx_params_t *p, const int8_t *a, const int8_t *b, int8_t *out,
                    int n, int core_id, int n_cores)
{
    int begin, end, i;
    tw_core_range(n, core_id, n_cores, &begin, &end);
    for (i = begin; i < end; i++) {
        float r = fmaf((float)a[i], p->ratio_a, fmaf((float)b[i], p->ratio_b, p->fixed));
        float q = nearbyintf(r);
        int32_t y;
        /* bound before converting (out-of-range float->int is undefined); far outside int8 */
        if (q > 1024.0f) q = 1024.0f;
        if (q < -1024.0f) q = -1024.0f;
        y = (int32_t)q;
        out[i] = (int8_t)tw_clamp32(y, p->qmin, p->qmax);
    }
}

void tw_add_onnx_u8(const tw_add_onnx_params_t *p, const int8_t *a, const int8_t *b, int8_t *out,
                    int n, int core_id, int n_cores)
{
    int begin, end, i;
    tw_core_range(n, core_id, n_cores, &begin, &end);
    for (i = begin; i < end; i++) {
        /* the stored bytes are u - 128: the uint8 operands are a + 128, b + 128 */
        float r = fmaf((float)((int32_t)a[i] + 128), p->ratio_a,
                       fmaf((float)((int32_t)b[i] + 128), p->ratio_b, p->fixed));
        float q = nearbyintf(r);
        int32_t y;
        if (q > 1024.0f) q = 1024.0f;
        if (q < -1024.0f) q = -1024.0f;
        y = (int32_t)q;
        out[i] = (int8_t)(tw_clamp32(y, p->qmin, p->qmax) - 128);
    }
}

void tw_add_onnx_exact_s8(const tw_add_onnx_exact_params_t *p, const int8_t *a, const int8_t *b,
                          int8_t *out, int n, int core_id, int n_cores)
{
    int begin, end, i;
    int64_t ma = p->ma;
    int32_t shift = p->shift, qmin = p->qmin, qmax = p->qmax, off = p->out_off;
    tw_core_range(n, core_id, n_cores, &begin, &end);
    for (i = begin; i < end; i++) {
        int64_t x = (int64_t)a[i] * ma + p->tb[(int32_t)b[i] + 128];
        int32_t y = tw_onnx_rq_round_p_hi((uint64_t)x, shift);
        out[i] = (int8_t)(tw_clamp32(y, qmin, qmax) - off);
    }
}

void tw_lut_s8(const int8_t *table, const int8_t *in, int8_t *out, int n, int core_id, int n_cores)
{
    int begin, end, i;
    tw_core_range(n, core_id, n_cores, &begin, &end);
    for (i = begin; i < end; i++) out[i] = table[(int32_t)in[i] + 128];
}

void tw_concat2_s8(const int8_t *a, const int8_t *lut_a, int inner_a, const int8_t *b,
                   const int8_t *lut_b, int inner_b, int8_t *out, int outer, int core_id, int n_cores)
{
    /* this core's outer rows, through the host core's N-input concatenation (tw_host.h) */
    int begin, end;
    const int8_t *in[2];
    const int8_t *lut[2];
    int32_t inner[2];
    tw_core_range(outer, core_id, n_cores, &begin, &end);
    if (begin >= end) return;
    in[0] = a + (size_t)begin * inner_a;
    in[1] = b + (size_t)begin * inner_b;
    lut[0] = lut_a;
    lut[1] = lut_b;
    inner[0] = inner_a;
    inner[1] = inner_b;
    tw_concat(in, lut, inner, 2, out + (size_t)begin * (size_t)(inner_a + inner_b), end - begin);
}

void tw_add_table_s8(const int32_t *tables, int32_t shift, int32_t qmin, int32_t qmax, const int8_t *a,
                     const int8_t *b, int8_t *out, int n, int core_id, int n_cores)
{
    int begin, end, i;
    tw_core_range(n, core_id, n_cores, &begin, &end);
    for (i = begin; i < end; i++) {
        int32_t v = tw_asr32(tables[(uint8_t)a[i]] + tables[256 + (uint8_t)b[i]], shift);
        out[i] = (int8_t)(v < qmin ? qmin : v > qmax ? qmax : v);
    }
}
