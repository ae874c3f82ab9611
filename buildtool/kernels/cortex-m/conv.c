/* CONV_2D int8 for Cortex-M DSP (M4/M7/M33). Variants (bt_variants.h), which model.c calls directly
 * (chosen at code generation, buildtool/codegen/kernel_variants.py); bt_conv_s8 picks the same one at run time:
 *  - patches of at most BT_COL_MAX (640) values (kh*kw*c_in): the patch-matrix path of im2col.h and
 *    conv_pm.h, three output pixels (patches up to BT_COL3 = 512 values, or up to 640 when none is
 *    gathered: 1x1 without padding, c_in % 4 == 0; else, and left over, two or one) x two output channels
 *    per SMLAD step, the patch widened once per pixel (1x1 without padding reads the input pixel in place;
 *    a patch inside the image whose filter rows are whole groups of 4 values is widened from its input
 *    rows; with c_in % 4 == 0 other patches tap by tap, zeros at padding; other patches are gathered, word
 *    copies inside the image);
 *    requantisation by bt_rq2 when every channel allows it (bt_pm_rq2_ok), SSAT clamps when the upper
 *    bound is 127;
 *  - a 1x1 without padding over c_in % 4 == 0 channels, BT_COL_MAX < c_in <= 3 BT_COL_MAX, c_out >= 4: conv_1x1w.h's
 *    triples x pairs of channels over K in chunks (bt_conv_s8_1x1_wide);
 *  - other larger patches: direct convolution without scratch. For each output pixel and valid filter tap,
 *    four output channels at a time share each input word: one LDR + two SXTB16 (bytes 0,2 and,
 *    through ROR #8, bytes 1,3) + two SADD16 (input offset) per 4 input bytes, then per channel one
 *    LDR + two SXTB16 + two SMLAD (bt_dot4x4 in dsp.h); remainders in scalar code.
 * Stack: 3.75 KB on the patch-matrix path (3 columns of 640 int16, a gathered patch inside them). Same results as
 * the reference set (bt_kernels.h), same TFLite weight layout. */
#define BT_PM_SHARED 1   /* conv_pm.h: the variants' loops one small copy (calls where model.c inlines) */
#include "bt_kernels.h"
#include "requant.h"
#include "dsp.h"
#include "im2col.h"
#include "bt_variants.h"   /* and conv_pm.h: the patch-matrix loops */
#include "conv_kxk.h"       /* the shared KxK loops */
#include "conv_1x1.h"      /* bt_conv_s8_1x1_rq2_ssat: the lean shared 1x1 (code generation only) */
#include "conv_1x1w.h"     /* bt_conv_s8_1x1_wide: a 1x1 over more than BT_COL_MAX input channels */

const char *bt_kernel_set_name(void) { return "cortex-m"; }

/* acc[0..nch) += sum_i f_k[i] * (ip[i] + off), nch 1 or 4 filters spaced fstride bytes apart */
static inline void dot_n(const int8_t *ip, const int8_t *f, int32_t fstride, int32_t n, int32_t off,
                         int32_t off2, int32_t *acc, int nch) {
  const int32_t n4 = n & ~3;
  if (nch == 4) {
    if (n4) bt_dot4x4(ip, f, fstride, n4, off2, acc);
    for (int32_t i = n4; i < n; i++) {
      const int32_t xv = ip[i] + off;
      for (int k = 0; k < 4; k++) acc[k] += f[k * fstride + i] * xv;
    }
  } else {
    int32_t a0 = acc[0];
    for (int32_t i = 0; i < n4; i += 4) {
      const uint32_t x = bt_ld4(ip + i), w = bt_ld4(f + i);
      a0 = bt_smlad(bt_sxtb16(w), bt_sadd16(bt_sxtb16(x), off2), a0);
      a0 = bt_smlad(bt_sxtb16_ror8(w), bt_sadd16(bt_sxtb16_ror8(x), off2), a0);
    }
    for (int32_t i = n4; i < n; i++) a0 += f[i] * (ip[i] + off);
    acc[0] = a0;
  }
}

/* The patch-matrix variants (bt_variants.h): requantisation by bt_rq2 or not, SSAT clamps. */
void bt_conv_s8_pm_rq2_ssat(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                            int32_t y1) {
  bt_conv_pm(p, in, in_y0, out, y0, y1, 1, 2);
}

/* Doubled sums (conv_pm.h bt_rq2m): never taken by bt_conv_s8; model.c calls it for a layer whose biases code
 * generation checked (kernel_variants.py doubled_ok). */
void bt_conv_s8_pm_rq2m_ssat(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                             int32_t y1) {
  bt_conv_pm(p, in, in_y0, out, y0, y1, 2, 2);
}

/* The shared KxK convolution (conv_kxk.h): model.c's own calls only (kernel_variants.py's row states its conditions,
 * the code budget chooses it), never taken by bt_conv_s8. */
void bt_conv_s8_kxk_rq2_ssat(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                             int32_t y1) {
  bt_conv_kxk(p, in, in_y0, out, y0, y1);
}

void bt_conv_s8_pm_rq2_ssat_lo(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                               int32_t y1) {
  bt_conv_pm(p, in, in_y0, out, y0, y1, 1, 1);
}

void bt_conv_s8_pm_rq2(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                       int32_t y1) {
  bt_conv_pm(p, in, in_y0, out, y0, y1, 1, 0);
}

void bt_conv_s8_pm(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1) {
  bt_conv_pm(p, in, in_y0, out, y0, y1, 0, 0);
}

/* Direct convolution (no scratch): patches over BT_COL_MAX values or fewer than 4 output channels. */
void bt_conv_s8_direct(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                       int32_t y1) {
  const int32_t cin = p->in.c, cout = p->out.c, kh = p->kh, kw = p->kw;
  const int32_t in_row = p->in.w * p->in.pixel_stride, ips = p->in.pixel_stride;
  const int32_t out_row = p->out.w * p->out.pixel_stride;
  const int32_t off = p->input_offset, off2 = bt_dup16(off);
  const int32_t fstride = kh * kw * cin;   /* bytes between output channels' filters */
  const int32_t *const bias = p->bias, *const mult = p->multiplier, *const shift = p->shift;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  if (kh == 1 && kw == 1 && p->pad_top == 0 && p->pad_left == 0) {   /* pointwise: no tap logic */
    const int32_t n4 = cin & ~3, ops = p->out.pixel_stride, step = p->stride_w * ips, ow = p->out.w;
    const int8_t *const filter = p->filter;
    for (int32_t y = y0; y < y1; y++) {
      const int8_t *ip = in + (y * p->stride_h - in_y0) * in_row;
      int8_t *o = out + (y - y0) * out_row;
      for (int32_t x = 0; x < ow; x++, ip += step, o += ops) {
        int32_t oc = 0;
        for (; oc + 4 <= cout; oc += 4) {
          int32_t acc[4];
          acc[0] = 0; acc[1] = 0; acc[2] = 0; acc[3] = 0;   /* (an initialiser becomes a memset call at -Os) */
          const int8_t *f = filter + oc * cin;
          if (n4) bt_dot4x4(ip, f, cin, n4, off2, acc);
          for (int32_t i = n4; i < cin; i++) {
            const int32_t xv = ip[i] + off;
            acc[0] += f[i] * xv; acc[1] += f[cin + i] * xv; acc[2] += f[2 * cin + i] * xv; acc[3] += f[3 * cin + i] * xv;
          }
          if (bias) { acc[0] += bias[oc]; acc[1] += bias[oc + 1]; acc[2] += bias[oc + 2]; acc[3] += bias[oc + 3]; }
          const uint32_t r0 = (uint8_t)bt_clamp(bt_mbqm_fast(acc[0], mult[oc], shift[oc]) + zp, lo, hi);
          const uint32_t r1 = (uint8_t)bt_clamp(bt_mbqm_fast(acc[1], mult[oc + 1], shift[oc + 1]) + zp, lo, hi);
          const uint32_t r2 = (uint8_t)bt_clamp(bt_mbqm_fast(acc[2], mult[oc + 2], shift[oc + 2]) + zp, lo, hi);
          const uint32_t r3 = (uint8_t)bt_clamp(bt_mbqm_fast(acc[3], mult[oc + 3], shift[oc + 3]) + zp, lo, hi);
          const uint32_t word = r0 | (r1 << 8) | (r2 << 16) | (r3 << 24);
          __builtin_memcpy(o + oc, &word, 4);   /* one store: int8 stores would alias the parameters */
        }
        for (; oc < cout; oc++) {
          int32_t a = 0;
          dot_n(ip, filter + oc * cin, cin, cin, off, off2, &a, 1);
          if (bias) a += bias[oc];
          o[oc] = (int8_t)bt_clamp(bt_mbqm_fast(a, mult[oc], shift[oc]) + zp, lo, hi);
        }
      }
    }
    return;
  }
  for (int32_t y = y0; y < y1; y++) {
    const int32_t iy0 = y * p->stride_h - p->pad_top;
    for (int32_t x = 0; x < p->out.w; x++) {
      const int32_t ix0 = x * p->stride_w - p->pad_left;
      int8_t *o = out + (y - y0) * out_row + x * p->out.pixel_stride;
      for (int32_t oc = 0; oc < cout;) {
        const int nch = (cout - oc >= 4) ? 4 : 1;
        int32_t acc[4];
        acc[0] = 0; acc[1] = 0; acc[2] = 0; acc[3] = 0;   /* (an initialiser becomes a memset call at -Os) */
        const int8_t *fbase = p->filter + oc * fstride;
        for (int32_t ky = 0; ky < kh; ky++) {
          const int32_t iy = iy0 + ky * p->dil_h;
          if ((uint32_t)iy >= (uint32_t)p->in.h) continue;
          const int8_t *irow = in + (iy - in_y0) * in_row;
          for (int32_t kx = 0; kx < kw; kx++) {
            const int32_t ix = ix0 + kx * p->dil_w;
            if ((uint32_t)ix >= (uint32_t)p->in.w) continue;
            dot_n(irow + ix * ips, fbase + (ky * kw + kx) * cin, fstride, cin, off, off2, acc, nch);
          }
        }
        for (int k = 0; k < nch; k++) {
          int32_t a = acc[k];
          if (bias) a += bias[oc + k];
          o[oc + k] = (int8_t)bt_clamp(bt_mbqm_fast(a, mult[oc + k], shift[oc + k]) + zp, lo, hi);
        }
        oc += nch;
      }
    }
  }
}

typedef void (*conv_fn)(const bt_conv_params *, const int8_t *, int32_t, int8_t *, int32_t, int32_t);
static const conv_fn conv_variants[] = {bt_conv_s8_pm_rq2_ssat, bt_conv_s8_pm_rq2_ssat_lo, bt_conv_s8_pm_rq2,
                                        bt_conv_s8_pm, bt_conv_s8_direct, bt_conv_s8_1x1_wide};
static const char *const conv_names[] = {"bt_conv_s8_pm_rq2_ssat", "bt_conv_s8_pm_rq2_ssat_lo", "bt_conv_s8_pm_rq2",
                                         "bt_conv_s8_pm", "bt_conv_s8_direct", "bt_conv_s8_1x1_wide"};

/* Index in conv_variants of the variant for p (buildtool/codegen/kernel_variants.py states the same rules). */
static int conv_variant(const bt_conv_params *p) {
  if (p->kh * p->kw * p->in.c > BT_COL_MAX || p->out.c < 4) return bt_1x1w_ok(p) ? 5 : 4;
  if (!bt_pm_rq2_ok(p->multiplier, p->shift, p->out.c)) return 3;
  if (p->act_max != 127) return 2;
  return p->act_min == -128 ? 0 : 1;
}

const char *bt_conv_s8_variant(const bt_conv_params *p) { return conv_names[conv_variant(p)]; }

void bt_conv_s8(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1) {
  conv_variants[conv_variant(p)](p, in, in_y0, out, y0, y1);
}
