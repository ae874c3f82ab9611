/* fused.c -- the fused-plan tile runtime for xcore.ai: the reference runtime (included below) with the
 * one-channel calls of the channel-by-channel scheme on the vector unit (vpu.h; fx_k_box, fx_k_pulled
 * through reference/fx_hooks.h). The set's conv blocks 16 output channels with the input in vC: with
 * one output channel 15 of every 16 VLMACCRs would multiply zero rows. Here the filter is in vC
 * instead and the rows are 16 pixels: per 32-byte chunk of a filter run (a dense tap row, else a tap),
 * one VLDC and 16 VLMACCRs add that chunk's dot product to each of 16 interior pixels' accumulators
 * (a full rotation leaves pixel j in accumulator j). A one-channel depthwise is the same conv (its
 * 1HWC filter with C = 1 is an OHWI filter with O = I = 1). Per call, the filter runs are staged once
 * into aligned 32-byte chunks, zero padded, so bytes read past a run multiply zeros; the input offset
 * is folded into the start value (bias + offset * sum(filter), exact in int32); border pixels walk
 * their valid taps on the scalar unit (reference/fx_box.h); requantisation on the scalar unit
 * (bt_mbqm_fast, as the set's kernels: VLSAT cannot round as TFLM does). Same results as the
 * reference runtime, byte for byte (kernel_test.c). */
#include "bt_fused.h"
#include "requant.h"
#include "vpu.h"
#include "fx_box.h"

#define XC_KH 16        /* tap rows whose addresses an output row keeps */
#define XC_FBUF 1024    /* bytes of staged filter chunks (32 per chunk) */

/* A one-output-channel conv's per-call values: the staged filter (nrun runs of nch chunks), the run
   length, the start value, the interior columns. */
typedef struct {
  int8_t fw[XC_FBUF] __attribute__((aligned(4)));
  int32_t acc0, run, nch, dense, xi0, xi1;
} xc_conv1;

/* st = p's per-call values (p: one output channel); 0 when its filter chunks do not fit XC_FBUF. */
static int conv1_prep(const bt_conv_params *p, xc_conv1 *st) {
  const int32_t c = p->in.c, K = p->kh * p->kw * c;
  st->dense = p->dil_w == 1 && p->in.pixel_stride == c;   /* a tap row is one run of bytes */
  st->run = st->dense ? p->kw * c : c;
  st->nch = (st->run + 31) / 32;
  const int32_t nrun = K / st->run;
  if (p->kh > XC_KH || nrun * st->nch * 32 > XC_FBUF) return 0;
  int32_t fsum = 0;
  for (int32_t r = 0; r < nrun; r++)
    for (int32_t i = 0; i < st->nch * 32; i++) {
      const int8_t w = i < st->run ? p->filter[r * st->run + i] : 0;
      st->fw[(r * st->nch) * 32 + i] = w;
      fsum += w;
    }
  st->acc0 = (p->bias ? p->bias[0] : 0) + p->input_offset * fsum;
  box_interior(p, &st->xi0, &st->xi1);
  return 1;
}

/* clamp(MBQM(a) + zp) for channel 0 of p. */
static inline int8_t xc_out(const bt_conv_params *p, int32_t a) {
  return (int8_t)bt_clamp(bt_mbqm_fast(a, p->multiplier[0], p->shift[0]) + p->output_offset, p->act_min, p->act_max);
}

/* src if word aligned, else an aligned copy of its n (<= 32) bytes in buf (bytes past n: the filter's
   zero padding meets them). */
static const int8_t *xc_stage(const int8_t *src, int32_t n, int8_t *buf) {
  if (!((uintptr_t)src & 3u) && n == 32) return src;
  for (int32_t i = 0; i < 32; i++) buf[i] = i < n ? src[i] : 0;
  return buf;
}

/* n (<= 16) interior outputs of one row, pixel i's tap row ky at ipr[ky] + i*step, into o (ops apart). */
static void conv1_batch(const bt_conv_params *p, const xc_conv1 *st, const int8_t *const *ipr, int32_t step,
                        int32_t n, int8_t *o, int32_t ops) {
  static const int8_t zeros[32] __attribute__((aligned(4))) = {0};
  int8_t buf[32] __attribute__((aligned(4)));
  int32_t acc[16];
  const int32_t kw = st->dense ? 1 : p->kw, dx = p->dil_w * p->in.pixel_stride;
  const int8_t *f = st->fw;
  VCLRDR();
  for (int32_t ky = 0; ky < p->kh; ky++)
    for (int32_t kx = 0; kx < kw; kx++)
      for (int32_t ch = 0; ch < st->nch; ch++, f += 32) {
        const int32_t len = st->run - 32 * ch < 32 ? st->run - 32 * ch : 32;
        VLDC(f);
        for (int32_t k = 0; k < 16; k++) {
          const int32_t i = 15 - k;
          VLMACCR(i < n ? xc_stage(ipr[ky] + i * step + kx * dx + 32 * ch, len, buf) : zeros);
        }
      }
  bt_vpu_read_acc(acc);
  for (int32_t i = 0; i < n; i++) o[i * ops] = xc_out(p, st->acc0 + acc[i]);
}

/* Output row y of a one-output-channel conv, pixels [xa, xb): border pixels (inside: 0) or interior
   pixels (inside: 1, every tap in the input) 16 at a time. */
static void conv1_row(const bt_conv_params *p, const xc_conv1 *st, const box_src *s, int8_t *orow, int32_t y,
                      int32_t xa, int32_t xb, int inside) {
  const int32_t iy0 = y * p->stride_h - p->pad_top, ps = p->in.pixel_stride, ops = p->out.pixel_stride;
  if (!inside) {
    for (int32_t x = xa; x < xb; x++) orow[x * ops] = xc_out(p, conv1_border(p, s, iy0, x * p->stride_w - p->pad_left));
    return;
  }
  const int32_t step = p->stride_w * ps;
  const int8_t *ipr[XC_KH];
  for (int32_t x = xa; x < xb; x += 16) {
    const int32_t ix = (x * p->stride_w - p->pad_left) * ps;
    for (int32_t ky = 0; ky < p->kh; ky++) ipr[ky] = box_row(s, iy0 + ky * p->dil_h) + ix;
    conv1_batch(p, st, ipr, step, xb - x < 16 ? xb - x : 16, orow + x * ops, ops);
  }
}

#define FX_CONV1 xc_conv1
#include "../reference/fx_conv1_rows.h"

/* A depthwise on a one-channel input (in.c == out.c == 1, multiplier 1) over rows [y0, y1) into d, as
   a one-channel conv; 0 when this path does not apply. */
static int dw1(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0, const box_dst *d, int32_t y0,
               int32_t y1) {
  const bt_conv_params *p = &dp->conv;
  xc_conv1 st;
  if (p->out.c != 1 || p->in.c != 1 || dp->depth_multiplier != 1 || !conv1_prep(p, &st)) return 0;
  const box_src s = {in, in_y0, p->in.w * p->in.pixel_stride, 0, 0};
  conv1_rows(p, &st, &s, d, y0, y1);
  return 1;
}

#define FX_SET_PATHS
#include "../reference/fused_ref.h"

#include "../reference/fx_hooks.h"
