/*
 * tw_ne16_kernels.h — what a layer file run on NE16 calls: the job API (tw_ne16.h) and the
 * cluster's requantization of a job's int32 outputs (below).
 *
 * tw_ne16_requant_s8_<variant>(args, core, cores): out[p][k] = requant(acc[p][k] + bias[k]) for
 * the n pixels × k_t channels of a tile, the pulp kernels' 32-bit requantization of `variant`
 * (tw_pulp_requant.h: tflite, tflite_right, tflite_single, shift, shift32, onnx; the words as
 * bindings/pulp/constants.py derives them); the outputs split over the cores in equal runs.
 * acc + bias is the layer's accumulator (bindings/ne16/constants.py), added modulo 2^32.
 */
#ifndef TW_NE16_KERNELS_H
#define TW_NE16_KERNELS_H

#include <stdint.h>

#include "tw_ne16.h"
#include "tw_pulp_elementwise.h"
#include "tw_pulp_requant.h"

typedef struct {
    const int32_t *acc;        /* [n][k] */
    const int32_t *bias;       /* [k] */
    tw_pulp_rq_t rq;           /* k channels' words */
    int8_t *out;               /* [n][k] */
    int n, k;
    int lighter;               /* outputs core 0's share is short of the others' (it dispatches
                                  NE16's next job first: TW_NE16_DISPATCH_OUTPUTS), 0: equal */
} tw_ne16_rq_args_t;

/* Core 0's work per row job besides the others' (its wait of a finished job ~150–200 cycles and
 * the dispatch of the next, tw_ne16_dispatch_rows, ~310 on GVSoC) in outputs of the
 * requantization (~14.5 cycles each per core): what core 0's share of the job before is short of
 * the other cores' (templates/ne16_s8.c.j2). Measured on GVSoC (pulp-open-ne16, kws_dscnn's NE16
 * layers): 0 281,335 cycles, 22 277,984, 36 277,542. */
#define TW_NE16_DISPATCH_OUTPUTS 36

#define TW_NE16_RQ_DECL(name, rq_mode)                                                      \
    void tw_ne16_requant_s8_##name(const tw_ne16_rq_args_t *a, int core_id, int n_cores);

TW_PULP_VARIANTS(TW_NE16_RQ_DECL)

/* The tflite and tflite_right variants' requantization in one mulh per output, for layers whose
 * accumulators satisfy, for every channel, |acc| · 2^(left + 2) < 2^31 and |acc| · 2^left · m0 /
 * 2^30 + 3 + 2^e + 256 · 2^(e+1) < 2^31, e ≤ 29 (left, e: the channel's left and right shift;
 * 256 bounds the zero point of an int8 or u8 output; bindings/ne16/requant.py `mulh_fits`), or
 * whose output is constant; the same arguments as tw_ne16_requant_s8_<variant>, with the words
 * of requant.py `mulh_words` (m0, left + 2, e + 1, 1 + 2^e per channel). */
void tw_ne16_requant_s8_mulh(const tw_ne16_rq_args_t *a, int core_id, int n_cores);

/* The residual add fused into tw_ne16_requant_s8_mulh (bindings/ne16/residual.py): each output
 * q (the conv's int8 code, as tw_ne16_requant_s8_mulh computes it) becomes the add's
 * clamp((TA[q + 128] + TB[s + 128]) >> shift, qmin, qmax), s the skip tensor's byte at the same
 * place read as int8 (skip: [n][k] as out), TA then TB (256 int32 each) at `tables` the folded
 * form's: TA's entry i for the code i − 128, TB's the same for an int8 skip tensor or, for a
 * skip tensor stored as u8 (read as int8: (int8)(code + 128)), for the code (int8)i; only that
 * is stored. */
typedef struct {
    const int8_t *skip;        /* [n][k] */
    const int32_t *tables;     /* TA (the conv's output), TB (the skip tensor) */
    int32_t shift, qmin, qmax;
} tw_ne16_add_args_t;

void tw_ne16_requant_s8_mulh_add(const tw_ne16_rq_args_t *a, const tw_ne16_add_args_t *r,
                                 int core_id, int n_cores);

/* n bytes of int8 x into u8 u (u = x + 128: x ^ 0x80), a word at a time where both allow. */
void tw_ne16_to_u8(uint8_t *u, const int8_t *x, int n);

/* tw_ne16_to_u8 of this core's share of the n bytes (equal runs cut at word boundaries); every
 * core calls it, a barrier follows before the job reads u. */
void tw_ne16_to_u8_part(uint8_t *u, const int8_t *x, int n, int core_id, int n_cores);

/* This core's rows of the u8 input with its bottom and right padding in the data: in_h rows of
 * in_w·in_c bytes of int8 x become rows of (in_w + pad_r)·in_c bytes of u (x + 128, then pad_r
 * pixels of pad_value), then pad_b rows of pad_value; rows dealt out to the cores in turn. For
 * NE16 engines whose bottom / right padding is only right when a job's last output subtile is
 * whole (GVSoC's model, tw_hal_ne16_pulp_open.c): the job then reads that padding as data. */
void tw_ne16_to_u8_pad_part(uint8_t *u, const int8_t *x, int in_h, int in_w, int in_c,
                            int pad_b, int pad_r, uint8_t pad_value, int core_id, int n_cores);

/* This core's output pixels (dealt out in turn) of the u8 im2col of an int8 HWC input tile
 * (in_h × in_w × in_c, its top / left padding pad_t / pad_l, stride sy × sx): per output pixel
 * the fy × fx taps, each c_pad bytes — in_c of x + 128 (pad_value outside the tile), then
 * c_pad - in_c bytes of any value (the columns of zero weights: their value adds nothing; a
 * pixel with padding is filled with pad_value whole first, so cols must be whole words) —
 * the input of a 1×1 job over out_h × out_w pixels of fy·fx·c_pad channels (the *_im2col
 * bindings: a kernel NE16 does not take run as that job). */
void tw_ne16_im2col_u8_part(uint8_t *u, const int8_t *x, int in_h, int in_w, int in_c,
                            int c_pad, int fy, int fx, int sy, int sx, int pad_t, int pad_l,
                            int out_h, int out_w, uint8_t pad_value, int core_id, int n_cores);

#endif /* TW_NE16_KERNELS_H */
