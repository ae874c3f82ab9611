/* DEPTHWISE_CONV_2D int8 for the host (plain C99 that gcc -O2 vectorises; see host_block.h), depth
 * multiplier 1; other multipliers and the in-place variant use the reference code (included below
 * under another name). Per output pixel the valid tap range is computed once (no per-tap bounds
 * checks), then a block of 16 contiguous channels accumulates w * (x + input_offset) over those taps
 * in int32 lanes (blocks outermost: the block's requantisation parameters are prepared once); the
 * last channels (fewer than 16) take a scalar loop each. */
#include "bt_kernels.h"
#include "host_block.h"

#define bt_depthwise_s8 bt_ref_depthwise_generic_s8
#include "../reference/depthwise.c"
#undef bt_depthwise_s8

/* valid taps [k0, k1) of a window starting at i0 (step d, k taps) inside [0, n) */
static void tap_range(int32_t i0, int32_t d, int32_t k, int32_t n, int32_t *k0, int32_t *k1) {
  int32_t a = 0, b = k;
  while (a < k && i0 + a * d < 0) a++;
  while (b > a && i0 + (b - 1) * d >= n) b--;
  *k0 = a;
  *k1 = b;
}

/* Channels [c, c + BT_HB) of one output pixel: input window at ip, filter at f (both at the first
 * valid tap, channel c), nky x nkx valid taps. */
static inline void dw_block(const bt_conv_params *p, const int8_t *ip, const int8_t *f, int32_t nky, int32_t nkx,
                            int32_t c, const bt_hb_rq *rq, int8_t *o) {
  const int32_t c_n = p->out.c, off = p->input_offset;
  const int32_t dy = p->dil_h * p->in.w * p->in.pixel_stride, dx = p->dil_w * p->in.pixel_stride, fy = p->kw * c_n;
  int32_t acc[BT_HB];
  for (int32_t j = 0; j < BT_HB; j++) acc[j] = p->bias ? p->bias[c + j] : 0;
  for (int32_t ky = 0; ky < nky; ky++, ip += dy, f += fy) {
    const int8_t *x = ip, *w = f;
    for (int32_t kx = 0; kx < nkx; kx++, x += dx, w += c_n) bt_hb_mac_vv(acc, w, x, off);
  }
  bt_hb_store(o, acc, rq);
}

/* Channel c (one of the last, fewer than BT_HB) of one output pixel. */
static void dw_channel(const bt_conv_params *p, const int8_t *ip, const int8_t *f, int32_t nky, int32_t nkx,
                       int32_t c, int8_t *o) {
  const int32_t c_n = p->out.c, off = p->input_offset;
  const int32_t dy = p->dil_h * p->in.w * p->in.pixel_stride, dx = p->dil_w * p->in.pixel_stride, fy = p->kw * c_n;
  int32_t a = p->bias ? p->bias[c] : 0;
  for (int32_t ky = 0; ky < nky; ky++)
    for (int32_t kx = 0; kx < nkx; kx++) a += f[ky * fy + kx * c_n] * (ip[ky * dy + kx * dx] + off);
  *o = (int8_t)bt_clamp(bt_mbqm_fast(a, p->multiplier[c], p->shift[c]) + p->output_offset, p->act_min, p->act_max);
}

/* Channels [c, c + BT_HB) (or the single channel c when c + BT_HB > out.c) over rows [y0, y1). */
static void dw_rows(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1,
                    int32_t c) {
  const int32_t ips = p->in.pixel_stride, in_row = p->in.w * ips, ops = p->out.pixel_stride;
  const int block = c + BT_HB <= p->out.c;
  bt_hb_rq rq;
  if (block) bt_hb_rq_init(&rq, BT_HB, p->multiplier + c, p->shift + c, p->output_offset, p->act_min, p->act_max);
  for (int32_t y = y0; y < y1; y++) {
    const int32_t iy0 = y * p->stride_h - p->pad_top;
    int32_t ky0, ky1;
    tap_range(iy0, p->dil_h, p->kh, p->in.h, &ky0, &ky1);
    for (int32_t x = 0; x < p->out.w; x++) {
      const int32_t ix0 = x * p->stride_w - p->pad_left;
      int32_t kx0, kx1;
      tap_range(ix0, p->dil_w, p->kw, p->in.w, &kx0, &kx1);
      const int8_t *ip = in + (iy0 + ky0 * p->dil_h - in_y0) * in_row + (ix0 + kx0 * p->dil_w) * ips + c;
      const int8_t *f = p->filter + (ky0 * p->kw + kx0) * p->out.c + c;
      int8_t *o = out + (y - y0) * p->out.w * ops + x * ops + c;
      if (block) dw_block(p, ip, f, ky1 - ky0, kx1 - kx0, c, &rq, o);
      else dw_channel(p, ip, f, ky1 - ky0, kx1 - kx0, c, o);
    }
  }
}

void bt_depthwise_s8(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0,
                     int8_t *out, int32_t y0, int32_t y1) {
  if (dp->depth_multiplier != 1) {
    bt_ref_depthwise_generic_s8(dp, in, in_y0, out, y0, y1);
    return;
  }
  const int32_t c_n = dp->conv.out.c;
  int32_t c = 0;
  for (; c + BT_HB <= c_n; c += BT_HB) dw_rows(&dp->conv, in, in_y0, out, y0, y1, c);
  for (; c < c_n; c++) dw_rows(&dp->conv, in, in_y0, out, y0, y1, c);
}
