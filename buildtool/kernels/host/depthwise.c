/* DEPTHWISE_CONV_2D int8 for the host (plain C99 that gcc -O2 vectorises; see host_block.h), depth
 * multiplier 1; other multipliers use the reference code (included below under another name); the
 * in-place variant runs this kernel per channel on a one-channel view of the copied plane. Per output pixel the valid tap range is computed once (no per-tap bounds
 * checks), then a block of 16 contiguous channels accumulates w * (x + input_offset) over those taps
 * in int32 lanes (blocks outermost: the block's requantisation parameters are prepared once); the
 * last channels (fewer than 16) take a scalar loop each. */
#include "bt_kernels.h"
#include "host_block.h"

#define bt_depthwise_s8 bt_ref_depthwise_generic_s8
#define bt_depthwise_s8_inplace bt_ref_depthwise_inplace_s8
#include "../reference/depthwise_ref.h"
#undef bt_depthwise_s8
#undef bt_depthwise_s8_inplace

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

/* One channel of a 3x3 depthwise (dilation 1) from a dense plane (in.h x in.w) into buf + c (pixel
 * stride out.pixel_stride): interior pixels with the nine weights in registers, border pixels over
 * their valid taps. */
static void dw3x3_plane(const bt_conv_params *p, int32_t c, const int8_t *plane, int8_t *buf) {
  const int32_t iw = p->in.w, ih = p->in.h, sh = p->stride_h, sw = p->stride_w, c_n = p->out.c;
  const int32_t ops = p->out.pixel_stride, off = p->input_offset;
  const int8_t *f = p->filter + c;
  const int32_t w0 = f[0], w1 = f[c_n], w2 = f[2 * c_n], w3 = f[3 * c_n], w4 = f[4 * c_n], w5 = f[5 * c_n],
                w6 = f[6 * c_n], w7 = f[7 * c_n], w8 = f[8 * c_n];
  const int32_t bias = (p->bias ? p->bias[c] : 0), base = bias + off * (w0 + w1 + w2 + w3 + w4 + w5 + w6 + w7 + w8);
  bt_hb_rq rq;
  bt_hb_rq_init(&rq, 1, p->multiplier + c, p->shift + c, p->output_offset, p->act_min, p->act_max);
  for (int32_t y = 0; y < p->out.h; y++) {
    const int32_t iy0 = y * sh - p->pad_top;
    int8_t *o = buf + y * p->out.w * ops + c;
    for (int32_t x = 0; x < p->out.w; x++, o += ops) {
      const int32_t ix0 = x * sw - p->pad_left;
      int32_t acc;
      if (iy0 >= 0 && iy0 + 2 < ih && ix0 >= 0 && ix0 + 2 < iw) {
        const int8_t *r0 = plane + iy0 * iw + ix0, *r1 = r0 + iw, *r2 = r1 + iw;
        acc = base + w0 * r0[0] + w1 * r0[1] + w2 * r0[2] + w3 * r1[0] + w4 * r1[1] + w5 * r1[2] + w6 * r2[0] +
              w7 * r2[1] + w8 * r2[2];
      } else {
        acc = bias;
        for (int32_t ky = 0; ky < 3; ky++)
          for (int32_t kx = 0; kx < 3; kx++) {
            const int32_t iy = iy0 + ky, ix = ix0 + kx;
            if (iy >= 0 && iy < ih && ix >= 0 && ix < iw) acc += f[(ky * 3 + kx) * c_n] * (plane[iy * iw + ix] + off);
          }
      }
      bt_hb_store(o, &acc, &rq);
    }
  }
}

/* In place: per channel, the input plane copied to scratch, then the output channel computed from it
 * (3x3, dilation 1: dw3x3_plane; other filters: the reference in-place code). */
void bt_depthwise_s8_inplace(const bt_depthwise_params *dp, int8_t *buf, int8_t *scratch) {
  const bt_conv_params *p = &dp->conv;
  const int32_t n = p->in.h * p->in.w, ps = p->in.pixel_stride;
  if (dp->depth_multiplier != 1 || p->kh != 3 || p->kw != 3 || p->dil_h != 1 || p->dil_w != 1) {
    bt_ref_depthwise_inplace_s8(dp, buf, scratch);
    return;
  }
  for (int32_t c = 0; c < p->out.c; c++) {
    const int8_t *src = buf + c;
    for (int32_t i = 0; i < n; i++, src += ps) scratch[i] = *src;
    dw3x3_plane(p, c, scratch, buf);
  }
}
