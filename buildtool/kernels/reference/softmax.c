/* SOFTMAX int8 -> int8 (or int16), TFLM reference_ops::Softmax (quantized) with gemmlowp fixed point. */
#include "bt_kernels.h"
#include "requant.h"

/* gemmlowp RoundingDivideByPOT for any exponent e >= 0: x / 2^e rounded to nearest, ties away from zero.
 * TFLM calls it with e = num_bits_over_unit + 31 - out_bits, which for int8 output reaches 32 once the
 * exponentials sum to 512 or more (512+ logits near the maximum); gemmlowp asserts e <= 31 there (TFLM
 * aborts; without asserts `x >> 32` is undefined: x86 and Arm give different bytes). For e >= 32 the
 * exact quotient of an int32 is in [-1/2, 1/2): it rounds to 0, except INT32_MIN / 2^32 = -1/2 -> -1. */
BT_INLINE int32_t softmax_rdbpot(int32_t x, int e) {
  if (e <= 31) return bt_rdbpot(x, e);
  return (e == 32 && x == INT32_MIN) ? -1 : 0;
}

/* exp of a logit's diff below its row's maximum, scaled (kScaledDiffIntegerBits 5), in Q0.31: out of line, so the
 * two passes of softmax_rows call one copy of gemmlowp's exp barrel (each pass inlined its own: 0.6 KB more code on
 * cortex-m4). Cold, as softmax_rows: compiled for size (a model's one SOFTMAX over a few logits, after its
 * layers: 0.12 KB less code on cortex-m4, a few instructions more a logit) */
static __attribute__((noinline, cold)) int32_t softmax_exp(const bt_softmax_params *p, int32_t diff) {
  return bt_exp_on_negative_values(bt_mbqm_gt1(diff, p->input_multiplier, p->input_left_shift), 5);
}

/* out_bits 8: int8 output (scale 1/256, zero point -128); 16: int16 (scale 1/65536, zero point -32768) */
static __attribute__((cold)) void softmax_rows(const bt_softmax_params *p, const int8_t *in, void *out, int out_bits) {
  enum { kAccumulationIntegerBits = 12 };
  const int32_t out_min = out_bits == 16 ? -32768 : -128, out_max = out_bits == 16 ? 32767 : 127;
  for (int32_t r = 0; r < p->rows; r++) {
    const int8_t *x = in + r * p->depth;
    int32_t max_in_row = -128;
    for (int32_t c = 0; c < p->depth; c++) max_in_row = BT_MAX(max_in_row, x[c]);
    /* FixedPoint<int32, 12> (each term at most 1.0 = 2^19), which GetReciprocal reads as uint32. TFLM's
     * int32 sum overflows (undefined; in practice it wraps) from 4096 logits at the maximum: in uint32 it
     * is exact below 8192 (TFLM's wrapped bytes), and saturates beyond (every probability is then below
     * 1/8192: int8 outputs all -128, as exactly). At least 2^19 (the maximum's term): headroom_plus_one
     * <= 12, so num_bits_over_unit >= 0. */
    uint32_t sum_of_exps = 0;
    for (int32_t c = 0; c < p->depth; c++) {
      const int32_t diff = (int32_t)x[c] - max_in_row;
      if (diff >= p->diff_min) {
        const int32_t e = softmax_exp(p, diff);
        /* Rescale<12> from Q0 */
        const uint32_t sum = sum_of_exps + (uint32_t)bt_srmbpot(e, -kAccumulationIntegerBits);
        sum_of_exps = sum < sum_of_exps ? UINT32_MAX : sum;
      }
    }
    /* GetReciprocal(sum_of_exps, 12, &num_bits_over_unit) */
    const int headroom_plus_one = bt_clz32(sum_of_exps);
    const int num_bits_over_unit = kAccumulationIntegerBits - headroom_plus_one;
    const int32_t shifted_sum_minus_one = (int32_t)((sum_of_exps << headroom_plus_one) - ((uint32_t)1 << 31));
    const int32_t shifted_scale = bt_one_over_one_plus_x(shifted_sum_minus_one);
    for (int32_t c = 0; c < p->depth; c++) {
      const int32_t diff = (int32_t)x[c] - max_in_row;
      int32_t v = out_min;
      if (diff >= p->diff_min) {
        const int32_t e = softmax_exp(p, diff);
        const int32_t unsat = softmax_rdbpot(bt_srdhm(shifted_scale, e), num_bits_over_unit + 31 - out_bits);
        v = bt_clamp(unsat + out_min, out_min, out_max);
      }
      if (out_bits == 16) ((int16_t *)out)[r * p->depth + c] = (int16_t)v;
      else ((int8_t *)out)[r * p->depth + c] = (int8_t)v;
    }
  }
}

void bt_softmax_s8(const bt_softmax_params *p, const int8_t *in, int8_t *out) { softmax_rows(p, in, out, 8); }

void bt_softmax_s8_s16(const bt_softmax_params *p, const int8_t *in, int16_t *out) { softmax_rows(p, in, out, 16); }

/* int16 -> int16: TFLM's table path (tables from refops/softmax.py softmax_luts16). */
BT_INLINE int32_t softmax_lut16(int32_t v, const int16_t *t) {   /* v in int16 range */
  const int32_t k = 256 + (v >> 7), slope = (int32_t)t[k + 1] - t[k];
  return t[k] + ((slope * (v & 0x7F) + 64) >> 7);
}

void bt_softmax_s16(const bt_softmax16_params *p, const int16_t *in, int16_t *out) {
  for (int32_t r = 0; r < p->rows; r++) {
    const int16_t *x = in + r * p->depth;
    int16_t *y = out + r * p->depth;
    int32_t max = -32768;
    uint32_t sum = 0;   /* exps from the table are in [0, 32767] */
    for (int32_t c = 0; c < p->depth; c++) max = x[c] > max ? x[c] : max;
    for (int32_t c = 0; c < p->depth; c++) {   /* exps kept in the output row */
      const int32_t d = bt_mbqm((int32_t)x[c] - max, p->input_multiplier, p->input_left_shift) + 32767;
      y[c] = (int16_t)softmax_lut16(bt_clamp(d, -32768, 32767), p->exp_lut);
      const uint32_t s = sum + (uint32_t)y[c];
      sum = s < sum ? UINT32_MAX : s;
    }
    /* TFLM's int32 sum overflows (undefined; then a shift by -1) from 65549 logits at the maximum (exp 0 is
     * 32762 in the table): saturated at INT32_MAX here, which gives every output 0, the exact rounding
     * (each probability is then below 1/65536, half an output step of 2^-15). */
    if (sum > INT32_MAX) sum = INT32_MAX;
    const int headroom = bt_clz32(sum);
    const int32_t norm = (int32_t)((((int64_t)sum << (headroom - 1)) + (1 << 13)) >> 14);   /* [1, 2) in Q1.15 */
    const int64_t rec = softmax_lut16(bt_clamp(norm - (1 << 15) - (1 << 16), -32768, 32767), p->rec_lut);
    const int rs = 31 - headroom;
    for (int32_t c = 0; c < p->depth; c++) {
      const int64_t v = ((int64_t)y[c] * rec + ((int64_t)1 << (rs - 1))) >> rs;
      y[c] = (int16_t)(v < 0 ? 0 : v > 32767 ? 32767 : v);
    }
  }
}
