/*
 * tw_host.c — the host core's whole-tensor kernels (tw_host.h: call contracts).
 */
#include "tw_host.h"

#include <stddef.h>
#include <string.h>

#include "tw_common.h"
#include "tw_elementwise.h"
#include "tw_requant.h"
#include "tw_s16.h"

static int32_t load_elem(const void *p, int bytes, int32_t i)
{
    return bytes == 1 ? (int32_t)((const int8_t *)p)[i] : (int32_t)((const int16_t *)p)[i];
}

void tw_quantize(const tw_quantize_params_t *p, const void *in, int in_bytes, void *out,
                 int out_bytes, int32_t n)
{
    int32_t i;
    for (i = 0; i < n; i++) {
        int32_t y = tw_mbqm(load_elem(in, in_bytes, i) - p->in_zp, p->mult, p->shift);
        /* the sum with the zero point in 64 bits, as the golden model (no int32 wrap) */
        int64_t v = (int64_t)y + p->out_zp;
        int32_t q = (int32_t)(v < p->qmin ? p->qmin : v > p->qmax ? p->qmax : v);
        if (out_bytes == 1)
            ((int8_t *)out)[i] = (int8_t)q;
        else
            ((int16_t *)out)[i] = (int16_t)q;
    }
}

void tw_transpose(const void *in, void *out, int elem_bytes, int rank, const int32_t *out_dims,
                  const int32_t *in_stride)
{
    int32_t idx[TW_TRANSPOSE_MAX_RANK];
    int32_t last = out_dims[rank - 1], step = in_stride[rank - 1], src = 0, o = 0, i;
    int32_t rows = 1;
    int d;
    for (d = 0; d < rank; d++) idx[d] = 0;
    for (d = 0; d < rank - 1; d++) rows *= out_dims[d];
    while (rows-- > 0) {
        /* the innermost output dimension: a strided walk of the input */
        if (elem_bytes == 1) {
            const int8_t *x = (const int8_t *)in + src;
            int8_t *y = (int8_t *)out + o;
            for (i = 0; i < last; i++) y[i] = x[i * step];
        } else if (elem_bytes == 2) {
            const int16_t *x = (const int16_t *)in + src;
            int16_t *y = (int16_t *)out + o;
            for (i = 0; i < last; i++) y[i] = x[i * step];
        } else {
            const int32_t *x = (const int32_t *)in + src;
            int32_t *y = (int32_t *)out + o;
            for (i = 0; i < last; i++) y[i] = x[i * step];
        }
        o += last;
        /* the next row: an odometer over the outer output dimensions */
        for (d = rank - 2; d >= 0; d--) {
            src += in_stride[d];
            if (++idx[d] < out_dims[d]) break;
            src -= idx[d] * in_stride[d];
            idx[d] = 0;
        }
    }
}

void tw_concat(const int8_t *const *in, const int8_t *const *lut, const int32_t *inner, int n_in,
               int8_t *out, int32_t outer)
{
    int32_t o, i;
    int j;
    for (o = 0; o < outer; o++) {
        for (j = 0; j < n_in; j++) {
            const int8_t *x = in[j] + (size_t)o * (size_t)inner[j];
            if (lut != NULL && lut[j] != NULL) {
                const int8_t *t = lut[j];
                for (i = 0; i < inner[j]; i++) out[i] = t[(int32_t)x[i] + 128];
            } else {
                memcpy(out, x, (size_t)inner[j]);
            }
            out += inner[j];
        }
    }
}

static int32_t binary_value(int op, const void *params, int32_t x, int32_t y)
{
    if (op == TW_BINARY_MUL) return tw_mul_value((const tw_mul_params_t *)params, x, y);
    return tw_add_value((const tw_add_params_t *)params, x, y, op == TW_BINARY_SUB ? -1 : 1);
}

void tw_binary(int op, const void *params, const void *a, const int32_t *a_stride, const void *b,
               const int32_t *b_stride, void *out, int elem_bytes, int rank,
               const int32_t *out_dims)
{
    int32_t idx[TW_TRANSPOSE_MAX_RANK];
    int32_t last = out_dims[rank - 1], sa = a_stride[rank - 1], sb = b_stride[rank - 1];
    int32_t ia = 0, ib = 0, o = 0, rows = 1, i;
    int d;
    for (d = 0; d < rank; d++) idx[d] = 0;
    for (d = 0; d < rank - 1; d++) rows *= out_dims[d];
    while (rows-- > 0) {
        /* the innermost output dimension: both operands walked with their strides */
        for (i = 0; i < last; i++, o++) {
            int32_t v = binary_value(op, params, load_elem(a, elem_bytes, ia + i * sa),
                                     load_elem(b, elem_bytes, ib + i * sb));
            if (elem_bytes == 1)
                ((int8_t *)out)[o] = (int8_t)v;
            else
                ((int16_t *)out)[o] = (int16_t)v;
        }
        tw_broadcast_next_row(idx, rank, out_dims, a_stride, b_stride, &ia, &ib);
    }
}

void tw_pad(const void *in, void *out, int elem_bytes, int rank, const int32_t *in_dims,
            const int32_t *out_dims, const int32_t *before, int32_t value)
{
    int32_t idx[TW_TRANSPOSE_MAX_RANK];
    int32_t out_stride[TW_TRANSPOSE_MAX_RANK];
    int32_t total = 1, rows = 1, src = 0, dst = 0, last = in_dims[rank - 1], i;
    int d;
    for (d = rank - 1; d >= 0; d--) {
        out_stride[d] = total;
        total *= out_dims[d];
    }
    for (i = 0; i < total; i++) {
        if (elem_bytes == 1)
            ((int8_t *)out)[i] = (int8_t)value;
        else if (elem_bytes == 2)
            ((int16_t *)out)[i] = (int16_t)value;
        else
            ((int32_t *)out)[i] = value;
    }
    for (d = 0; d < rank; d++) {
        idx[d] = 0;
        dst += before[d] * out_stride[d];
    }
    for (d = 0; d < rank - 1; d++) rows *= in_dims[d];
    if (last == 0) rows = 0;
    while (rows-- > 0) {
        /* one input row (its innermost dim) into the output at its padded position */
        memcpy((int8_t *)out + (size_t)dst * (size_t)elem_bytes,
               (const int8_t *)in + (size_t)src * (size_t)elem_bytes, (size_t)last * (size_t)elem_bytes);
        src += last;
        /* the next row: an odometer over the outer input dimensions */
        for (d = rank - 2; d >= 0; d--) {
            dst += out_stride[d];
            if (++idx[d] < in_dims[d]) break;
            dst -= idx[d] * out_stride[d];
            idx[d] = 0;
        }
    }
}

void tw_transpose_conv(const tw_transpose_conv_params_t *p, const void *in, void *out,
                       int elem_bytes)
{
    int32_t b, oy, ox, k, fy, fx, c;
    int32_t o = 0;
    for (b = 0; b < p->n; b++) {
        for (oy = 0; oy < p->oh; oy++) {
            for (ox = 0; ox < p->ow; ox++) {
                for (k = 0; k < p->k; k++, o++) {
                    int64_t acc = 0, v;
                    for (fy = 0; fy < p->fh; fy++) {
                        int32_t ty = oy + p->pad_t - fy, iy;
                        if (ty < 0 || ty % p->sy != 0) continue;
                        iy = ty / p->sy;
                        if (iy >= p->ih) continue;
                        for (fx = 0; fx < p->fw; fx++) {
                            int32_t tx = ox + p->pad_l - fx, ix, base;
                            const int8_t *wk;
                            if (tx < 0 || tx % p->sx != 0) continue;
                            ix = tx / p->sx;
                            if (ix >= p->iw) continue;
                            base = ((b * p->ih + iy) * p->iw + ix) * p->c;
                            wk = p->w + ((k * p->fh + fy) * p->fw + fx) * p->c;
                            for (c = 0; c < p->c; c++)
                                acc += (int64_t)(load_elem(in, elem_bytes, base + c) - p->x_zp) * wk[c];
                        }
                    }
                    if (elem_bytes == 1) {
                        /* LiteRT's int32 accumulator and bias, the int32 MBQM */
                        int32_t acc32 = (int32_t)acc;
                        if (p->bias) acc32 += ((const int32_t *)p->bias)[k];
                        v = (int64_t)tw_mbqm(acc32, p->mult[k], p->shift[k]) + p->y_zp;
                    } else {
                        if (p->bias) acc += ((const int64_t *)p->bias)[k];
                        v = (int64_t)tw_mbqm64(acc, p->mult[k], p->shift[k]) + p->y_zp;
                    }
                    v = v < p->qmin ? p->qmin : v > p->qmax ? p->qmax : v;
                    if (elem_bytes == 1)
                        ((int8_t *)out)[o] = (int8_t)v;
                    else
                        ((int16_t *)out)[o] = (int16_t)v;
                }
            }
        }
    }
}
