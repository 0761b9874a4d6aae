/*
 * tw_lstm.h — TFLite's integer LSTM (UNIDIRECTIONAL_SEQUENCE_LSTM, int8 activations, int16 cell)
 * as LiteRT's reference computes it (lstm_eval.cc EvalInteger8x8_16, portable_tensor_utils.cc);
 * the definition is tilewise's golden model, golden/lstm.py, and gemmlowp's int16 fixed-point
 * logistic / tanh (golden/gemmlowp16.py).
 *
 * One time step is two calls: tw_lstm_gates (the four gates' int8 x int8 -> int32 products of
 * the step's input and of the hidden state, each rescaled into the gate's Q3.12) and
 * tw_lstm_update (sigmoid / tanh, the cell update with its clip, the new hidden state). The
 * state (h int8, c int16) and the gates live in the caller's buffers (the layer's L1 scratch);
 * the generated layer function runs the time loop. No malloc, no globals.
 */
#ifndef TW_LSTM_H
#define TW_LSTM_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int n_input;               /* I: input features per step */
    int n_cell;                /* H: cells (= hidden size, no projection) */
    const int8_t *w_x;         /* [4][H][I] input weights, gates input, forget, cell, output */
    const int8_t *w_h;         /* [4][H][H] recurrent weights */
    const int32_t *b_x;        /* [4][H] bias - zp_x * row sums of w_x */
    const int32_t *b_h;        /* [4][H] -zp_h * row sums of w_h */
    int32_t in_mult[4], in_shift[4];     /* input product -> Q3.12 (MultiplyByQuantizedMultiplier) */
    int32_t rec_mult[4], rec_shift[4];   /* recurrent product -> Q3.12 */
    int32_t hidden_mult, hidden_shift, hidden_zp;   /* o * tanh(c) (Q0.30) -> int8 h */
    int32_t cell_scale;        /* log2 of the cell state's scale (-15: Q0.15) */
    int32_t cell_clip;         /* |c| <= cell_clip when > 0 */
    int32_t state_zp;          /* h before the first step */
} tw_lstm_t;

/* The caller's buffers: h (H int8), c (H int16), gate (4H int16); the generated layer function
 * places them (and, when they fit, copies of the weights and biases) in its L1 scratch
 * (bindings/portable/lstm.py l1_layout). */

/* h = state_zp, c = 0: the state LiteRT starts every inference from. */
void tw_lstm_reset(const tw_lstm_t *p, int8_t *h, int16_t *c);

/* gate[g][k] = sat16(MBQM(b_h + w_h[g][k].h) + sat16(MBQM(b_x + w_x[g][k].x))) (Q3.12). */
void tw_lstm_gates(const tw_lstm_t *p, const int8_t *x, const int8_t *h, int16_t *gate);

/* i, f, o = sigmoid, g = tanh of the gates; c = f.c/2^15 + i.g/2^(30+cell_scale) (clipped);
 * h = clamp(MBQM(o.tanh(c)) + hidden_zp), tanh(c) on 15 + cell_scale integer bits — outside 0..6
 * LiteRT computes no tanh and o multiplies the input gate i (golden/lstm.py). */
void tw_lstm_update(const tw_lstm_t *p, const int16_t *gate, int16_t *c, int8_t *h);

/* tw_lstm_update of one cell: its four gates (Q3.12) in, its c updated, its new h returned (the
 * cluster kernel, tw_pulp_lstm.h, calls it on each core's cells). */
int8_t tw_lstm_cell(const tw_lstm_t *p, int16_t gi, int16_t gf, int16_t gg, int16_t go, int16_t *c);

/* gemmlowp::logistic of a Q3.12 value and gemmlowp::tanh of a Q(bits).(15-bits) value, Q0.15. */
int16_t tw_lstm_sigmoid(int16_t a);
int16_t tw_lstm_tanh(int16_t a, int bits);

#endif /* TW_LSTM_H */
