/*
 * tw_host.h — the data-movement and requantization kernels only a host core runs: one call per
 * layer on the whole tensors where they are (L2), no tiles, no core split (bindings/portable
 * untiled.py; the modules named "cpu" list their bindings).
 *
 * CALL CONTRACT (for the code generator)
 *   Elements are 1 byte (int8, uint8 stored biased as u - 128) or 2 bytes (int16), `elem_bytes`;
 *   TRANSPOSE, PAD and CONCATENATION also move 4-byte (int32) elements.
 *
 *   QUANTIZE int -> int (tw_quantize) — TFLite's reference_ops::Requantize (golden/quant_ops.py
 *   `quantize` with TfliteRequantizeParams), MBQM = MultiplyByQuantizedMultiplier (tw_requant.h):
 *       out[i] = clamp(MBQM(in[i] - in_zp, mult, shift) + out_zp, qmin, qmax)
 *   for i < n, in of `in_bytes` and out of `out_bytes` per element. For a uint8 tensor stored as
 *   u - 128 the caller passes in_zp - 128 (input) and out_zp - 128 with [qmin, qmax] = [-128, 127]
 *   (output): the same values, as stored. `in` and `out` must not overlap unless equal with
 *   in_bytes >= out_bytes.
 *
 *   TRANSPOSE (tw_transpose) — out = numpy.transpose(in, perm) (golden/shape_ops.py `transpose`),
 *   any rank <= TW_TRANSPOSE_MAX_RANK: the output, of dims out_dims[0..rank), is written in order;
 *   its element (i_0, ..., i_{rank-1}) is the input element at Σ i_d · in_stride[d], where
 *   in_stride[d] is the input's stride (in elements) of its dim perm[d]. `in` and `out` must not
 *   overlap.
 *
 *   CONCATENATION of n_in tensors (tw_concat) — TFLite's CONCATENATION (golden/shape_ops.py
 *   `concat`) and onnxruntime's QLinearConcat (golden/onnx_ops.py `concat`), on any axis: input j
 *   viewed as [outer][inner[j]] bytes (outer = product of the dims before the axis, inner[j] =
 *   its bytes from the axis on), out[o] = in[0][o], in[1][o], ... in turn; an 8-bit input's
 *   lut[j] (256 entries indexed by stored byte + 128, as the output is stored) requantizes it,
 *   NULL copies it (equal scale and zero point; always for 16-bit inputs). The output must not
 *   overlap any input.
 *
 *   TRANSPOSE_CONV (tw_transpose_conv) — TFLite's TRANSPOSE_CONV (golden/conv.py
 *   `transpose_conv_acc`, LiteRT's reference_integer_ops::TransposeConv), int8 (elem_bytes 1) or
 *   16x8 (elem_bytes 2), NHWC input [n][ih][iw][c], weights [k][fh][fw][c], output
 *   [n][oh][ow][k]. Computed per output value (the gather form of LiteRT's scatter; the same
 *   integer sum): acc = bias[k] + Σ (x[iy][ix][c] - x_zp) · w[k][fy][fx][c] over the taps with
 *   oy + pad_t - fy = iy·sy and ox + pad_l - fx = ix·sx inside the input; then
 *   y = clamp(MBQM(acc) + y_zp, qmin, qmax) with the int32 MultiplyByQuantizedMultiplier
 *   (tw_requant.h, int32 accumulator and bias) for int8, the int64 one (tw_s16.h, int64
 *   accumulator and bias) for 16x8. `in` and `out` must not overlap.
 *
 *   PAD (tw_pad) — numpy.pad(in, pads, constant value) (golden/shape_ops.py `pad`; TFLite PAD pads
 *   with the output zero point, PADV2 with its constant): the input, of dims in_dims[0..rank)
 *   (rank <= TW_TRANSPOSE_MAX_RANK), lands in the output, of dims out_dims, at offset before[d]
 *   along each dim; every other output element is `value` (as stored: uint8 value - 128). `in`
 *   and `out` must not overlap.
 *
 *   ADD / SUB / MUL with broadcasting (tw_binary) — TFLite's ADD, SUB and MUL on operands of any
 *   broadcastable shapes (golden/elementwise.py, numpy broadcasting; LiteRT's BroadcastAdd6DSlow
 *   and friends compute the same arithmetic per element): the output, of dims out_dims[0..rank)
 *   (rank <= TW_TRANSPOSE_MAX_RANK), is written in order; its element (i_0, ..., i_{rank-1}) is
 *   op(a[Σ i_d · a_stride[d]], b[Σ i_d · b_stride[d]]), where an operand's stride is 0 along a
 *   dim it broadcasts. op: TW_BINARY_ADD / _SUB (tw_add_value, `params` a tw_add_params_t) or
 *   TW_BINARY_MUL (tw_mul_value, a tw_mul_params_t), tw_elementwise.h. Elements of `elem_bytes`
 *   (1: int8 / uint8 stored as u - 128 with zero points and clamp as stored; 2: int16). The
 *   output may alias an operand only when that operand has the output's shape.
 */
#ifndef TW_HOST_H
#define TW_HOST_H

#include <stdint.h>

#define TW_TRANSPOSE_MAX_RANK 8

typedef struct {
    int32_t in_zp;            /* input zero point, as stored (uint8: zp - 128) */
    int32_t mult, shift;      /* QuantizeMultiplier(s_in / s_out): Q31 M0, exponent (+ = left) */
    int32_t out_zp;           /* output zero point, as stored (uint8: zp - 128) */
    int32_t qmin, qmax;       /* the output type's range, as stored */
} tw_quantize_params_t;

typedef struct {
    int32_t n, ih, iw, c, oh, ow, k, fh, fw, sy, sx, pad_t, pad_l;
    int32_t x_zp, y_zp, qmin, qmax;
    const int8_t *w;          /* [k][fh][fw][c] */
    const void *bias;         /* int32 [k] (int8) or int64 [k] (16x8); NULL: none */
    const int32_t *mult;      /* per output channel: Q31 M0 */
    const int32_t *shift;     /* per output channel: exponent (+ = left) */
} tw_transpose_conv_params_t;

void tw_pad(const void *in, void *out, int elem_bytes, int rank, const int32_t *in_dims,
            const int32_t *out_dims, const int32_t *before, int32_t value);

enum { TW_BINARY_ADD, TW_BINARY_SUB, TW_BINARY_MUL };

void tw_binary(int op, const void *params, const void *a, const int32_t *a_stride, const void *b,
               const int32_t *b_stride, void *out, int elem_bytes, int rank,
               const int32_t *out_dims);

void tw_quantize(const tw_quantize_params_t *p, const void *in, int in_bytes, void *out,
                 int out_bytes, int32_t n);
void tw_transpose(const void *in, void *out, int elem_bytes, int rank, const int32_t *out_dims,
                  const int32_t *in_stride);
void tw_concat(const int8_t *const *in, const int8_t *const *lut, const int32_t *inner, int n_in,
               int8_t *out, int32_t outer);
void tw_transpose_conv(const tw_transpose_conv_params_t *p, const void *in, void *out,
                       int elem_bytes);

#endif /* TW_HOST_H */
