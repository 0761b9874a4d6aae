/*
 * tw_pulp.h — the pulp kernel family: int8 kernels for the RI5CY / XpulpV2 8-core cluster
 * (GAP8, GAP9, pulp-open), PULP-NN's structure (seed 004 ch. 3), bit-exact with the golden model
 * and with the portable family, whose argument structs and constants layout they take
 * (tw_kernels.h). One include for generated code.
 *
 *   tw_pulp_isa.h          XpulpV2 operations as inline functions (asm on RISC-V, C elsewhere)
 *   tw_pulp_requant.h      32-bit requantization, one inlined call per output, mode fixed at
 *                          compile time
 *   tw_pulp_common.h       core split, im2col / row movers
 *   tw_pulp_conv.h         conv2d (im2col + 4x2 MatMul), 1x1 conv, fully connected
 *   tw_pulp_depthwise.h    depthwise, SIMD along kernel rows
 *   tw_pulp_elementwise.h  add / sub / mul (TFLite)
 *   tw_pulp_pool.h         max / average / global average pooling, channel SIMD
 *   tw_pulp_subbyte.h      conv2d with packed 4/2-bit operands (unpack + sdotp4, seed 004)
 *   tw_pulp_rows.h         the integer exports' row-wise ops through L1, the transpose (issue 28)
 *   tw_pulp_mm_act.h       MatMul of two int8 activations (attention), requantized or int32
 *   tw_pulp_lstm.h         TFLite's integer LSTM, the cells over the cores, SIMD gate products
 *   tw_pulp_lstm16.h       TFLite Micro's 16x8 LSTM, the same structure, int16 dot products
 *   tw_pulp_svdf.h         TFLite's integer SVDF, the filters and units over the cores
 * Sources to compile: every .c of this folder and of the portable family's (tw_kernels/).
 */
#ifndef TW_PULP_H
#define TW_PULP_H

#include "tw_kernels.h"
#include "tw_pulp_isa.h"
#include "tw_pulp_requant.h"
#include "tw_pulp_common.h"
#include "tw_pulp_conv.h"
#include "tw_pulp_depthwise.h"
#include "tw_pulp_elementwise.h"
#include "tw_pulp_pool.h"
#include "tw_pulp_subbyte.h"
#include "tw_pulp_rows.h"
#include "tw_pulp_mm_act.h"
#include "tw_pulp_lstm.h"
#include "tw_pulp_lstm16.h"
#include "tw_pulp_svdf.h"

/* The statement `fn##_<variant> args` for a requant variant known only at run time (TW_RQ_TFLITE,
 * TW_RQ_TFLITE_SINGLE, TW_RQ_SHIFT, TW_PULP_RQ_SHIFT32, TW_PULP_RQ_TFLITE_RIGHT, TW_RQ_ONNX,
 * TW_PULP_RQ_ONNX24, TW_PULP_RQ_ONNX_FPU), e.g.
 * TW_PULP_BY_VARIANT(v, tw_pulp_conv2d_s8, (&args, core, cores)). Generated code names the
 * variant's entry point itself. */
#define TW_PULP_BY_VARIANT(variant, fn, args)                                               \
    do {                                                                                    \
        switch (variant) {                                                                  \
        case TW_RQ_TFLITE: fn##_tflite args; break;                                         \
        case TW_RQ_TFLITE_SINGLE: fn##_tflite_single args; break;                           \
        case TW_RQ_SHIFT: fn##_shift args; break;                                           \
        case TW_PULP_RQ_SHIFT32: fn##_shift32 args; break;                                  \
        case TW_PULP_RQ_TFLITE_RIGHT: fn##_tflite_right args; break;                        \
        case TW_PULP_RQ_ONNX24: fn##_onnx24 args; break;                                    \
        case TW_PULP_RQ_ONNX_FPU: fn##_onnx_fpu args; break;                                \
        default: fn##_onnx args;                                                            \
        }                                                                                   \
    } while (0)

#endif /* TW_PULP_H */
