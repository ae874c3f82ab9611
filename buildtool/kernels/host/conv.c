/* CONV_2D int8 for the host (plain C99 that gcc -O2 vectorises; see host_block.h).
 * Per block of 16 output channels the filters are transposed once per call into a stack buffer
 * [tap][16] of int16 (tap = (ky, kx, ic); 32 bytes per tap, 32 KiB at most); each output
 * pixel then costs, per tap, one broadcast input byte times one 16-lane weight row. The input offset
 * enters once per output as input_offset * sum(w); an interior pixel reads the input in place (one
 * run per filter row when the input is dense, one per tap column otherwise), a border pixel gathers
 * its patch with padded taps set to the input zero point (-input_offset), which contributes exactly 0.
 * Filters with more than BT_HOST_TAPS taps take a plain scalar loop. */
#include "bt_kernels.h"
#include "host_block.h"

#define BT_HOST_TAPS 1024

const char *bt_kernel_set_name(void) { return "host"; }

/* filter rows [oc0, oc0+n) transposed into wt[t][BT_HB] (zero beyond n); base = bias + off*sum(w) */
static void transpose_block(const bt_conv_params *p, int32_t taps, int32_t oc0, int32_t n, int16_t *wt,
                            int32_t *base) {
  for (int32_t j = 0; j < BT_HB; j++) {
    const int8_t *f = p->filter + (oc0 + (j < n ? j : 0)) * taps;
    int32_t sw = 0;
    for (int32_t t = 0; t < taps; t++) {
      const int32_t v = j < n ? f[t] : 0;
      wt[t * BT_HB + j] = (int16_t)v;
      sw += v;
    }
    base[j] = (j < n && p->bias ? p->bias[oc0 + j] : 0) + p->input_offset * sw;
  }
}

/* acc += wt[t0 + i] * x[i] for i < len */
static inline void run_mac(int32_t *restrict acc, const int16_t *restrict wt, const int8_t *restrict x, int32_t len) {
  for (int32_t i = 0; i < len; i++) bt_hb_mac(acc, wt + i * BT_HB, x[i]);
}

/* The patch of output pixel (y, x) into patch[taps], padded taps = the input zero point. */
static void gather(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int32_t y, int32_t x, int8_t *patch) {
  const int32_t cin = p->in.c, ips = p->in.pixel_stride, in_row = p->in.w * ips;
  const int8_t zp = (int8_t)(-p->input_offset);
  for (int32_t ky = 0; ky < p->kh; ky++) {
    const int32_t iy = y * p->stride_h - p->pad_top + ky * p->dil_h;
    for (int32_t kx = 0; kx < p->kw; kx++, patch += cin) {
      const int32_t ix = x * p->stride_w - p->pad_left + kx * p->dil_w;
      const int inside = iy >= 0 && iy < p->in.h && ix >= 0 && ix < p->in.w;
      const int8_t *ip = in + (iy - in_y0) * in_row + ix * ips;
      for (int32_t c = 0; c < cin; c++) patch[c] = inside ? ip[c] : zp;
    }
  }
}

/* One block of output channels over output rows [y0, y1). */
static void conv_block(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                       int32_t y1, int32_t oc0, int32_t n, const int16_t *wt, const int32_t *base, int8_t *patch) {
  const int32_t cin = p->in.c, ips = p->in.pixel_stride, in_row = p->in.w * ips, kh = p->kh, kw = p->kw;
  const int32_t ops = p->out.pixel_stride, out_row = p->out.w * ops, taps = kh * kw * cin;
  bt_hb_rq rq;
  bt_hb_rq_init(&rq, n, p->multiplier + oc0, p->shift + oc0, p->output_offset, p->act_min, p->act_max);
  const int dense = ips == cin && p->dil_w == 1;
  for (int32_t y = y0; y < y1; y++) {
    const int32_t iy0 = y * p->stride_h - p->pad_top;
    const int row_in = iy0 >= 0 && iy0 + (kh - 1) * p->dil_h < p->in.h;
    for (int32_t x = 0; x < p->out.w; x++) {
      const int32_t ix0 = x * p->stride_w - p->pad_left;
      int32_t acc[BT_HB];
      for (int32_t j = 0; j < BT_HB; j++) acc[j] = base[j];
      if (row_in && ix0 >= 0 && ix0 + (kw - 1) * p->dil_w < p->in.w) {
        const int8_t *ip = in + (iy0 - in_y0) * in_row + ix0 * ips;
        const int16_t *w = wt;
        for (int32_t ky = 0; ky < kh; ky++, ip += p->dil_h * in_row) {
          if (dense) { run_mac(acc, w, ip, kw * cin); w += kw * cin * BT_HB; continue; }
          for (int32_t kx = 0; kx < kw; kx++, w += cin * BT_HB) run_mac(acc, w, ip + kx * p->dil_w * ips, cin);
        }
      } else {
        gather(p, in, in_y0, y, x, patch);
        run_mac(acc, wt, patch, taps);
      }
      bt_hb_store(out + (y - y0) * out_row + x * ops + oc0, acc, &rq);
    }
  }
}

/* Filters too large for the stack buffer: per output, a plain dot product. */
static void conv_plain(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1) {
  const int32_t cin = p->in.c, ips = p->in.pixel_stride, in_row = p->in.w * ips;
  const int32_t ops = p->out.pixel_stride, out_row = p->out.w * ops, taps = p->kh * p->kw * cin;
  for (int32_t y = y0; y < y1; y++)
    for (int32_t x = 0; x < p->out.w; x++)
      for (int32_t oc = 0; oc < p->out.c; oc++) {
        int32_t a = p->bias ? p->bias[oc] : 0;
        for (int32_t ky = 0; ky < p->kh; ky++) {
          const int32_t iy = y * p->stride_h - p->pad_top + ky * p->dil_h;
          if (iy < 0 || iy >= p->in.h) continue;
          for (int32_t kx = 0; kx < p->kw; kx++) {
            const int32_t ix = x * p->stride_w - p->pad_left + kx * p->dil_w;
            if (ix < 0 || ix >= p->in.w) continue;
            const int8_t *ip = in + (iy - in_y0) * in_row + ix * ips, *f = p->filter + oc * taps + (ky * p->kw + kx) * cin;
            for (int32_t c = 0; c < cin; c++) a += f[c] * (ip[c] + p->input_offset);
          }
        }
        out[(y - y0) * out_row + x * ops + oc] =
            (int8_t)bt_clamp(bt_mbqm_fast(a, p->multiplier[oc], p->shift[oc]) + p->output_offset, p->act_min, p->act_max);
      }
}

void bt_conv_s8(const bt_conv_params *p, const int8_t *in, int32_t in_y0,
                int8_t *out, int32_t y0, int32_t y1) {
  const int32_t taps = p->kh * p->kw * p->in.c;
  if (taps > BT_HOST_TAPS) {
    conv_plain(p, in, in_y0, out, y0, y1);
    return;
  }
  int16_t wt[BT_HOST_TAPS * BT_HB];   /* fixed size: variable-length arrays cost instructions */
  int32_t base[BT_HB];
  int8_t patch[BT_HOST_TAPS];
  for (int32_t oc0 = 0; oc0 < p->out.c; oc0 += BT_HB) {
    const int32_t n = p->out.c - oc0 < BT_HB ? p->out.c - oc0 : BT_HB;
    transpose_block(p, taps, oc0, n, wt, base);
    conv_block(p, in, in_y0, out, y0, y1, oc0, n, wt, base, patch);
  }
}
