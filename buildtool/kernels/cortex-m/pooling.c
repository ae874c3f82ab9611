/* AVERAGE_POOL_2D int8 for Cortex-M DSP: TFLM reference_integer_ops::AveragePool, byte for byte. Per output
 * pixel the window clipped to the image once, then the channels four at a time: each tap's
 * word of four channels summed into two registers of int16 halves by SXTAB16 (bytes 0 and 2) and SXTAB16
 * ROR #8 (bytes 1 and 3), exact for windows of at most 256 taps (|sum| <= 128 * 256 fits an int16 half;
 * the halves add without carries between them). Each channel's sum is then rounded and divided as TFLM
 * does ((|sum| + n/2) / n, the sign put back) by a multiply-high with ceil(2^32 / n) (exact: |sum| + n/2
 * < 2^16, the error staying under 1/n), clamped, and four channels stored as one word (pl_word and pl_avg out of
 * line: a pooling layer is a few thousand cycles of a model, its code ~2.5 KB inlined). Windows of more
 * than 256 taps, MAX_POOL_2D and int16 take the reference code. */
#include "bt_kernels.h"
#include "requant.h"
#include "dsp.h"

#define bt_avg_pool_s8 bt_ref_avg_pool_s8
#include "../reference/pooling_ref.h"
#undef bt_avg_pool_s8

#define AVG_SXT_TAPS 256   /* bt_avg_pool_s8_sxt's largest window (kernel_variants.AVG_SXT_TAPS) */

/* TFLM's rounded average of a window sum s over n taps, clamped: m = ceil(2^32 / n) for n >= 2. */
static __attribute__((noinline)) uint32_t pl_avg(int32_t s, int32_t n, uint32_t m, int32_t half,
                                                            int32_t lo, int32_t hi) {
  int32_t r = s;  /* n == 1: the value itself */
  if (n >= 2) {
    const uint32_t a = (uint32_t)(s < 0 ? -s : s) + (uint32_t)half;
    const int32_t q = (int32_t)(((uint64_t)a * m) >> 32);
    r = s < 0 ? -q : q;
  } else if (n == 0) {
    r = 0;  /* as the reference (TFLM would divide by zero; valid padding never has an empty window) */
  }
  return (uint8_t)bt_clamp(r, lo, hi);
}

/* Four channels' output word from the halves' sums s02 (channels 0, 2) and s13 (1, 3). */
static __attribute__((noinline)) uint32_t pl_word(uint32_t s02, uint32_t s13, int32_t n, uint32_t m,
                                                             int32_t half, int32_t lo, int32_t hi) {
  return pl_avg((int16_t)(s02 & 0xffffu), n, m, half, lo, hi) | (pl_avg((int16_t)(s13 & 0xffffu), n, m, half, lo, hi) << 8) |
         (pl_avg((int32_t)s02 >> 16, n, m, half, lo, hi) << 16) | (pl_avg((int32_t)s13 >> 16, n, m, half, lo, hi) << 24);
}

/* Windows of at most 256 taps (model.c calls it by name for those: the reference's code not linked). */
void bt_avg_pool_s8_sxt(const bt_pool_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                        int32_t y1) {
  const int32_t ps = p->in.pixel_stride, in_row = p->in.w * ps, ops = p->out.pixel_stride;
  const int32_t out_row = p->out.w * ops, c_n = p->in.c, lo = p->act_min, hi = p->act_max;
  for (int32_t y = y0; y < y1; y++) {
    const int32_t oy = y * p->stride_h - p->pad_top;
    const int32_t fy0 = BT_MAX(0, -oy), fy1 = BT_MIN(p->filter_h, p->in.h - oy);
    for (int32_t x = 0; x < p->out.w; x++) {
      const int32_t ox = x * p->stride_w - p->pad_left;
      const int32_t fx0 = BT_MAX(0, -ox), fx1 = BT_MIN(p->filter_w, p->in.w - ox);
      int32_t ny = fy1 > fy0 ? fy1 - fy0 : 0, nx = fx1 > fx0 ? fx1 - fx0 : 0;
      const int32_t n = ny * nx, half = n / 2;
      const uint32_t m = n >= 2 ? 0xFFFFFFFFu / (uint32_t)n + 1u : 0u;
      const int8_t *win = in + (oy + fy0 - in_y0) * in_row + (ox + fx0) * ps;
      int32_t row_step = in_row;
      if (nx * ps == in_row) { nx *= ny; ny = n ? 1 : 0; }  /* whole rows: one run of taps */
      int8_t *o = out + (y - y0) * out_row + x * ops;
      int32_t c = 0;
      for (; c + 4 <= c_n; c += 4) {
        uint32_t s0 = 0, s1 = 0;
        for (int32_t fy = 0; fy < ny; fy++) {
          const int8_t *ip = win + fy * row_step + c;
          for (int32_t fx = 0; fx < nx; fx++, ip += ps) {
            const uint32_t w0 = bt_ld4(ip);
            s0 = bt_sxtab16(s0, w0); s1 = bt_sxtab16_ror8(s1, w0);
          }
        }
        const uint32_t r0 = pl_word(s0, s1, n, m, half, lo, hi);
        __builtin_memcpy(o + c, &r0, 4);
      }
      for (; c < c_n; c++) {
        int32_t s = 0;
        for (int32_t fy = 0; fy < ny; fy++) {
          const int8_t *ip = win + fy * row_step + c;
          for (int32_t fx = 0; fx < nx; fx++, ip += ps) s += *ip;
        }
        o[c] = (int8_t)pl_avg(s, n, m, half, lo, hi);
      }
    }
  }
}

void bt_avg_pool_s8(const bt_pool_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1) {
  if (p->filter_h * p->filter_w > AVG_SXT_TAPS) bt_ref_avg_pool_s8(p, in, in_y0, out, y0, y1);
  else bt_avg_pool_s8_sxt(p, in, in_y0, out, y0, y1);
}
