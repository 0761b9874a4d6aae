/* tw_svdf.c — LiteRT's integer SVDF (tw_svdf.h). */
#include "tw_svdf.h"

#include "tw_requant.h"

void tw_svdf_s8(const int8_t *x, int16_t *state, int8_t *y, const int8_t *w_feature,
                const int16_t *w_time, const int32_t *bias, int32_t batch, int32_t inputs,
                int32_t filters, int32_t memory, int32_t rank, int32_t x_zp, int32_t m1, int32_t s1,
                int32_t m2, int32_t s2, int32_t y_zp)
{
    const int32_t units = filters / rank, row = filters * memory;
    int32_t b, f, c, m, u, r;
    for (b = 0; b < batch; b++) {
        int16_t *st = state + b * row;
        const int8_t *xb = x + b * inputs;
        const int8_t *wf = w_feature;
        for (c = 0; c + 1 < row; c++)          /* 1. one value left */
            st[c] = st[c + 1];
        for (f = 0; f < filters; f++) {        /* 2. the newest column */
            int32_t acc = 0;
            for (c = 0; c < inputs; c++)
                acc += (int32_t)*wf++ * ((int32_t)xb[c] - x_zp);
            acc = tw_mbqm(acc, m1, s1);
            st[f * memory + memory - 1] = (int16_t)(acc < -32768 ? -32768 : acc > 32767 ? 32767 : acc);
        }
        for (u = 0; u < units; u++) {          /* 3., 4. time weights, rank reduction, requant */
            uint32_t acc = bias ? (uint32_t)bias[u] : 0u;
            for (r = 0; r < rank; r++) {
                const int16_t *wt = w_time + (u * rank + r) * memory;
                const int16_t *sv = st + (u * rank + r) * memory;
                for (m = 0; m < memory; m++)
                    acc += (uint32_t)((int32_t)wt[m] * (int32_t)sv[m]);
            }
            {
                int32_t v = tw_mbqm((int32_t)acc, m2, s2) + y_zp;
                y[b * units + u] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
            }
        }
    }
}
