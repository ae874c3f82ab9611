/* TRANSPOSE_CONV int8 and 16x8, TFLM reference_integer_ops::TransposeConv arithmetic computed
 * output by output (a gather instead of TFLM's scatter into a scratch buffer; see bt_kernels.h). */
#include "bt_kernels.h"
#include "requant.h"

/* acc for output (y, x, oc): the sum over taps whose input pixel lands on it. */
static int64_t tconv_sum(const bt_conv_params *p, const void *in, int wide, int32_t y, int32_t x, int32_t oc) {
  const int32_t ic_n = p->in.c;
  int64_t acc = 0;
  for (int32_t ky = 0; ky < p->kh; ky++) {
    const int32_t ty = y + p->pad_top - ky;
    if (ty < 0 || ty % p->stride_h) continue;
    const int32_t iy = ty / p->stride_h;
    if (iy >= p->in.h) continue;
    for (int32_t kx = 0; kx < p->kw; kx++) {
      const int32_t tx = x + p->pad_left - kx;
      if (tx < 0 || tx % p->stride_w) continue;
      const int32_t ix = tx / p->stride_w;
      if (ix >= p->in.w) continue;
      const int32_t at = (iy * p->in.w + ix) * ic_n;
      const int8_t *fp = p->filter + ((oc * p->kh + ky) * p->kw + kx) * ic_n;
      if (wide) {
        const int16_t *ip = (const int16_t *)in + at;
        for (int32_t ic = 0; ic < ic_n; ic++) acc += (int32_t)fp[ic] * ((int32_t)ip[ic] + p->input_offset);
      } else {
        const int8_t *ip = (const int8_t *)in + at;
        int32_t a32 = 0;
        for (int32_t ic = 0; ic < ic_n; ic++) a32 += (int32_t)fp[ic] * ((int32_t)ip[ic] + p->input_offset);
        acc += a32;
      }
    }
  }
  return acc;
}

BT_INLINE void tconv(const bt_conv_wide_params *w, const void *in, void *out, int wide) {
  const bt_conv_params *p = &w->conv;
  for (int32_t y = 0; y < p->out.h; y++)
    for (int32_t x = 0; x < p->out.w; x++)
      for (int32_t oc = 0; oc < p->out.c; oc++) {
        const int64_t acc = tconv_sum(p, in, wide, y, x, oc);
        const int32_t k = (y * p->out.w + x) * p->out.c + oc;
        if (wide) {
          int64_t a = acc + (w->bias64 ? w->bias64[oc] : (p->bias ? p->bias[oc] : 0));
          int32_t r = bt_mbqm64(a, p->multiplier[oc], p->shift[oc]) + p->output_offset;
          ((int16_t *)out)[k] = (int16_t)bt_clamp(r, p->act_min, p->act_max);
        } else {
          int32_t a = (int32_t)acc + (p->bias ? p->bias[oc] : 0);
          int32_t r = bt_mbqm(a, p->multiplier[oc], p->shift[oc]) + p->output_offset;
          ((int8_t *)out)[k] = (int8_t)bt_clamp(r, p->act_min, p->act_max);
        }
      }
}

void bt_transpose_conv_s8(const bt_conv_wide_params *p, const int8_t *in, int8_t *out) { tconv(p, in, out, 0); }
void bt_transpose_conv_s16(const bt_conv_wide_params *p, const int16_t *in, int16_t *out) { tconv(p, in, out, 1); }
