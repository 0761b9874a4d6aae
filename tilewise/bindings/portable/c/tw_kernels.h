/*
 * tw_kernels.h — the tilewise int8 kernel library: one include for generated code.
 *
 * C99, no malloc, no mutable globals; every kernel works on one tile already in L1, in HWC
 * layout, and computes its core's share of it (tw_common.h). Sources to compile: every .c file
 * of this folder (link with -lm for nearbyintf, used by the onnx requant mode).
 *
 *   tw_conv.h         conv2d (im2col + 4x2 MatMul), 1x1 pointwise, C-tiling partial sums
 *   tw_depthwise.h    depthwise conv with depth multiplier
 *   tw_linear.h       fully connected, C-tiling partial sums
 *   tw_elementwise.h  add / sub / mul (TFLite), add (onnxruntime QLinearAdd)
 *   tw_pool.h         average / max pooling, global average pooling (TFLite; onnx requant)
 *   tw_softmax.h      softmax (TFLite int8 reference)
 *   tw_requant.h      requantization: tflite / shift / onnx modes
 *   tw_s16.h          16x8: int16 conv / fully connected, int64 accumulation and requant
 *   tw_host.h         the host core's whole-tensor kernels: quantize, transpose, concatenation
 *   tw_subbyte.h      packed 4/2-bit tensors: element access, whole-layer conv / depthwise / dense
 *   tw_lstm.h         TFLite's integer LSTM step: gate products, sigmoid / tanh, cell update
 *   tw_lstm16.h       TFLite Micro's 16x8 LSTM step (int16 activations, int8 weights)
 *   tw_int.h          integer exports' ops on any integer width: requant, conv, arithmetic,
 *                     matmul, reduce, hardswish (whole tensors, one core)
 *   tw_svdf.h         LiteRT's integer SVDF with its int16 state (whole layer, one core)
 */
#ifndef TW_KERNELS_H
#define TW_KERNELS_H

#include "tw_common.h"
#include "tw_requant.h"
#include "tw_conv.h"
#include "tw_depthwise.h"
#include "tw_linear.h"
#include "tw_elementwise.h"
#include "tw_pool.h"
#include "tw_softmax.h"
#include "tw_s16.h"
#include "tw_host.h"
#include "tw_subbyte.h"
#include "tw_int.h"
#include "tw_svdf.h"
#include "tw_lstm.h"
#include "tw_lstm16.h"

#endif /* TW_KERNELS_H */
