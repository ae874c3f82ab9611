/* CONV_2D int8 for xcore.ai, written for the XS3 vector unit (vpu.h: C model on other hosts).
 * Per group of 16 output channels and output pixel: for every filter tap and 32-byte chunk of input
 * channels, VLDC loads the input chunk into vC and 16 VLMACCRs dot it with the 16 filters' matching
 * weights (TFLite OHWI rows read in place, in reverse order so channel k ends in accumulator k).
 * Padding taps use a vector of the input zero point, so every output sums all taps and the input
 * offset becomes one correction per channel: acc = sum w*x' + input_offset * sum w, where sum w is
 * computed once per group with VLMACCR against a vector of ones. The XS3 output stage (VLSAT: round
 * half up, symmetric saturation) cannot reproduce TFLM's requantisation, so the accumulators are
 * read back (VSTR/VSTD) and requantised on the scalar unit, bit-exact with the reference set.
 * Operands that are unaligned or shorter than 32 bytes are staged through aligned, zero-padded
 * buffers (on hardware, weights packed to 32-byte rows would avoid the weight copies). */
#include "bt_kernels.h"
#include "requant.h"
#include "vpu.h"

uint32_t bt_vpu_ops, bt_vpu_align_faults;

const char *bt_kernel_set_name(void) { return "xcore"; }

/* src if it is word aligned and n == 32, else an aligned zero-padded copy of its n bytes in buf */
static const int8_t *stage32(const int8_t *src, int32_t n, int8_t *buf) {
  if (n == 32 && !((uintptr_t)src & 3u)) return src;
  for (int32_t i = 0; i < 32; i++) buf[i] = i < n ? src[i] : 0;
  return buf;
}

/* 16 VLMACCRs against rows base + (oc0+15-k)*stride + off (k = 0..15), rows >= n_rows are zero */
static void macc_rows(const int8_t *base, int32_t stride, int32_t oc0, int32_t n_rows, int32_t off, int32_t n) {
  static const int8_t zeros[32] __attribute__((aligned(4))) = {0};
  int8_t buf[32] __attribute__((aligned(4)));
  for (int32_t k = 0; k < 16; k++) {
    const int32_t row = oc0 + 15 - k;
    VLMACCR(row < n_rows ? stage32(base + row * stride + off, n, buf) : zeros);
  }
}

void bt_conv_s8(const bt_conv_params *p, const int8_t *in, int32_t in_y0,
                int8_t *out, int32_t y0, int32_t y1) {
  const int32_t cin = p->in.c, cout = p->out.c, kh = p->kh, kw = p->kw;
  const int32_t ips = p->in.pixel_stride, in_row = p->in.w * ips;
  const int32_t ops = p->out.pixel_stride, out_row = p->out.w * ops;
  const int32_t off = p->input_offset, zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int32_t fstride = kh * kw * cin;
  int8_t ones[32] __attribute__((aligned(4))), zpv[32] __attribute__((aligned(4))), xb[32] __attribute__((aligned(4)));
  for (int i = 0; i < 32; i++) { ones[i] = 1; zpv[i] = (int8_t)(-off); }
  VSETC_S8();
  for (int32_t oc0 = 0; oc0 < cout; oc0 += 16) {
    const int32_t nch = cout - oc0 < 16 ? cout - oc0 : 16;
    int32_t sumw[16], acc[16];
    VCLRDR();
    VLDC(ones);
    for (int32_t ch = 0; ch < fstride; ch += 32) macc_rows(p->filter, fstride, oc0, cout, ch, fstride - ch < 32 ? fstride - ch : 32);
    bt_vpu_read_acc(sumw);
    for (int32_t y = y0; y < y1; y++) {
      const int32_t iy0 = y * p->stride_h - p->pad_top;
      for (int32_t x = 0; x < p->out.w; x++) {
        const int32_t ix0 = x * p->stride_w - p->pad_left;
        VCLRDR();
        for (int32_t ky = 0; ky < kh; ky++) {
          const int32_t iy = iy0 + ky * p->dil_h;
          for (int32_t kx = 0; kx < kw; kx++) {
            const int32_t ix = ix0 + kx * p->dil_w;
            const int valid = iy >= 0 && iy < p->in.h && ix >= 0 && ix < p->in.w;
            const int8_t *ip = valid ? in + (iy - in_y0) * in_row + ix * ips : zpv;
            for (int32_t ch = 0; ch < cin; ch += 32) {
              const int32_t n = cin - ch < 32 ? cin - ch : 32;
              VLDC(valid ? stage32(ip + ch, n, xb) : zpv);
              macc_rows(p->filter, fstride, oc0, cout, (ky * kw + kx) * cin + ch, n);
            }
          }
        }
        bt_vpu_read_acc(acc);
        int8_t *o = out + (y - y0) * out_row + x * ops + oc0;
        for (int32_t k = 0; k < nch; k++) {
          int32_t a = acc[k] + off * sumw[k];
          if (p->bias) a += p->bias[oc0 + k];
          o[k] = (int8_t)bt_clamp(bt_mbqm_fast(a, p->multiplier[oc0 + k], p->shift[oc0 + k]) + zp, lo, hi);
        }
      }
    }
  }
}
