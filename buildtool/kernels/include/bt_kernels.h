/* bt_kernels.h -- the buildtool int8 kernel API (C99, freestanding).
 *
 * Every kernel set (kernels/reference, kernels/cortex-m, kernels/riscv, kernels/xcore,
 * kernels/host) implements exactly these functions with byte-identical results. A build compiles,
 * for each file name of kernels/reference/<name>.c, the target folder's file of the same name when
 * it exists, else the reference one. Add -I kernels/include -I kernels/<set> -I kernels/reference.
 *
 * Arithmetic is TensorFlow Lite Micro's int8 reference arithmetic, bit for bit:
 *   acc (int32) -> MultiplyByQuantizedMultiplier(acc, multiplier, shift)
 *               = RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(acc << max(shift,0), multiplier),
 *                                     max(-shift,0))
 *   then + output zero point, then clamp to [act_min, act_max].
 * Every quantisation parameter is precomputed by code generation (Python) and passed in the
 * parameter structs below; the kernels never compute a scale. Field names follow TFLM's
 * (tflite::ConvParams, ArithmeticParams, SoftmaxParams, HardSwishParams, ...). In particular
 * `input_offset` = -input_zero_point and `output_offset` = +output_zero_point, as in TFLM.
 *
 * Memory: every activation pointer points into the arena; weights, biases and multiplier
 * tables are read in place (they may be in flash). Kernels never allocate, never call libc,
 * and use no float, except bt_quantize_f32_s8 / bt_dequantize_s8_f32 (float model I/O) and bt_neg_f32.
 * Scratch lives on the stack: the cortex-m set's conv and fully connected take up to 3.3 KB
 * (two int16 patch columns and the gathered patch, docs/kernels.md); boards reserve 8 KB.
 * Filters keep TFLite's layouts: CONV_2D OHWI [c_out][kh][kw][c_in], DEPTHWISE 1HWC
 * [kh][kw][c_out], FULLY_CONNECTED [n_out][n_in]. No set needs a packed weight layout.
 *
 * Activations are NHWC int8, batch 1, described by bt_shape:
 *   pixel (y, x) channel c of a tensor at `base` lives at  base + (y*w + x)*pixel_stride + c.
 *   pixel_stride == c for a dense tensor; larger when the tensor is a view into a wider tensor,
 *   e.g. one input of a channel CONCATENATION written straight into its slice of the output
 *   (base = output + channel offset, pixel_stride = output channels).
 *
 * Row bands (conv, depthwise, pooling): a call computes output rows [y0, y1) only.
 *   - `in` points at the first byte of ABSOLUTE input row `in_y0` (in_y0 may be 0 for a whole
 *     tensor). Row r is read at  in + (r - in_y0) * in.w * in.pixel_stride.
 *   - The params' `in.h` is the FULL input height; padding is applied by absolute row index
 *     (rows < 0 or >= in.h are padding). The caller must make the band hold every input row
 *     in [y0*stride_h - pad_top, (y1-1)*stride_h - pad_top + (kh-1)*dil_h] intersected with
 *     [0, in.h) (pooling: kh = filter_h, dil_h = 1); no other input row is read.
 *   - `out` points at the first byte of output row y0 (NOT row 0). Row y is written at
 *     out + (y - y0) * out.w * out.pixel_stride.
 *   - 0 <= y0 <= y1 <= out.h. Whole tensor: in_y0 = 0, y0 = 0, y1 = out.h.
 *
 * Aliasing: element-wise kernels (add, mul, logistic, hard_swish, requantize, relu, relu6, tanh, prelu,
 * maximum, minimum, abs, lut, compare) accept out == an input
 * (exact alias, same strides). bt_quantize_f32_s8 and bt_dequantize_s8_f32 also accept out == in
 * (same start address; the buffer holds the larger of the two). No other kernel may alias, except
 * bt_depthwise_s8_inplace, which is built for it.
 *
 * Symbol renaming: compiling with -DBT_KERNEL_PREFIX_REF renames every function to ref_bt_*
 * so the test program can link the reference set next to an optimised set.
 */
#ifndef BT_KERNELS_H
#define BT_KERNELS_H

#include <stdint.h>
#include <stddef.h>

#ifdef BT_KERNEL_PREFIX_REF
#define bt_conv_s8 ref_bt_conv_s8
#define bt_depthwise_s8 ref_bt_depthwise_s8
#define bt_depthwise_s8_inplace ref_bt_depthwise_s8_inplace
#define bt_fully_connected_s8 ref_bt_fully_connected_s8
#define bt_add_s8 ref_bt_add_s8
#define bt_mul_s8 ref_bt_mul_s8
#define bt_avg_pool_s8 ref_bt_avg_pool_s8
#define bt_max_pool_s8 ref_bt_max_pool_s8
#define bt_mean_s8 ref_bt_mean_s8
#define bt_softmax_s8 ref_bt_softmax_s8
#define bt_logistic_s8 ref_bt_logistic_s8
#define bt_hard_swish_s8 ref_bt_hard_swish_s8
#define bt_requantize_s8 ref_bt_requantize_s8
#define bt_quantize_f32_s8 ref_bt_quantize_f32_s8
#define bt_dequantize_s8_f32 ref_bt_dequantize_s8_f32
#define bt_pad_s8 ref_bt_pad_s8
#define bt_concat_s8 ref_bt_concat_s8
#define bt_split_s8 ref_bt_split_s8
#define bt_strided_slice_s8 ref_bt_strided_slice_s8
#define bt_kernel_set_name ref_bt_kernel_set_name
#define bt_add_s16 ref_bt_add_s16
#define bt_sub_s8 ref_bt_sub_s8
#define bt_sub_s16 ref_bt_sub_s16
#define bt_conv_s16 ref_bt_conv_s16
#define bt_transpose_conv_s8 ref_bt_transpose_conv_s8
#define bt_transpose_conv_s16 ref_bt_transpose_conv_s16
#define bt_leaky_relu_s8 ref_bt_leaky_relu_s8
#define bt_leaky_relu_s16 ref_bt_leaky_relu_s16
#define bt_requantize ref_bt_requantize
#define bt_quantize_f32_s16 ref_bt_quantize_f32_s16
#define bt_pad_s16 ref_bt_pad_s16
#define bt_strided_slice_s16 ref_bt_strided_slice_s16
#define bt_depthwise_s16 ref_bt_depthwise_s16
#define bt_fully_connected_s16 ref_bt_fully_connected_s16
#define bt_mul_s16 ref_bt_mul_s16
#define bt_avg_pool_s16 ref_bt_avg_pool_s16
#define bt_max_pool_s16 ref_bt_max_pool_s16
#define bt_mean_s16 ref_bt_mean_s16
#define bt_dequantize_s16_f32 ref_bt_dequantize_s16_f32
#define bt_relu_s8 ref_bt_relu_s8
#define bt_relu6_s8 ref_bt_relu6_s8
#define bt_tanh_s8 ref_bt_tanh_s8
#define bt_prelu_s8 ref_bt_prelu_s8
#define bt_maximum_s8 ref_bt_maximum_s8
#define bt_minimum_s8 ref_bt_minimum_s8
#define bt_relu_s16 ref_bt_relu_s16
#define bt_softmax_s16 ref_bt_softmax_s16
#define bt_logistic_s16 ref_bt_logistic_s16
#define bt_tanh_s16 ref_bt_tanh_s16
#define bt_relu6_s16 ref_bt_relu6_s16
#define bt_prelu_s16 ref_bt_prelu_s16
#define bt_maximum_s16 ref_bt_maximum_s16
#define bt_minimum_s16 ref_bt_minimum_s16
#define bt_transpose_s8 ref_bt_transpose_s8
#define bt_resize_nearest_s8 ref_bt_resize_nearest_s8
#define bt_resize_bilinear_s8 ref_bt_resize_bilinear_s8
#define bt_softmax_s8_s16 ref_bt_softmax_s8_s16
#define bt_svdf_s8 ref_bt_svdf_s8
#define bt_lstm_s8 ref_bt_lstm_s8
#define bt_abs_s8 ref_bt_abs_s8
#define bt_abs_s16 ref_bt_abs_s16
#define bt_lut_s8 ref_bt_lut_s8
#define bt_rsqrt_s16 ref_bt_rsqrt_s16
#define bt_compare_s8 ref_bt_compare_s8
#define bt_add_s32 ref_bt_add_s32
#define bt_compare_s32 ref_bt_compare_s32
#define bt_squared_difference_s8 ref_bt_squared_difference_s8
#define bt_squared_difference_s16 ref_bt_squared_difference_s16
#define bt_add_n_s8 ref_bt_add_n_s8
#define bt_zeros_s8 ref_bt_zeros_s8
#define bt_argminmax_s8 ref_bt_argminmax_s8
#define bt_gather_s8 ref_bt_gather_s8
#define bt_gather_idx_s8 ref_bt_gather_idx_s8
#define bt_gather_nd_s8 ref_bt_gather_nd_s8
#define bt_fill_s8 ref_bt_fill_s8
#define bt_space_to_batch_s8 ref_bt_space_to_batch_s8
#define bt_batch_to_space_s8 ref_bt_batch_to_space_s8
#define bt_mirror_pad_s8 ref_bt_mirror_pad_s8
#define bt_batch_matmul_s8 ref_bt_batch_matmul_s8
#define bt_batch_matmul_s16 ref_bt_batch_matmul_s16
#define bt_l2_norm_s8 ref_bt_l2_norm_s8
#define bt_cumsum_s8 ref_bt_cumsum_s8
#define bt_signal_window_s16 ref_bt_signal_window_s16
#define bt_signal_rfft_s16 ref_bt_signal_rfft_s16
#define bt_signal_energy ref_bt_signal_energy
#define bt_signal_filter_bank ref_bt_signal_filter_bank
#define bt_signal_fb_sqrt ref_bt_signal_fb_sqrt
#define bt_signal_fb_log ref_bt_signal_fb_log
#define bt_signal_pcan ref_bt_signal_pcan
#define bt_signal_spectral_subtraction ref_bt_signal_spectral_subtraction
#define bt_signal_delay_s16 ref_bt_signal_delay_s16
#define bt_signal_overlap_add_s16 ref_bt_signal_overlap_add_s16
#define bt_signal_stacker_s16 ref_bt_signal_stacker_s16
#define bt_signal_framer_s16 ref_bt_signal_framer_s16
#define bt_signal_irfft_s16 ref_bt_signal_irfft_s16
#define bt_signal_fft_auto_scale_s16 ref_bt_signal_fft_auto_scale_s16
#define bt_embedding_lookup_s8 ref_bt_embedding_lookup_s8
#define bt_cast ref_bt_cast
#define bt_log_softmax_s8 ref_bt_log_softmax_s8
#define bt_div_s8 ref_bt_div_s8
#define bt_neg_f32 ref_bt_neg_f32
#define bt_logical_b ref_bt_logical_b
#define bt_logical_not_b ref_bt_logical_not_b
#define bt_select_s8 ref_bt_select_s8
#define bt_select_s16 ref_bt_select_s16
#define bt_reduce_minmax_s8 ref_bt_reduce_minmax_s8
#define bt_reduce_minmax_s16 ref_bt_reduce_minmax_s16
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* An NHWC activation (batch 1). pixel_stride >= c: bytes between pixel (y,x) and (y,x+1). */
typedef struct {
  int32_t h, w, c, pixel_stride;
} bt_shape;

/* Name of the compiled kernel set: "reference", "cortex-m", "riscv", "riscv-rvv", "xcore", "host". */
const char *bt_kernel_set_name(void);

/* ------------------------------------------------------------------ CONV_2D (int8, per channel)
 * TFLM reference_integer_ops::ConvPerChannel. For output (y, x, oc):
 *   acc = bias[oc] + sum_{ky,kx,ic valid} filter[oc][ky][kx][ic] * (in(iy,ix,ic) + input_offset)
 *     iy = y*stride_h - pad_top + ky*dil_h, ix = x*stride_w - pad_left + kx*dil_w;
 *     taps outside [0,in.h) x [0,in.w) are skipped (== zero-point padding).
 *   out = clamp(MultiplyByQuantizedMultiplier(acc, multiplier[oc], shift[oc]) + output_offset,
 *               act_min, act_max)
 * pad_top/pad_left are TFLite's (ops.conv_padding). bias may be NULL (treated as 0).
 * multiplier/shift have c_out entries (per-tensor quantisation: replicate the value).
 * in.pixel_stride and out.pixel_stride may exceed c (views). Bands: see the top of this file. */
typedef struct {
  bt_shape in, out;                 /* in.h = full input height; out.c = c_out */
  /* the sizes 16 bits (12 bytes less a layer's struct in model.c), unsigned: Thumb's 16-bit LDRH reads them, where
   * LDRSH has only a 32-bit form (int16 pads, offsets and bounds grew cortex-m55's kernels more than they saved) */
  uint16_t kh, kw;
  uint16_t stride_h, stride_w, dil_h, dil_w;
  int32_t pad_top, pad_left;
  int32_t input_offset;             /* -input zero point */
  int32_t output_offset;            /* +output zero point */
  int32_t act_min, act_max;         /* fused activation and int8 range, in output quantised units */
  const int8_t *filter;             /* OHWI [out.c][kh][kw][in.c] */
  const int32_t *bias;              /* [out.c] or NULL */
  const int32_t *multiplier;        /* [out.c] Q31 from QuantizeMultiplier */
  const int32_t *shift;             /* [out.c] exponent (>0: left shift) */
} bt_conv_params;

void bt_conv_s8(const bt_conv_params *p, const int8_t *in, int32_t in_y0,
                int8_t *out, int32_t y0, int32_t y1);

/* ------------------------------------------------------- DEPTHWISE_CONV_2D (int8, per channel)
 * TFLM reference_integer_ops::DepthwiseConvPerChannel. Output channel oc = ic*depth_multiplier + m
 * uses input channel ic and filter[ky][kx][oc]; otherwise exactly as bt_conv_s8 (same params,
 * out.c = in.c * depth_multiplier, filter layout 1HWC [kh][kw][out.c]). */
typedef struct {
  bt_conv_params conv;              /* conv.filter is [kh][kw][out.c] */
  int32_t depth_multiplier;
} bt_depthwise_params;

void bt_depthwise_s8(const bt_depthwise_params *p, const int8_t *in, int32_t in_y0,
                     int8_t *out, int32_t y0, int32_t y1);

/* In-place depthwise: output written over its own input (same address `buf`), whole tensor.
 * Requires depth_multiplier == 1 and conv.in.pixel_stride == conv.out.pixel_stride.
 * scratch: conv.in.h * conv.in.w bytes (any alignment), distinct from buf.
 * Per channel c: copies input plane c into scratch, then computes output channel c from it and
 * writes it over buf: output pixel p channel c overwrites only byte p*pixel_stride + c.
 * Output may be smaller than input (stride > 1): bytes beyond the output pixels keep input data. */
void bt_depthwise_s8_inplace(const bt_depthwise_params *p, int8_t *buf, int8_t *scratch);

/* ---------------------------------------------------------------- FULLY_CONNECTED (int8)
 * TFLM reference_integer_ops::FullyConnected (per tensor) / FullyConnectedPerChannel.
 * For each batch row b and output o:
 *   acc = bias[o] + sum_i (weights[o][i] + filter_offset) * (in[b*n_in + i] + input_offset)
 *   out[b*n_out + o] = clamp(MBQM(acc, multiplier[k], shift[k]) + output_offset, act_min, act_max)
 *   with k = per_channel ? o : 0.  Input and output rows are dense. */
typedef struct {
  int32_t n_in, n_out, batches;
  int16_t input_offset;             /* -input zero point (16 bits: 8 bytes less a layer's struct) */
  int16_t filter_offset;            /* -weights zero point (0 for TFLite int8) */
  int16_t output_offset;            /* +output zero point */
  int16_t act_min, act_max;
  int16_t per_channel;              /* in what was padding: 40 bytes a layer's struct, not 44 */
  const int8_t *weights;            /* [n_out][n_in] */
  const int32_t *bias;              /* [n_out] or NULL */
  const int32_t *multiplier, *shift;/* [n_out] if per_channel, else [1] */
} bt_fc_params;

void bt_fully_connected_s8(const bt_fc_params *p, const int8_t *in, int8_t *out);

/* --------------------------------------------------------------- broadcast / strided iteration
 * Element-wise binary kernels walk a 4-D index space dims[0..3] (outermost first) and address
 * each operand with its own byte strides (0 on a broadcast dimension). NHWC dense tensor of
 * shape [1,H,W,C]: dims {1,H,W,C}, strides {H*W*C, W*C, C, 1}; a pixel-strided view uses
 * {.., W*ps, ps, 1}. Element (i0,i1,i2,i3) of operand X is at X + sum_k i_k*X_stride[k]. */
typedef struct {
  int32_t dims[4];
  int32_t a_stride[4], b_stride[4], out_stride[4];
} bt_bcast4;

/* ---------------------------------------------------------------------------- ADD (int8)
 * TFLM reference_integer_ops::Add (ArithmeticParams):
 *   a' = MBQMSmallerThanOneExp((a + input1_offset) << left_shift, input1_multiplier, input1_shift)
 *   b' = MBQMSmallerThanOneExp((b + input2_offset) << left_shift, input2_multiplier, input2_shift)
 *   out = clamp(MBQMSmallerThanOneExp(a' + b', output_multiplier, output_shift) + output_offset,
 *               act_min, act_max)
 * (shifts <= 0 as TFLM prepares them; left_shift is 20 for int8). out may alias a or b. */
typedef struct {
  int32_t input1_offset, input2_offset, output_offset;   /* -zp1, -zp2, +zp_out */
  int32_t left_shift;
  int32_t input1_multiplier, input1_shift;
  int32_t input2_multiplier, input2_shift;
  int32_t output_multiplier, output_shift;
  int32_t act_min, act_max;
  bt_bcast4 b;
} bt_add_params;

void bt_add_s8(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out);

/* ---------------------------------------------------------------------------- MUL (int8)
 * TFLM reference_integer_ops::Mul:
 *   out = clamp(MBQM((a + input1_offset) * (b + input2_offset), output_multiplier, output_shift)
 *               + output_offset, act_min, act_max).  out may alias a or b. */
typedef struct {
  int32_t input1_offset, input2_offset, output_offset;
  int32_t output_multiplier, output_shift;
  int32_t act_min, act_max;
  bt_bcast4 b;
} bt_mul_params;

void bt_mul_s8(const bt_mul_params *p, const int8_t *a, const int8_t *b, int8_t *out);

/* ---------------------------------------------------------- AVERAGE_POOL_2D / MAX_POOL_2D
 * TFLM reference_integer_ops::AveragePool / MaxPool. The window is clipped to the image (padding
 * is not counted). Average: sum over the clipped window, n = its size,
 *   avg = sum > 0 ? (sum + n/2)/n : (sum - n/2)/n  (C division), then clamp.
 * Max: max over the clipped window, then clamp. in.c == out.c. Row bands as for conv. */
typedef struct {
  bt_shape in, out;
  uint16_t filter_h, filter_w, stride_h, stride_w;   /* 16 bits as bt_conv_params' sizes */
  int32_t pad_top, pad_left;                           /* as bt_conv_params' (fused_ref.h: either's) */
  int16_t act_min, act_max;
} bt_pool_params;

void bt_avg_pool_s8(const bt_pool_params *p, const int8_t *in, int32_t in_y0,
                    int8_t *out, int32_t y0, int32_t y1);
void bt_max_pool_s8(const bt_pool_params *p, const int8_t *in, int32_t in_y0,
                    int8_t *out, int32_t y0, int32_t y1);

/* ---------------------------------------------------------------------------- MEAN (int8)
 * Reduces the middle axis of a dense [outer][reduce][inner] view (MEAN over H,W of NHWC:
 * outer = 1, reduce = H*W, inner = C; general axes: code generation folds them into this form or
 * calls it repeatedly). Input rows may be pixel strided: element (o, r, i) is at
 *   in + o*outer_stride + r*reduce_stride + i       (dense: reduce_stride = inner,
 *                                                    outer_stride = reduce*inner)
 * Output is dense [outer][inner]. For each output (TFLM reduce.h QuantizedMeanOrSum, num = reduce):
 *   out = clamp(MBQM(sum_r in(o, r, i) - input_zp*num, multiplier, shift) + output_zp, -128, 127)
 * multiplier/shift fold 1/num into input_scale/output_scale: QuantizeMultiplier(in/out) = (m, s),
 * k = min(floor(log2 num), 32, 31 + s), multiplier = (m << k) / num (truncating), shift = s - k.
 * TFLM takes this path for equal input/output quantisation too (checked against TFLM):
 * same_qparams is ignored (kept so existing initialisers stay valid). */
typedef struct {
  int32_t outer, reduce, inner;
  int32_t outer_stride, reduce_stride;
  int32_t input_zp, output_zp;
  int32_t multiplier, shift;
  int32_t same_qparams;             /* ignored (see above) */
} bt_mean_params;

void bt_mean_s8(const bt_mean_params *p, const int8_t *in, int8_t *out);

/* ------------------------------------------------------------------------- SOFTMAX (int8)
 * TFLM reference_ops::Softmax (quantized, gemmlowp fixed point), int8 in, int8 out (output
 * scale 1/256, zero point -128), over the last axis of a dense [rows][depth] tensor.
 * input_multiplier/input_left_shift from PreprocessSoftmaxScaling(beta, input_scale, 5),
 * diff_min from CalculateInputRadius(5, input_left_shift, 31) negated. */
typedef struct {
  int32_t rows, depth;
  int32_t input_multiplier, input_left_shift;
  int32_t diff_min;
} bt_softmax_params;

void bt_softmax_s8(const bt_softmax_params *p, const int8_t *in, int8_t *out);
/* The same with an int16 output (scale 1/65536, zero point -32768): TFLM's int8 -> int16 softmax. */
void bt_softmax_s8_s16(const bt_softmax_params *p, const int8_t *in, int16_t *out);

/* int16 -> int16 (TFLM's table path): per row, d = MBQM(in - row max, input_multiplier, input_left_shift)
 * + 32767 clamped to int16 (65535 codes per 10.0 of beta * difference) gives exp(d) by exp_lut; the sum
 * normalised to [1, 2) gives its reciprocal by rec_lut (1/(1+x)); out = exp * reciprocal rounded back to
 * scale 2^-15, zero point 0, clamped to [0, 32767]. Tables: 513 int16 entries, 512 segments of 128 codes,
 * interpolated with the rounded slope (refops/softmax.py). */
typedef struct {
  int32_t rows, depth;
  int32_t input_multiplier, input_left_shift;
  const int16_t *exp_lut, *rec_lut;   /* [513] each */
} bt_softmax16_params;

void bt_softmax_s16(const bt_softmax16_params *p, const int16_t *in, int16_t *out);

/* ------------------------------------------------------------------------ LOGISTIC (int8)
 * TFLM reference_integer_ops::Logistic: x = in - input_zero_point;
 *   x <= -input_range_radius -> -128; x >= input_range_radius -> 127; else
 *   gemmlowp::logistic on Q4.27 of MBQM(x, input_multiplier, input_left_shift), rescaled to
 *   output scale 1/256 zero point -128. n dense elements; out may alias in. */
typedef struct {
  int32_t n;
  int32_t input_zero_point, input_range_radius;
  int32_t input_multiplier, input_left_shift;
} bt_logistic_params;

void bt_logistic_s8(const bt_logistic_params *p, const int8_t *in, int8_t *out);

/* ------------------------------------------------------------------ LOGISTIC / TANH (int16)
 * TFLM's int16 kernels: d = (in * input_multiplier + (1 << input_left_shift >> 1)) >> input_left_shift
 * (units of 1/(3*4096)); |d| indexes `table` (256 entries, 65536 * sigmoid(i/24) adjusted for
 * interpolation: refops/activation.py sigmoid_table16) with 9 fraction bits for LOGISTIC, 8 for TANH
 * (tanh x = 2 sigmoid(2x) - 1), linear interpolation, saturated past entry 254; the sign restores the
 * negative half. Output scale 2^-15, zero point 0. n dense elements; out may alias in. */
typedef struct {
  int32_t n;
  int32_t input_multiplier, input_left_shift;
  const uint16_t *table;            /* [256] */
} bt_lut16_params;

void bt_logistic_s16(const bt_lut16_params *p, const int16_t *in, int16_t *out);
void bt_tanh_s16(const bt_lut16_params *p, const int16_t *in, int16_t *out);

/* ---------------------------------------------------------------------- HARD_SWISH (int8)
 * TFLM reference_ops::HardSwish<int8_t> with HardSwishParams (int16 fixed-point multipliers,
 * exponents). n dense elements; out may alias in. */
typedef struct {
  int32_t n;
  int32_t input_zero_point, output_zero_point;
  int32_t reluish_multiplier_fixedpoint_int16, reluish_multiplier_exponent;
  int32_t output_multiplier_fixedpoint_int16, output_multiplier_exponent;
} bt_hard_swish_params;

void bt_hard_swish_s8(const bt_hard_swish_params *p, const int8_t *in, int8_t *out);

/* ------------------------------------------------------------ QUANTIZE int8 -> int8 (requant)
 * TFLM reference_ops::Requantize: out = clamp(MBQM(in - input_zp, multiplier, shift) + output_zp,
 * -128, 127). n dense elements; out may alias in. */
typedef struct {
  int32_t n;
  int32_t input_zp, output_zp;
  int32_t multiplier, shift;
} bt_requant_params;

void bt_requantize_s8(const bt_requant_params *p, const int8_t *in, int8_t *out);

/* QUANTIZE float32 -> int8 (TFLM AffineQuantize): out = clamp(round_half_away(in / scale) + zp).
 * DEQUANTIZE int8 -> float32: out = scale * (in - zp). Float model I/O only. */
void bt_quantize_f32_s8(int32_t n, float scale, int32_t zero_point, const float *in, int8_t *out);
void bt_dequantize_s8_f32(int32_t n, float scale, int32_t zero_point, const int8_t *in, float *out);

/* -------------------------------------------------------------------------- PAD (int8)
 * 4-D dense pad: output dims out_dims[0..3]; input element (i0..i3) goes to
 * (i0+before[0], .., i3+before[3]); every other output byte = pad_value (the output zero point).
 * Output strides may be given for a strided destination (0 = dense): out_stride[k] bytes. */
typedef struct {
  int32_t in_dims[4], out_dims[4], before[4];
  int32_t out_stride[4];            /* all 0: dense */
  int32_t pad_value;
} bt_pad_params;

void bt_pad_s8(const bt_pad_params *p, const int8_t *in, int8_t *out);

/* ------------------------------------------------------------------ CONCATENATION / SPLIT
 * Byte copies (TFLite requires equal quantisation, else code generation adds a requantize).
 * The tensors are viewed as [outer][axis*inner]: input k contributes `size[k]` bytes to each of
 * the `outer` output rows of out_row = sum(size) bytes, after the previous inputs' bytes.
 * SPLIT is the inverse (outputs[k] receives size[k] bytes of each input row). */
typedef struct {
  int32_t n;                        /* number of inputs (concat) / outputs (split) */
  int32_t outer;
  const int32_t *size;              /* [n] bytes per row of tensor k */
} bt_concat_params;

void bt_concat_s8(const bt_concat_params *p, const int8_t *const *inputs, int8_t *out);
void bt_split_s8(const bt_concat_params *p, const int8_t *in, int8_t *const *outputs);

/* -------------------------------------------------------------------- STRIDED_SLICE (int8)
 * Resolved 4-D slice of a dense input (masks, negative indices and shrink are resolved by code
 * generation): out(i0..i3) = in(begin[k] + i_k*stride[k]), i_k in [0, out_dims[k]).
 * stride may be negative. Output dense. */
typedef struct {
  int32_t in_dims[4], out_dims[4], begin[4], stride[4];
} bt_slice_params;

void bt_strided_slice_s8(const bt_slice_params *p, const int8_t *in, int8_t *out);

/* ============================================================ int16 (16x8) and newer operators
 * 16x8 quantisation (TFLM): int16 activations with zero point 0, int8 weights, int32 or int64
 * bias. The _s16 kernels take the same parameter structs as their int8 twins; pointers are
 * int16_t and every stride and size counts elements (int16 tensors are always dense). */

/* ADD int16: as bt_add_s8 with left_shift 15. SUB (int8, int16): as ADD (same parameters) with
 * a' - b' (TFLM SubElementwise). */
void bt_add_s16(const bt_add_params *p, const int16_t *a, const int16_t *b, int16_t *out);
void bt_sub_s8(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out);
void bt_sub_s16(const bt_add_params *p, const int16_t *a, const int16_t *b, int16_t *out);

/* Convolution parameters with an optional int64 bias (16x8 kernels). */
typedef struct {
  bt_conv_params conv;              /* conv.bias: int32 bias or NULL */
  const int64_t *bias64;            /* [out.c] int64 bias, or NULL */
} bt_conv_wide_params;

/* CONV_2D 16x8: TFLM reference_integer_ops::ConvPerChannel<AccumScalar> on int16 input
 * (input_offset must be 0). With an int32 conv.bias the accumulator is int32 and the requantisation
 * bt_mbqm; otherwise (bias64 or no bias at all) int64 and TFLM's MultiplyByQuantizedMultiplier(int64_t,
 * ...) (bt_mbqm64 in requant.h). Row bands as bt_conv_s8 (row strides in elements). */
void bt_conv_s16(const bt_conv_wide_params *p, const int16_t *in, int32_t in_y0,
                 int16_t *out, int32_t y0, int32_t y1);

/* TRANSPOSE_CONV (TFLM reference_integer_ops::TransposeConv). weights OHWI [out.c][kh][kw][in.c].
 * Output (y, x, oc) sums, over taps (ky, kx) with iy = (y + pad_top - ky) / stride_h and
 * ix = (x + pad_left - kx) / stride_w exact and inside the input, weights[oc][ky][kx][ic] *
 * (in(iy, ix, ic) + input_offset): the same sum TFLM scatters into its scratch accumulator, so no
 * scratch is needed. Then + bias, requantise (int8: int32 acc and bt_mbqm with `bias`; int16: int64
 * acc, bias64 and bt_mbqm64), + output_offset, clamp. Dense tensors;
 * conv.dil_* unused. */
void bt_transpose_conv_s8(const bt_conv_wide_params *p, const int8_t *in, int8_t *out);
void bt_transpose_conv_s16(const bt_conv_wide_params *p, const int16_t *in, int16_t *out);

/* LEAKY_RELU (TFLM reference_ops::QuantizeLeakyRelu): x = in - input_offset (the input zero point);
 * out = clamp(output_offset + MBQM(x, x >= 0 ? identity : alpha multiplier/shift), type range), where a
 * negative multiplier m (negative alpha) gives -MBQM(x, -m, shift) (ties round as TFLM's do).
 * n dense elements; out may alias in. */
typedef struct {
  int32_t n;
  int32_t input_offset, output_offset;   /* +input zero point, +output zero point (TFLM's names) */
  int32_t output_multiplier_alpha, output_shift_alpha;
  int32_t output_multiplier_identity, output_shift_identity;
} bt_leaky_relu_params;

void bt_leaky_relu_s8(const bt_leaky_relu_params *p, const int8_t *in, int8_t *out);
void bt_leaky_relu_s16(const bt_leaky_relu_params *p, const int16_t *in, int16_t *out);

/* QUANTIZE between integer types (TFLM reference_ops::Requantize): in_bytes 1, 2 or 4 (int8, int16,
 * int32 input), out_bytes 1, 2 or 4; out = clamp(MBQM(in - input_zp (int32 wrap), multiplier, shift)
 * + output_zp, output type range). out may alias in when in_bytes == out_bytes.
 * float32 -> int16: as bt_quantize_f32_s8 with the int16 range. */
void bt_requantize(const bt_requant_params *p, const void *in, int32_t in_bytes, void *out, int32_t out_bytes);
void bt_quantize_f32_s16(int32_t n, float scale, int32_t zero_point, const float *in, int16_t *out);

/* DEPTHWISE_CONV_2D 16x8 (TFLM DepthwiseConvPerChannel on int16): int64 accumulator, bias64 (TFLM reads
 * an int16 depthwise bias as int64; NULL: none; conv.bias is ignored) and bt_mbqm64. Otherwise as
 * bt_depthwise_s8 (row bands; strides in elements). */
void bt_depthwise_s16(const bt_depthwise_params *p, const int64_t *bias64, const int16_t *in, int32_t in_y0,
                      int16_t *out, int32_t y0, int32_t y1);

/* FULLY_CONNECTED 16x8: with an int32 p->bias, int32 accumulator and bt_mbqm; otherwise int64, bias64
 * (or none) and bt_mbqm64 (as TFLM). Otherwise as bt_fully_connected_s8. */
void bt_fully_connected_s16(const bt_fc_params *p, const int64_t *bias64, const int16_t *in, int16_t *out);

/* MUL, AVERAGE_POOL_2D, MAX_POOL_2D, MEAN on int16: the int8 kernels' arithmetic with the int16 range
 * (strides count elements). DEQUANTIZE int16 -> float32. */
void bt_mul_s16(const bt_mul_params *p, const int16_t *a, const int16_t *b, int16_t *out);
void bt_avg_pool_s16(const bt_pool_params *p, const int16_t *in, int32_t in_y0, int16_t *out, int32_t y0,
                     int32_t y1);
void bt_max_pool_s16(const bt_pool_params *p, const int16_t *in, int32_t in_y0, int16_t *out, int32_t y0,
                     int32_t y1);
void bt_mean_s16(const bt_mean_params *p, const int16_t *in, int16_t *out);
void bt_dequantize_s16_f32(int32_t n, float scale, int32_t zero_point, const int16_t *in, float *out);

/* PAD and STRIDED_SLICE on int16 elements: as the int8 kernels, in elements. CONCATENATION, SPLIT and
 * RESHAPE are byte copies (bt_concat_s8, bt_split_s8): code generation gives their sizes in bytes. */
void bt_pad_s16(const bt_pad_params *p, const int16_t *in, int16_t *out);
void bt_strided_slice_s16(const bt_slice_params *p, const int16_t *in, int16_t *out);
/* ---------------------------------------------------------------------------- RELU (int8, int16)
 * TFLM ReluQuantized: out = clamp(MBQM(in - input_zp, multiplier, shift) + output_zp, act_min, act_max)
 * with multiplier/shift = QuantizeMultiplier(input_scale / output_scale), act_min = max(type min, output_zp),
 * act_max = type max. n dense elements; out may alias in. */
typedef struct {
  int32_t n;
  int32_t input_zp, output_zp;
  int32_t multiplier, shift;
  int32_t act_min, act_max;
} bt_relu_params;

void bt_relu_s8(const bt_relu_params *p, const int8_t *in, int8_t *out);
void bt_relu_s16(const bt_relu_params *p, const int16_t *in, int16_t *out);

/* RELU6 (int8, int16), TFLM Relu6Quantized: a clamp of the raw codes to [lo, hi] = [input zero point,
 * 6.0 quantised with the INPUT's scale] (TFLM does not requantise). n dense elements; out may alias in. */
void bt_relu6_s8(int32_t n, int32_t lo, int32_t hi, const int8_t *in, int8_t *out);
void bt_relu6_s16(int32_t n, int32_t lo, int32_t hi, const int16_t *in, int16_t *out);

/* ---------------------------------------------------------------------------- TANH (int8)
 * TFLM reference_integer_ops::Tanh: x = in - input_zero_point; x <= -radius -> -128, x >= radius -> 127,
 * else gemmlowp::tanh on Q4.27 of MBQM(x, input_multiplier, input_left_shift), rounded to Q0.7
 * (output scale 1/128, zero point 0). Same parameters as LOGISTIC. n dense elements; out may alias in. */
typedef bt_logistic_params bt_tanh_params;

void bt_tanh_s8(const bt_tanh_params *p, const int8_t *in, int8_t *out);

/* ---------------------------------------------------------------------------- PRELU (int8; int16 with int8 alpha)
 * TFLM reference_ops::BroadcastPrelu4DSlow: v = in + input_offset;
 *   v >= 0: out = MBQM(v, output_multiplier_1, output_shift_1)              (input_scale / output_scale)
 *   v <  0: out = MBQM(v * (alpha + alpha_offset), output_multiplier_2, output_shift_2)
 *                                                               (input_scale * alpha_scale / output_scale)
 *   then + output_offset, clamp to the output type's range. b.a_stride walks the input, b.b_stride alpha (0 on
 *   broadcast dimensions). out may alias in. */
typedef struct {
  int32_t input_offset, alpha_offset, output_offset;   /* -zp_in, -zp_alpha, +zp_out */
  int32_t output_multiplier_1, output_shift_1;
  int32_t output_multiplier_2, output_shift_2;
  bt_bcast4 b;
} bt_prelu_params;

void bt_prelu_s8(const bt_prelu_params *p, const int8_t *in, const int8_t *alpha, int8_t *out);
void bt_prelu_s16(const bt_prelu_params *p, const int16_t *in, const int8_t *alpha, int16_t *out);

/* ------------------------------------------------------------------- MAXIMUM / MINIMUM (int8, int16)
 * TFLM MaximumMinimumBroadcast: element-wise max / min of the raw codes (TFLM does not rescale, whatever
 * the quantisations; converters give inputs and output one). Broadcasting and strides as ADD; out may
 * alias a or b. */
void bt_maximum_s8(const bt_bcast4 *p, const int8_t *a, const int8_t *b, int8_t *out);
void bt_minimum_s8(const bt_bcast4 *p, const int8_t *a, const int8_t *b, int8_t *out);
void bt_maximum_s16(const bt_bcast4 *p, const int16_t *a, const int16_t *b, int16_t *out);
void bt_minimum_s16(const bt_bcast4 *p, const int16_t *a, const int16_t *b, int16_t *out);

/* ------------------------------------------------ TRANSPOSE / DEPTH_TO_SPACE / SPACE_TO_DEPTH
 * A permutation of up to 6 dimensions: output element (i0..i5), dense row-major in out_dims, is input
 * byte  sum_k i_k * in_stride[k]. Code generation resolves TRANSPOSE's perm and the 5-D views of
 * DEPTH_TO_SPACE / SPACE_TO_DEPTH (refops/layout.py) into this form; int16 tensors are moved as bytes
 * (one more innermost dimension of 2 bytes, model_c). out must not alias in. */
typedef struct {
  int32_t out_dims[6];
  int32_t in_stride[6];
} bt_transpose_params;

void bt_transpose_s8(const bt_transpose_params *p, const int8_t *in, int8_t *out);

/* ---------------------------------------------------------- RESIZE_NEAREST_NEIGHBOR (int8)
 * out(y, x, c) = in(src_y[y], src_x[x], c). The source indices come from TFLM's GetNearestNeighbor
 * (float32 arithmetic, align_corners / half_pixel_centers), computed by code generation, so the kernel
 * needs no float. in.c == out.c; pixel strides as bt_shape. int16 tensors are moved as bytes (c and
 * pixel strides doubled by code generation). out must not alias in. */
typedef struct {
  bt_shape in, out;
  const int32_t *src_y;             /* [out.h] */
  const int32_t *src_x;             /* [out.w] */
} bt_resize_nearest_params;

void bt_resize_nearest_s8(const bt_resize_nearest_params *p, const int8_t *in, int8_t *out);

/* ------------------------------------------------------------------ RESIZE_BILINEAR (int8)
 * TFLM reference_ops::ResizeBilinearInteger: source positions in 1/1024 pixel steps,
 *   scale10 = (1024*in + out/2) / out   (align_corners: (1024*(in-1) + (out-1)/2) / (out-1), when out > 1)
 *   pos = y*scale10 (half_pixel_centers: + scale10/2 - 512), y0 = max(pos/1024, 0),
 *   y1 = min((pos + 1023)/1024, in-1) (C division), weights 1024 - (pos - 1024*y0) and pos - 1024*y0;
 *   the same on x; out = (sum of the 4 weighted codes + (sum > 0 ? 2^19 : -2^19)) / 2^20 (C division).
 * Raw codes in and out (one quantisation). in.c == out.c; pixel strides as bt_shape; no aliasing. */
typedef struct {
  bt_shape in, out;
  int32_t scale10_h, scale10_w;
  int32_t half_pixel_centers;
} bt_resize_bilinear_params;

void bt_resize_bilinear_s8(const bt_resize_bilinear_params *p, const int8_t *in, int8_t *out);
/* ------------------------------------------------------------------------------ SVDF (int8)
 * TFLM's integer SVDF. in [batch][n_input] int8; state [batch][n_filter][n_memory] of int8 or
 * int16 (state_bits; the time weights [n_filter][n_memory] have the same type) is updated in place
 * and persists across invocations; out [batch][n_filter / rank] int8. Per invocation: the whole
 * state shifts one element towards its start; each filter's newest slot gets
 * clamp(MBQM(sum wf * (in - input_zp), mult1, shift1), state type) + state_zp narrowed to the state
 * type; out = clamp(MBQM(bias + sum over the unit's rank filters of
 * sum_m wt * (state - state_zp), mult2, shift2) + output_zp, -128, 127). No fused activation. */
typedef struct {
  int32_t batch, n_input, n_filter, n_memory, rank;
  int32_t input_zp, state_zp, output_zp;
  int32_t mult1, shift1, mult2, shift2;
  int32_t state_bits;               /* 8 or 16 */
  const int8_t *weights_feature;    /* [n_filter][n_input] */
  const void *weights_time;         /* [n_filter][n_memory], int8 or int16 as the state */
  const int32_t *bias;              /* [n_filter / rank] or 0 */
} bt_svdf_params;

void bt_svdf_s8(const bt_svdf_params *p, const int8_t *in, void *state, int8_t *out);

/* ------------------------------------------------------------ UNIDIRECTIONAL_SEQUENCE_LSTM (int8)
 * TFLM's integer LSTM (8x8->16), no CIFG/peephole/projection/layer norm. Per time step and batch
 * row, for each state element: each gate = sat16(sat16(MBQM(bias + sum (w_in - w_in_zp) *
 * (x - input_zp), in_mult, in_shift)) + sat16(MBQM(sum (w_rec - w_rec_zp) * (h - hidden_zp),
 * rec_mult, rec_shift))) on Q3.12, then TFLM's int16 LUT sigmoid (cell gate: tanh) into Q0.15;
 * cell = sat16(sat16(MBQM(f * cell, forget_*)) + sat16(MBQM(i * g, input_*))), clipped to
 * +-cell_clip when cell_clip > 0; h = clamp8(MBQM(tanh_{2^cell_power}(cell) * o, output_*) + hidden_zp).
 * in [batch][steps][n_input] ([steps][batch][n_input] when time_major); out likewise with n_state;
 * hidden [batch][n_state] int8 and cell [batch][n_state] int16 are updated in place and persist
 * across invocations. out must not overlap the other tensors (it is the step's scratch). */
typedef struct {
  int32_t in_mult, in_shift, rec_mult, rec_shift;
  int32_t w_in_zp, w_rec_zp;
  const int8_t *w_in;               /* [n_state][n_input] */
  const int8_t *w_rec;              /* [n_state][n_state] */
  const int32_t *bias;              /* [n_state] or 0 */
} bt_lstm_gate;

typedef struct {
  int32_t batch, steps, n_input, n_state, time_major;
  int32_t input_zp, hidden_zp, cell_power;
  int32_t forget_mult, forget_shift, input_mult, input_shift, output_mult, output_shift;
  int32_t cell_clip;                /* quantised; 0 = no clipping */
  bt_lstm_gate forget, input, cell, output;
  const uint16_t *sigmoid_table;    /* [256] the int16 sigmoid table (refops/activation.py sigmoid_table16) */
} bt_lstm_params;

void bt_lstm_s8(const bt_lstm_params *p, const int8_t *in, int8_t *hidden, int16_t *cell, int8_t *out);

/* ABS (TFLM elementwise.cc AbsEvalQuantized): v = |in - input_offset|; out = clamp(v + output_offset) when
 * needs_rescale is 0 (equal scales), else clamp(MBQM(v, multiplier, shift) + output_offset), type range.
 * n dense elements; out may alias in. */
typedef struct {
  int32_t n;
  int32_t input_offset, output_offset;   /* +input zero point, +output zero point */
  int32_t needs_rescale, multiplier, shift;
} bt_abs_params;

void bt_abs_s8(const bt_abs_params *p, const int8_t *in, int8_t *out);
void bt_abs_s16(const bt_abs_params *p, const int16_t *in, int16_t *out);

/* An int8 function of one int8 input as a table: out[i] = table[in[i] + 128] (int8 RSQRT, whose table code
 * generation computes with TFLM's arithmetic: refops/unary.py). n dense elements; out may alias in. */
void bt_lut_s8(int32_t n, const int8_t *table, const int8_t *in, int8_t *out);

/* int16 RSQRT (TFLM elementwise.cc RsqrtEvalQuantized<int16_t>): v = in - input zero point; v <= 0 gives 32767
 * (TFLM: 0 gives its maximum, below the zero point it fails); else 1/sqrt(v) by TFLite's
 * GetInvSqrtQuantizedMultiplierExp applied to 1 with a shift of 20, requantised by multiplier and shift - 20
 * (1 / (sqrt(input scale) * output scale)), + output zero point, clamped. n dense elements; out may alias in. */
typedef struct {
  int32_t n;
  int32_t input_zero_point, output_zero_point;
  int32_t multiplier, shift;
} bt_rsqrt_params;

void bt_rsqrt_s16(const bt_rsqrt_params *p, const int16_t *in, int16_t *out);

/* EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL (kind 0..5; TFLM comparisons.cc WithScaling):
 * each operand x is rescaled, v = MBQM((x + inputN_offset) << left_shift, inputN_multiplier, inputN_shift),
 * and out = (v1 OP v2) as a bool byte (0 or 1), broadcast as bt_bcast4 says. out may alias a (exact). */
typedef struct {
  int32_t kind, left_shift;
  int32_t input1_offset, input1_multiplier, input1_shift;   /* -zero point, scale as multiplier and shift */
  int32_t input2_offset, input2_multiplier, input2_shift;
  bt_bcast4 b;
} bt_compare_params;

void bt_compare_s8(const bt_compare_params *p, const int8_t *a, const int8_t *b, uint8_t *out);

/* ADD and the comparisons on int32 (TFLM's int32 paths, e.g. a WHILE loop's counter; reference/int32_ops.c):
 * out = clamp(a + b, act_min, act_max), the sum wrapping as two's complement (only act_min, act_max and b of
 * the params are read; TFLM applies no fused activation to int32, so code generation passes INT32_MIN/MAX); compare: (a OP b) as a bool byte, kind as bt_compare_s8 (only kind and b are read).
 * Broadcast as bt_bcast4 says; out may alias a or b (exact). */
void bt_add_s32(const bt_add_params *p, const int32_t *a, const int32_t *b, int32_t *out);
void bt_compare_s32(const bt_compare_params *p, const int32_t *a, const int32_t *b, uint8_t *out);

/* LOGICAL_AND (kind 0) / LOGICAL_OR (kind 1) of bool bytes (0 or 1), broadcast as bt_bcast4 says; LOGICAL_NOT
 * of n dense bool bytes. out may alias an input (exact). */
void bt_logical_b(int32_t kind, const bt_bcast4 *q, const uint8_t *a, const uint8_t *b, uint8_t *out);
void bt_logical_not_b(int32_t n, const uint8_t *in, uint8_t *out);

/* SELECT_V2 (TFLM select.cc): out = c ? x : y element by element (raw codes, no requantisation), each operand
 * addressed with its own strides over the 4-D dims (0 on a broadcast dimension). out may alias x or y
 * (exact), or c when out is int8. */
typedef struct {
  int32_t dims[4];
  int32_t c_stride[4], x_stride[4], y_stride[4], out_stride[4];
} bt_select_params;

void bt_select_s8(const bt_select_params *p, const uint8_t *c, const int8_t *x, const int8_t *y, int8_t *out);
void bt_select_s16(const bt_select_params *p, const uint8_t *c, const int16_t *x, const int16_t *y, int16_t *out);

/* REDUCE_MAX (kind 0) / REDUCE_MIN (kind 1) of raw codes (TFLM ReduceGeneric; the output keeps the input's
 * quantisation) over the middle axis of [outer][reduce][inner], addressed as bt_mean_params; out dense
 * [outer][inner]; SUM is bt_mean_s8/s16 with its own multiplier. */
typedef struct {
  int32_t outer, reduce, inner;
  int32_t outer_stride, reduce_stride;
  int32_t kind;
} bt_reduce_params;

void bt_reduce_minmax_s8(const bt_reduce_params *p, const int8_t *in, int8_t *out);
void bt_reduce_minmax_s16(const bt_reduce_params *p, const int16_t *in, int16_t *out);

/* SQUARED_DIFFERENCE (TFLM squared_difference.cc): each operand x is rescaled, v = MBQM((x + inputN_offset) <<
 * left_shift, inputN_multiplier, inputN_shift) (left_shift 7 on int8, 0 on int16), then out = clamp(MBQM((v1 - v2)^2,
 * output_multiplier, output_shift) + output_offset), the type's range; broadcast as bt_bcast4 says. out may alias
 * a or b (exact). */
typedef struct {
  int32_t left_shift;
  int32_t input1_offset, input1_multiplier, input1_shift;   /* -zero point, scale / (2 max scale) */
  int32_t input2_offset, input2_multiplier, input2_shift;
  int32_t output_offset, output_multiplier, output_shift;
  bt_bcast4 b;
} bt_squared_difference_params;

void bt_squared_difference_s8(const bt_squared_difference_params *p, const int8_t *a, const int8_t *b, int8_t *out);
void bt_squared_difference_s16(const bt_squared_difference_params *p, const int16_t *a, const int16_t *b,
                               int16_t *out);

/* ADD_N on int8 (TFLM reference_ops::AddN): s(x) = MBQM((x + input_offset) << left_shift, input_multiplier,
 * input_shift); out[i] = clamp(MBQM(s(0) + sum_j s(in[j][i]), output_multiplier, output_shift) + output_offset)
 * (the s(0) = s(input zero point) term is TFLM's). n dense elements per input; out may alias an input. */
typedef struct {
  int32_t n, count;
  int32_t input_offset, left_shift, input_multiplier, input_shift;
  int32_t output_offset, output_multiplier, output_shift;
} bt_add_n_params;

void bt_add_n_s8(const bt_add_n_params *p, const int8_t *const *in, int8_t *out);

/* ZEROS_LIKE on int8 (TFLM zeros_like.cc): n raw zero codes (not the zero point). */
void bt_zeros_s8(int32_t n, int8_t *out);

/* ARG_MAX (kind 0) / ARG_MIN (kind 1) on int8 (TFLM arg_min_max.cc): the dense input as [outer][axis][inner];
 * out[o][i] = the first index along axis of the largest / smallest code (int32). REVERSE_V2 and BROADCAST_TO run
 * on bt_transpose_s8 (negative or zero strides from the first byte read). */
typedef struct {
  int32_t outer, axis, inner, kind;
} bt_argminmax_params;

void bt_argminmax_s8(const bt_argminmax_params *p, const int8_t *in, int32_t *out);

/* GATHER on int8 (TFLM gather.cc, batch_dims 0): the dense input as [outer][axis_size][inner]; out[o][j] =
 * in[o][idx[j]] (inner bytes each), count indices, each in [0, axis_size) (checked at code generation). */
typedef struct {
  int32_t outer, axis_size, count, inner;
} bt_gather_params;

void bt_gather_s8(const bt_gather_params *p, const int32_t *idx, const int8_t *in, int8_t *out);

/* GATHER with computed int32 indices: bt_gather_s8 after checking every index against [0, axis_size); returns 1,
 * writing nothing, when one lies outside (TFLM fails the invocation there; model_invoke returns 1), else 0. */
int32_t bt_gather_idx_s8(const bt_gather_params *p, const int32_t *idx, const int8_t *in, int8_t *out);

/* GATHER_ND with computed int32 indices (TFLM gather_nd.cc): count tuples of nd values; tuple t picks row
 * sum t[j] * stride[j] of the dense params as [rows][inner bytes] (TFLM checks the row, not each index); returns 1,
 * writing nothing, when a row lies outside [0, rows) (TFLM fails the invocation), else 0. */
typedef struct {
  int32_t count, nd, rows, inner, stride[5];
} bt_gather_nd_params;

int32_t bt_gather_nd_s8(const bt_gather_nd_params *p, const int32_t *idx, const int8_t *in, int8_t *out);

/* FILL int8 (TFLM fill.cc): n copies of the code *value (a computed or constant scalar; raw, no requantisation). */
void bt_fill_s8(int32_t n, const int8_t *value, int8_t *out);

/* SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND on int8 (TFLM reference_ops, 3-D as NH1C): block_h x block_w blocks,
 * top/left the padding (SPACE_TO_BATCH_ND, filled with pad_value; TFLM's is uninitialised, so code generation
 * refuses padding) or the crop
 * (BATCH_TO_SPACE_ND). Dense tensors; out must not alias in. */
typedef struct {
  int32_t in_dims[4], out_dims[4];
  int32_t block_h, block_w, top, left, pad_value;
} bt_space_batch_params;

void bt_space_to_batch_s8(const bt_space_batch_params *p, const int8_t *in, int8_t *out);
void bt_batch_to_space_s8(const bt_space_batch_params *p, const int8_t *in, int8_t *out);

/* MIRROR_PAD on int8 (TFLM mirror_pad.cc), up to 4-D (right-aligned): output index o reads input index
 * o - before, reflected at each edge (offset 1: REFLECT, the edge left out; 0: SYMMETRIC). Dense; no alias. */
typedef struct {
  int32_t in_dims[4], out_dims[4], before[4];
  int32_t offset;
} bt_mirror_pad_params;

void bt_mirror_pad_s8(const bt_mirror_pad_params *p, const int8_t *in, int8_t *out);

/* BATCH_MATMUL (TFLM batch_matmul.cc): per batch (b0, b1, b2; each operand's batch stride 0 where it broadcasts)
 *   out[i][j] = clamp(MBQM(sum_k (lhs[i*lhs_row_stride + k*lhs_depth_stride] + lhs_offset)
 *                            * (rhs[k*rhs_depth_stride + j*rhs_col_stride] + rhs_offset)) + output_offset),
 * int8: int32 sums and bt_mbqm; int16 (offsets 0): int64 sums and bt_mbqm64. Strides in elements (adj_x / adj_y
 * are strides); out dense [batch][rows][cols]; out must not alias an input. */
typedef struct {
  int32_t batch[3], lhs_batch_stride[3], rhs_batch_stride[3];
  int32_t rows, cols, depth;
  int32_t lhs_row_stride, lhs_depth_stride, rhs_depth_stride, rhs_col_stride;
  int32_t lhs_offset, rhs_offset, output_offset, output_multiplier, output_shift, act_min, act_max;
} bt_batch_matmul_params;

void bt_batch_matmul_s8(const bt_batch_matmul_params *p, const int8_t *lhs, const int8_t *rhs, int8_t *out);
void bt_batch_matmul_s16(const bt_batch_matmul_params *p, const int16_t *lhs, const int16_t *rhs, int16_t *out);

/* L2_NORMALIZATION on int8 (TFLM reference_integer_ops::L2Normalization): per row of depth codes, acc = sum (x -
 * input_zp)^2, (m, s) = GetInvSqrtQuantizedMultiplierExp(acc, -1), out = clamp(MBQM(x - input_zp, m, s + 7)): codes
 * of scale 1/128, zero point 0. Dense; out may alias in (exact). ELU is bt_lut_s8 on its table; SHAPE and GATHER_ND
 * run on bt_transpose_s8 and bt_gather_s8. */
void bt_l2_norm_s8(int32_t rows, int32_t depth, int32_t input_zp, const int8_t *in, int8_t *out);

/* CUMSUM on int8 (TFLM reference_ops::CumSum): ADD_N's rescaling s(x) (bt_add_n_params' fields; n and count
 * unused); over the dense input as [before][depth][after], along depth (backwards when reverse) acc starts at s(0)
 * and out = clamp(MBQM(acc, output_multiplier, output_shift) + output_offset) after adding s(x) (before, when
 * exclusive); acc wraps as two's complement. out may alias in (exact). */
typedef struct {
  bt_add_n_params q;
  int32_t before, depth, after, exclusive, reverse;
} bt_cumsum_params;

void bt_cumsum_s8(const bt_cumsum_params *p, const int8_t *in, int8_t *out);

/* EMBEDDING_LOOKUP int8 -> int8 (TFLM embedding_lookup.cc): out row i = table row ids[i] (row_bytes bytes), count
 * ids; an id outside [0, rows) gives a row of code 0 (TFLM fails the invocation there). */
void bt_embedding_lookup_s8(int32_t count, int32_t rows, int32_t row_bytes, const int32_t *ids, const int8_t *table,
                            int8_t *out);

/* CAST (TFLM cast.cc; refops/cast.py): n values of in_type converted to out_type (BT_TYPE_*: TFLite's type codes),
 * no requantisation. An int8/int16/int32/bool input keeps its value modulo 2^bits of the output (bool: 0 or 1); a
 * float32 input is truncated toward zero and saturated to the output's range, NaN 0. Outputs: int8, int16,
 * int32. out may start where in does. */
#define BT_TYPE_FLOAT32 0
#define BT_TYPE_INT32 2
#define BT_TYPE_BOOL 6
#define BT_TYPE_INT16 7
#define BT_TYPE_INT8 9
void bt_cast(int32_t n, int32_t in_type, int32_t out_type, const void *in, void *out);

/* LOG_SOFTMAX on int8 (TFLM reference_ops::LogSoftmaxQuantized; refops/log_softmax.py): per row of depth codes, d =
 * x - max; sum of exp(MBQM(d, input_multiplier, input_left_shift) in Q5.26) in Q12.19 over d >= diff_min; log_sum =
 * TFLite's log_x_for_x_greater_than_or_equal_to_1<5>(sum); out = clamp(RoundingDivideByPOT(q5 - log_sum, 22) + 127)
 * where d > max(diff_min - 1, MBQM(log_sum + INT32_MIN, reverse_scaling_divisor, reverse_scaling_shift)), else -128.
 * Dense; out may alias in (each row read before it is written). */
typedef struct {
  int32_t rows, depth;
  int32_t input_multiplier, input_left_shift, reverse_scaling_divisor, reverse_scaling_shift, diff_min;
} bt_log_softmax_params;

void bt_log_softmax_s8(const bt_log_softmax_params *p, const int8_t *in, int8_t *out);

/* DIV on int8 (TFLM div.cc, reference_ops::DivElementwise): v1 = a + input1_offset, v2 = b + input2_offset (both
 * negated when v2 < 0), out = clamp(RoundingDivideByPOT(SRDHM(SRDHM(v1 << headroom, 1/v2 as GetReciprocal(v2, 31)),
 * output_multiplier), headroom + recip_shift - output_shift) + output_offset, act_min, act_max). Where that shift
 * passes 31 (undefined in TFLM) it is exactly rounded (the output zero point); a zero v2 takes TFLM's wrapped
 * reciprocal (refops/div.py). output_shift <= 22. Broadcast as bt_bcast4 says; out may alias a or b (exact). */
typedef struct {
  int32_t input1_offset, input2_offset, output_offset;   /* -zp1, -zp2, +zp_out */
  int32_t output_multiplier, output_shift;               /* QuantizeMultiplier(s1 / (s2 so)) */
  int32_t act_min, act_max;
  bt_bcast4 b;
} bt_div_params;

void bt_div_s8(const bt_div_params *p, const int8_t *a, const int8_t *b, int8_t *out);

/* NEG on float32 (TFLM neg.cc, float only there): out[i] = -in[i] over n elements (between DEQUANTIZE and
 * QUANTIZE, as TensorFlow writes LayerNormalization in int8 models). out may alias in (exact). */
void bt_neg_f32(int32_t n, const float *in, float *out);

/* TFLite Micro's signal library (signal/src; refops/signal.py says the arithmetic). WINDOW: frames of wsize int16
 * values times the window, >> shift, saturated; out may alias in (exact). */
void bt_signal_window_s16(int32_t size, int32_t wsize, int32_t shift, const int16_t *w, const int16_t *in,
                          int16_t *out);

/* RFFT (int16, kiss_fftr FIXED_POINT 16): each of frames rows of in_len values, zero-padded to 2 n, gives n + 1
 * complex (re, im) int16 pairs at out + row * out_stride; factors: the n-point FFT's radix/length pairs (radix 4
 * and 2); twiddles: n Q15 (cos, sin) pairs, super_twiddles n / 2 (refops.signal.fft_twiddles). */
typedef struct {
  int32_t n, in_len, frames, out_stride, nfactors;
  const int32_t *factors;
  const int16_t *twiddles, *super_twiddles;
  int32_t inverse, in_stride; /* IRFFT: the inverse FFT, int16 values a frame of the input */
} bt_rfft_params;

void bt_signal_rfft_s16(const bt_rfft_params *p, const int16_t *in, int16_t *out);

/* ENERGY: out[i] = re^2 + im^2 (uint32) for start <= i < end, 0 elsewhere (n outputs). */
void bt_signal_energy(int32_t n, int32_t start, int32_t end, const int16_t *in, uint32_t *out);

/* FILTER_BANK: num_channels + 1 weighted sums (uint64, wrapping), each channel's unweighted sum carried into the
 * next; channel 0 is dropped (out has num_channels values). */
typedef struct {
  int32_t num_channels;
  const int16_t *weights, *unweights, *freq_starts, *weight_starts, *widths;
} bt_filter_bank_params;

void bt_signal_filter_bank(const bt_filter_bank_params *p, const uint32_t *in, uint64_t *out);

/* FILTER_BANK_SQUARE_ROOT: TFLM's rounded Sqrt64 >> shift (0 for a shift outside 0..31). FILTER_BANK_LOG:
 * Log32(in << correction_bits) scaled by out_scale, at most 32767, 0 for 0 and 1. PCAN: WideDynamicFunction gain
 * from noise, PcanShrink of (in * gain) >> snr_shift; out may alias in (exact). */
void bt_signal_fb_sqrt(int32_t n, int32_t shift, const uint64_t *in, uint32_t *out);
void bt_signal_fb_log(int32_t n, int32_t correction_bits, uint32_t out_scale, const uint32_t *in, int16_t *out);
void bt_signal_pcan(int32_t n, int32_t snr_shift, const int16_t *lut, const uint32_t *in, const uint32_t *noise,
                    uint32_t *out);

/* FILTER_BANK_SPECTRAL_SUBTRACTION: noise is the operator's state (its second output, a persistent arena buffer
 * model_init() zeroes), read and updated in place; odd channels use the alternate coefficients. */
typedef struct {
  int32_t num_channels, clamping;
  uint32_t smoothing, one_minus_smoothing, alternate_smoothing, alternate_one_minus_smoothing, min_signal_remaining;
  uint32_t smoothing_bits, spectral_subtraction_bits;
} bt_spectral_subtraction_params;

void bt_signal_spectral_subtraction(const bt_spectral_subtraction_params *p, const uint32_t *in, uint32_t *out,
                                    uint32_t *noise);

/* DELAY, OVERLAP_ADD, STACKER, FRAMER (int16): TFLite Micro's circular buffers as a state buffer of the arena
 * (model_init() zeroes it: TFLite Micro's reset state; refops/signal.py says the layout). DELAY: each row's
 * frame delayed by delay samples (state: rows x max(delay, 1)). OVERLAP_ADD: each frame added (saturated) to the
 * row's frame_size accumulator, its first step values out (state: rows x frame_size). STACKER: channels values
 * a call stacked into buffer_size, the first frame repeated left times, step_size values dropped a stack (state:
 * FIFO, count, first-frame flag). FRAMER: frames of frame_size every frame_step samples (state: rows x (capacity
 * FIFO, count - init)); an incomplete frame or stack is 0 with *valid 0 (TFLite Micro leaves it unwritten). */
void bt_signal_delay_s16(int32_t rows, int32_t frame, int32_t delay, const int16_t *in, int16_t *state,
                         int16_t *out);
void bt_signal_overlap_add_s16(int32_t rows, int32_t frames, int32_t frame_size, int32_t step, const int16_t *in,
                               int16_t *state, int16_t *out);

typedef struct {
  int32_t channels, left, buffer_size, step_size;
} bt_stacker_params;

void bt_signal_stacker_s16(const bt_stacker_params *p, const int16_t *in, int16_t *state, int16_t *out,
                           uint8_t *valid);

typedef struct {
  int32_t rows, frames, frame_size, frame_step, capacity, init;
} bt_framer_params;

void bt_signal_framer_s16(const bt_framer_params *p, const int16_t *in, int16_t *state, int16_t *out,
                          uint8_t *valid);

/* IRFFT (int16, kiss_fftri): each frame of n + 1 complex values (in_stride int16 apart) split into work (2 n
 * int16: a hidden arena buffer), then the inverse n-point FFT (p->inverse 1, the inverse tables, in_len 2 n) into
 * 2 n int16 values at out + row * out_stride. FFT_AUTO_SCALE: out = in << scale_bits, the largest shift that keeps
 * MaxAbs16's maximum (TFLM's, order-dependent when -32768 is met) in 15 bits. */
void bt_signal_irfft_s16(const bt_rfft_params *p, const int16_t *in, int16_t *work, int16_t *out);
void bt_signal_fft_auto_scale_s16(int32_t n, const int16_t *in, int16_t *out, int32_t *scale_bits);

#ifdef __cplusplus
}
#endif
#endif /* BT_KERNELS_H */
