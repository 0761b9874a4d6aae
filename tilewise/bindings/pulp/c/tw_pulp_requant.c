/*
 * tw_pulp_requant.c — the requantization words of tw_pulp_requant.h from a portable tw_requant_t:
 * the derivation bindings/pulp/constants.py makes at compile time, in C (for callers that hold a
 * tw_requant_t, e.g. the tests' shim). Per-channel arrays are read at index k, or 0 for every
 * channel when rq->per_channel is 0.
 */
#include "tw_pulp_requant.h"

#include <string.h>

void tw_pulp_rq_words(const tw_requant_t *rq, int n, int mode, int32_t *words)
{
    int k;
    for (k = 0; k < n; k++) {
        int i = rq->per_channel ? k : 0;
        int32_t m = 0, a = 0, b = 0, c = 0;
        if (mode == TW_RQ_TFLITE) {
            tw_pulp_rqch_t t = tw_pulp_rq_tflite(rq->mult[i], rq->shift[i]);
            m = t.m;
            a = t.a;
            b = t.b;
            c = t.c;
        } else if (mode == TW_RQ_TFLITE_SINGLE) {
            c = 31 - rq->shift[i];
            m = rq->mult[i];
            a = c <= 32 ? (int32_t)((uint32_t)1 << (c - 1)) : 0;
            b = c > 32 ? (int32_t)((uint32_t)1 << (c - 33)) : 0;
        } else if (mode == TW_PULP_RQ_TFLITE_RIGHT) {
            m = rq->mult[i];
            b = -rq->shift[i];
            a = (int32_t)((uint32_t)1 << (b - 1));
            c = 0;
        } else if (mode == TW_RQ_SHIFT || mode == TW_PULP_RQ_SHIFT32) {
            m = rq->mult[i];
            a = rq->lambda ? rq->lambda[i] : 0;
            b = a < 0 ? -1 : 0;
            c = rq->shift[i];
            if (mode == TW_PULP_RQ_SHIFT32 && c > 31)
                c = 31;
        } else if (mode == TW_PULP_RQ_ONNX_FPU) {
            /* the float32 scale's bits (from mult·2^-shift where only the constants are given) */
            if (rq->mult)
                m = rq->mult[i] ? (int32_t)((uint32_t)(157 - rq->shift[i]) << 23 |
                                            (((uint32_t)rq->mult[i] >> 7) & 0x7FFFFFu)) : 0;
            else
                memcpy(&m, &rq->scale[i], sizeof m);
        } else {
            tw_onnx_rq_t t = {0, 8};
            uint32_t bits;
            if (rq->mult) {
                t.mult = rq->mult[i];
                t.shift = rq->shift[i];
            } else {
                memcpy(&bits, &rq->scale[i], sizeof bits);
                (void)tw_onnx_rq_init(&t, bits);
            }
            m = t.mult;
            if (mode == TW_PULP_RQ_ONNX24) {     /* r >= 33 (a zero scale: r = 33) */
                int32_t rr = (m == 0 ? 33 : t.shift) - 32;
                m = -m;                            /* the exact form (no accumulator bound here) */
                a = 31 - rr;
                b = (int32_t)((1u << (rr - 1)) - 1u);
                c = rr;
            } else if (t.shift >= 33) {
                a = (1 << 25) + 1;
                b = 1 << (t.shift - 33);
                c = t.shift - 32;
            } else {
                c = t.shift;
            }
        }
        words[4 * k] = m;
        words[4 * k + 1] = a;
        words[4 * k + 2] = b;
        words[4 * k + 3] = c;
    }
}
