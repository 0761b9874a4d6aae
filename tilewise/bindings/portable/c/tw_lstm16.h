/*
 * tw_lstm16.h — TFLite's 16x8 LSTM (UNIDIRECTIONAL_SEQUENCE_LSTM with int16 activations, int8
 * weights, int64 biases, an int16 cell state) as TFLite Micro computes it (kernels/lstm_eval.h
 * EvalLstm<int16_t, int8_t, int16_t, int64_t> over the reference integer FullyConnected,
 * Logistic, Tanh and Mul); the definition is tilewise's golden model, golden/lstm16.py.
 *
 * One time step is two calls, as for the int8 form (tw_lstm.h): tw_lstm16_gates (per gate the
 * input FC — int16 x int8 products plus the int64 bias, rescaled by the int64
 * MultiplyByQuantizedMultiplier and clamped to int16 — and the recurrent FC of h without a bias,
 * added with int16 saturation) and tw_lstm16_update (Logistic / Tanh by the interpolated
 * sigmoid_table_uint16, the two cell Muls, the clip, h = Mul(tanh(c), o)). The products sum in
 * int32 when the row has fewer than 512 terms (each is at most 2^22 in magnitude, so the int32 sum
 * is TFLM's int64 one), in int64 otherwise. No malloc, no globals besides the const table.
 */
#ifndef TW_LSTM16_H
#define TW_LSTM16_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int n_input;               /* I */
    int n_cell;                /* H */
    const int8_t *w_x;         /* [4][H][I], gates input, forget, cell, output */
    const int8_t *w_h;         /* [4][H][H] */
    const int64_t *b_x;        /* [4][H] the gates' biases (the recurrent FC has none) */
    int32_t in_mult[4], in_shift[4];     /* input FC -> Q3.12 (int64 MBQM) */
    int32_t rec_mult[4], rec_shift[4];   /* recurrent FC -> Q3.12 */
    int32_t cell_mul[4];       /* (M0, shift) of forget*c -> c and of input*cell gate -> c */
    int32_t hidden_mult, hidden_shift, hidden_zp;   /* tanh(c)*o -> h */
    int32_t cell_scale;        /* log2 of the cell state's scale */
    int32_t cell_clip;         /* |c| <= cell_clip when > 0 */
} tw_lstm16_t;

/* h = 0, c = 0: the state TFLM starts every inference from (int16 variable tensors reset to 0). */
void tw_lstm16_reset(const tw_lstm16_t *p, int16_t *h, int16_t *c);

/* gate[g][k] = sat16(FC(x; w_x[g][k], b_x[g][k]) + FC(h; w_h[g][k])) (Q3.12). */
void tw_lstm16_gates(const tw_lstm16_t *p, const int16_t *x, const int16_t *h, int16_t *gate);

/* The cells' update from the gates: c and h (H each) updated. */
void tw_lstm16_update(const tw_lstm16_t *p, const int16_t *gate, int16_t *c, int16_t *h);

/* One cell: its four gates (Q3.12) in, its c updated, its new h returned. */
int16_t tw_lstm16_cell(const tw_lstm16_t *p, int16_t gi, int16_t gf, int16_t gg, int16_t go, int16_t *c);

/* clamp16(MBQM64(acc, m0, shift)): the FC's rescale into Q3.12. */
int16_t tw_lstm16_rescale(int64_t acc, int32_t m0, int32_t shift);

/* reference_integer_ops::Logistic(0, 0) of a Q3.12 value and lstm_internal::Tanh(power) (power
 * -12 for the cell gate, the cell state's log2 scale for c), Q0.15 out. */
int16_t tw_lstm16_sigmoid(int16_t a);
int16_t tw_lstm16_tanh(int16_t a, int power);

#endif /* TW_LSTM16_H */
