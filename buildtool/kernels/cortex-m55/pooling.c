/* AVERAGE_POOL_2D / MAX_POOL_2D int8 for Cortex-M55 Helium (MVE): TFLM reference_integer_ops::AveragePool /
 * MaxPool, byte for byte. Per output pixel the window clipped to the image once, then the channels in
 * vectors with the last one tail-predicated (VCTP: zeroing loads, predicated store):
 *  - max: sixteen channels per vector, VMAX.S8 over the window's taps from -128, the clamp on int8 lanes;
 *  - average: eight channels per vector summed as int16 (VLDRB.S16 + VADD.I16: at most 256 taps, so the
 *    sum fits), widened to two int32 halves (VMOVLB/VMOVLT), each rounded and divided as TFLM does
 *    ((|sum| + n/2) / n with the sign put back) by a multiply-high with ceil(2^32 / n) (VMULH.U32: exact for
 *    sums below 2^16 and n below 2^16, the error staying under 1/n), narrowed back in channel order
 *    (VMOVNB/VMOVNT), clamped, one VSTRB.16.
 * Windows of more than 256 taps and int16 take the reference code. */
#include "bt_kernels.h"
#include "requant.h"
#include "mve.h"

#define bt_avg_pool_s8 bt_ref_avg_pool_s8
#define bt_max_pool_s8 bt_ref_max_pool_s8
#include "../reference/pooling_ref.h"
#undef bt_avg_pool_s8
#undef bt_max_pool_s8

/* round(s / n) as TFLM's average pool: s > 0 ? (s + n/2) / n : (s - n/2) / n (C division), lane by lane;
   m = ceil(2^32 / n) (n >= 2). */
MVE_INLINE int32x4_t pool_div(int32x4_t s, uint32_t m, int32_t half) {
  const mve_pred16_t neg = vcmpltq_n_s32(s, 0);
  const uint32x4_t a = vreinterpretq_u32_s32(vaddq_n_s32(vabsq_s32(s), half));
  const int32x4_t q = vreinterpretq_s32_u32(vmulhq_u32(a, vdupq_n_u32(m)));
  return vpselq_s32(vnegq_s32(q), q, neg);
}

static void pool8(const bt_pool_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1,
                  const int is_max) {
  const int32_t ps = p->in.pixel_stride, in_row = p->in.w * ps, ops = p->out.pixel_stride;
  const int32_t out_row = p->out.w * ops, c_n = p->in.c;
  for (int32_t y = y0; y < y1; y++) {
    const int32_t oy = y * p->stride_h - p->pad_top;
    const int32_t fy0 = BT_MAX(0, -oy), fy1 = BT_MIN(p->filter_h, p->in.h - oy);
    for (int32_t x = 0; x < p->out.w; x++) {
      const int32_t ox = x * p->stride_w - p->pad_left;
      const int32_t fx0 = BT_MAX(0, -ox), fx1 = BT_MIN(p->filter_w, p->in.w - ox);
      const int32_t ny = fy1 > fy0 ? fy1 - fy0 : 0, nx = fx1 > fx0 ? fx1 - fx0 : 0, n = ny * nx;
      const int8_t *win = in + (oy + fy0 - in_y0) * in_row + (ox + fx0) * ps;
      int8_t *o = out + (y - y0) * out_row + x * ops;
      if (is_max) {
        for (int32_t c = 0; c < c_n; c += 16) {
          const mve_pred16_t pr = vctp8q((uint32_t)(c_n - c));
          int8x16_t acc = vdupq_n_s8(-128);
          for (int32_t fy = 0; fy < ny; fy++) {
            const int8_t *ip = win + fy * in_row + c;
            for (int32_t fx = 0; fx < nx; fx++, ip += ps) acc = vmaxq_s8(acc, vldrbq_z_s8(ip, pr));
          }
          acc = vminq_s8(vmaxq_s8(acc, vdupq_n_s8((int8_t)p->act_min)), vdupq_n_s8((int8_t)p->act_max));
          vstrbq_p_s8(o + c, acc, pr);
        }
        continue;
      }
      const uint32_t m = n >= 2 ? 0xFFFFFFFFu / (uint32_t)n + 1u : 0u;
      for (int32_t c = 0; c < c_n; c += 8) {
        const mve_pred16_t pr = vctp16q((uint32_t)(c_n - c));
        int16x8_t sum = vdupq_n_s16(0);
        for (int32_t fy = 0; fy < ny; fy++) {
          const int8_t *ip = win + fy * in_row + c;
          for (int32_t fx = 0; fx < nx; fx++, ip += ps) sum = vaddq_s16(sum, vldrbq_z_s16(ip, pr));
        }
        int16x8_t r = sum;   /* n == 1: the value itself; n == 0: 0 */
        if (n >= 2) {
          const int32x4_t e = pool_div(vmovlbq_s16(sum), m, n / 2), od = pool_div(vmovltq_s16(sum), m, n / 2);
          r = vmovntq_s32(vmovnbq_s32(vdupq_n_s16(0), e), od);
        }
        r = vminq_s16(vmaxq_s16(r, vdupq_n_s16((int16_t)p->act_min)), vdupq_n_s16((int16_t)p->act_max));
        vstrbq_p_s16(o + c, r, pr);
      }
    }
  }
}

void bt_avg_pool_s8(const bt_pool_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1) {
  if (p->filter_h * p->filter_w > 256) {
    bt_ref_avg_pool_s8(p, in, in_y0, out, y0, y1);
    return;
  }
  pool8(p, in, in_y0, out, y0, y1, 0);
}

void bt_max_pool_s8(const bt_pool_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1) {
  pool8(p, in, in_y0, out, y0, y1, 1);
}
