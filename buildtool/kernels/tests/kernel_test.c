/* kernel_test.c -- runs every kernel of the set under test on deterministic pseudo-random cases and
 * compares the results byte for byte with the reference set, linked next to it under the ref_bt_
 * prefix (reference files compiled a second time with -DBT_KERNEL_PREFIX_REF).
 * The fused-plan tile runtime (bt_fused.h) is checked the same way: tiles against whole tensors.
 * Prints "N passed, N failed"; the exit code is 1 when any case failed.
 *
 * Build: the set's files + the reference files (renamed) + this file, with
 *   -DBT_HOST            host program (stdio, main)
 *   otherwise            bare metal: link firmware/<arch>/ start-up + firmware/common/semihost_io.c,
 *                        which call bt_main() and provide bt_puts/bt_putu.
 *   -DBT_RVV             enable the RISC-V vector unit before running (RVV kernel set).
 *   -DBT_BENCH           first run the benchmark kernels once each between marker functions
 *                        bench_<k>_<ref|opt>_{begin,end} (for the QEMU insn-count plugin).
 */
#include <stdint.h>
#include <stddef.h>
#include "bt_kernels.h"
#include "requant.h"
#include "bt_fused.h"
#if defined __has_include
#if __has_include("bt_variants.h")
#include "bt_variants.h"   /* a set with kernel variants chosen at code generation */
#endif
#endif

/* Reference set under the ref_ prefix (same structs) */
void ref_bt_conv_s8(const bt_conv_params *, const int8_t *, int32_t, int8_t *, int32_t, int32_t);
void ref_bt_depthwise_s8(const bt_depthwise_params *, const int8_t *, int32_t, int8_t *, int32_t, int32_t);
void ref_bt_depthwise_s8_inplace(const bt_depthwise_params *, int8_t *, int8_t *);
void ref_bt_fully_connected_s8(const bt_fc_params *, const int8_t *, int8_t *);
void ref_bt_add_s8(const bt_add_params *, const int8_t *, const int8_t *, int8_t *);
void ref_bt_mul_s8(const bt_mul_params *, const int8_t *, const int8_t *, int8_t *);
void ref_bt_avg_pool_s8(const bt_pool_params *, const int8_t *, int32_t, int8_t *, int32_t, int32_t);
void ref_bt_max_pool_s8(const bt_pool_params *, const int8_t *, int32_t, int8_t *, int32_t, int32_t);
void ref_bt_mean_s8(const bt_mean_params *, const int8_t *, int8_t *);
void ref_bt_softmax_s8(const bt_softmax_params *, const int8_t *, int8_t *);
void ref_bt_logistic_s8(const bt_logistic_params *, const int8_t *, int8_t *);
void ref_bt_hard_swish_s8(const bt_hard_swish_params *, const int8_t *, int8_t *);
void ref_bt_requantize_s8(const bt_requant_params *, const int8_t *, int8_t *);
void ref_bt_quantize_f32_s8(int32_t, float, int32_t, const float *, int8_t *);
void ref_bt_dequantize_s8_f32(int32_t, float, int32_t, const int8_t *, float *);
void ref_bt_pad_s8(const bt_pad_params *, const int8_t *, int8_t *);
void ref_bt_concat_s8(const bt_concat_params *, const int8_t *const *, int8_t *);
void ref_bt_split_s8(const bt_concat_params *, const int8_t *, int8_t *const *);
void ref_bt_strided_slice_s8(const bt_slice_params *, const int8_t *, int8_t *);

#ifdef BT_SET_XCORE
#include "vpu.h"   /* xcore set: the VPU model (statistics, and its own unit test below) */
#endif

/* ------------------------------------------------------------------ platform */
#ifdef BT_HOST
#include <stdio.h>
static void bt_puts(const char *s) { fputs(s, stdout); }
static void bt_putu(uint32_t v) { printf("%u", (unsigned)v); }
int bt_main(void);
int main(void) { int rc = bt_main(); fflush(stdout); return rc; }
#else
void bt_puts(const char *s);
void bt_putu(uint32_t v);
#endif
#ifndef BT_HOST
/* GCC may emit calls to these for struct copies even in freestanding code (e.g. at -O0); the
 * kernels themselves never need them. Byte loops through volatile so they cannot become calls. */
void *memcpy(void *d, const void *s, size_t n) {
  volatile uint8_t *dd = (volatile uint8_t *)d;
  const uint8_t *ss = (const uint8_t *)s;
  for (size_t i = 0; i < n; i++) dd[i] = ss[i];
  return d;
}
void *memset(void *d, int c, size_t n) {
  volatile uint8_t *dd = (volatile uint8_t *)d;
  for (size_t i = 0; i < n; i++) dd[i] = (uint8_t)c;
  return d;
}
#endif
static void put_i(int32_t v) {
  if (v < 0) { bt_puts("-"); bt_putu((uint32_t)(-(int64_t)v)); } else bt_putu((uint32_t)v);
}

/* ------------------------------------------------------------------ buffers, rng */
#define BUF 163840
static int8_t g_in[BUF] __attribute__((aligned(16)));
static int8_t g_in2[BUF] __attribute__((aligned(16)));
static int8_t g_band[BUF] __attribute__((aligned(16)));
static int8_t g_ref[BUF] __attribute__((aligned(16)));
static int8_t g_opt[BUF] __attribute__((aligned(16)));
static int8_t g_w[65536] __attribute__((aligned(16)));
static int32_t g_bias[512], g_mult[512], g_shift[512];

static uint32_t rng = 0x12345678u;
static uint32_t rnd(void) { rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5; return rng; }
static int32_t ri(int32_t lo, int32_t hi) { return lo + (int32_t)(rnd() % (uint32_t)(hi - lo + 1)); }
static void fill(int8_t *p, int32_t n) { for (int32_t i = 0; i < n; i++) p[i] = (int8_t)rnd(); }
static void copy(int8_t *d, const int8_t *s, int32_t n) { for (int32_t i = 0; i < n; i++) d[i] = s[i]; }
static int ilog2(uint32_t x) { int r = 0; while (x > 1) { x >>= 1; r++; } return r; }

static int passed, failed;

/* The kernel variants the dispatchers took (sets with bt_variants.h), printed at the end: the tests
 * check that every variant of the set's table (buildtool/kernel_variants.py) ran against the reference. */
static const char *g_variants[16];
static int g_nvariants;
static inline void note_variant(const char *name) {
  for (int i = 0; i < g_nvariants; i++)
    if (g_variants[i] == name) return;
  if (g_nvariants < 16) g_variants[g_nvariants++] = name;
}
#if defined BT_VARIANTS_CORTEX_M || defined BT_VARIANTS_RISCV
#define NOTE_CONV(p) note_variant(bt_conv_s8_variant(p))
#else
#define NOTE_CONV(p) ((void)(p))
#endif
#ifdef BT_VARIANTS_CORTEX_M
#define NOTE_DW(p) note_variant(bt_depthwise_s8_variant(p))
#define NOTE_FC(p) note_variant(bt_fully_connected_s8_variant(p))
#else
#define NOTE_DW(p) ((void)(p))
#define NOTE_FC(p) ((void)(p))
#endif
static void check(const char *name, int32_t case_no, const int8_t *a, const int8_t *b, int32_t n) {
  for (int32_t i = 0; i < n; i++) {
    if (a[i] != b[i]) {
      failed++;
      bt_puts("FAIL "); bt_puts(name); bt_puts(" case "); put_i(case_no); bt_puts(" byte "); put_i(i);
      bt_puts(" ref "); put_i(a[i]); bt_puts(" got "); put_i(b[i]); bt_puts("\n");
      return;
    }
  }
  passed++;
}

/* random requantisation parameters for accumulators of about 2^acc_bits */
static void rand_quant(int32_t n, int acc_bits) {
  for (int32_t i = 0; i < n; i++) {
    g_mult[i] = (int32_t)(0x40000000u + (rnd() & 0x3fffffffu));
    g_shift[i] = -(acc_bits - 7) + ri(-2, 2);
    if (g_shift[i] > 10) g_shift[i] = 10;
    if (g_shift[i] < -31) g_shift[i] = -31;
  }
}
static void rand_act(int32_t *lo, int32_t *hi, int32_t out_off) {
  switch (rnd() % 4) {
    case 0: *lo = out_off < -128 ? -128 : out_off; *hi = 127; break;   /* RELU */
    case 1: *lo = ri(-128, 0); *hi = ri(*lo, 127); break;
    default: *lo = -128; *hi = 127;
  }
}

/* ------------------------------------------------------------------ conv / depthwise / pool */
static int32_t out_size(int32_t in, int32_t k, int32_t s, int32_t d, int same) {
  int32_t eff = (k - 1) * d + 1;
  return same ? (in + s - 1) / s : (in - eff + s) / s;
}
static int32_t pad_before(int32_t in, int32_t k, int32_t s, int32_t d, int same) {
  if (!same) return 0;
  int32_t out = out_size(in, k, s, d, same), eff = (k - 1) * d + 1;
  int32_t t = (out - 1) * s + eff - in;
  return t > 0 ? t / 2 : 0;
}

typedef enum { K_CONV, K_DW, K_AVG, K_MAX } spatial_kind;

typedef struct {
  spatial_kind kind;
  bt_depthwise_params dw;   /* dw.conv used for conv too */
  bt_pool_params pool;
} spatial_case;

static void run_spatial_opt(const spatial_case *c, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1) {
  switch (c->kind) {
    case K_CONV: NOTE_CONV(&c->dw.conv); bt_conv_s8(&c->dw.conv, in, in_y0, out, y0, y1); break;
    case K_DW: NOTE_DW(&c->dw); bt_depthwise_s8(&c->dw, in, in_y0, out, y0, y1); break;
    case K_AVG: bt_avg_pool_s8(&c->pool, in, in_y0, out, y0, y1); break;
    case K_MAX: bt_max_pool_s8(&c->pool, in, in_y0, out, y0, y1); break;
  }
}
static void run_spatial_ref(const spatial_case *c, const int8_t *in, int8_t *out) {
  const bt_shape *o = c->kind <= K_DW ? &c->dw.conv.out : &c->pool.out;
  switch (c->kind) {
    case K_CONV: ref_bt_conv_s8(&c->dw.conv, in, 0, out, 0, o->h); break;
    case K_DW: ref_bt_depthwise_s8(&c->dw, in, 0, out, 0, o->h); break;
    case K_AVG: ref_bt_avg_pool_s8(&c->pool, in, 0, out, 0, o->h); break;
    case K_MAX: ref_bt_max_pool_s8(&c->pool, in, 0, out, 0, o->h); break;
  }
}

/* Runs the reference over the whole tensor, the set under test in random row bands (each with
 * only its needed input rows copied to a separate band buffer), compares every output byte. */
static void spatial_check(const char *name, int32_t case_no, const spatial_case *c) {
  const bt_shape in = c->kind <= K_DW ? c->dw.conv.in : c->pool.in;
  const bt_shape out = c->kind <= K_DW ? c->dw.conv.out : c->pool.out;
  int32_t kh, sh, dh, pt;
  if (c->kind <= K_DW) { kh = c->dw.conv.kh; sh = c->dw.conv.stride_h; dh = c->dw.conv.dil_h; pt = c->dw.conv.pad_top; }
  else { kh = c->pool.filter_h; sh = c->pool.stride_h; dh = 1; pt = c->pool.pad_top; }
  const int32_t in_row = in.w * in.pixel_stride, out_row = out.w * out.pixel_stride;
  const int32_t out_bytes = out.h * out_row + 8;
  fill(g_ref, out_bytes);
  copy(g_opt, g_ref, out_bytes);
  run_spatial_ref(c, g_in, g_ref);
  int32_t y = 0;
  while (y < out.h) {
    int32_t y1 = (rnd() % 3 == 0) ? out.h : y + ri(1, out.h - y);
    int32_t r0 = y * sh - pt, r1 = (y1 - 1) * sh - pt + (kh - 1) * dh + 1;
    if (r0 < 0) r0 = 0;
    if (r1 > in.h) r1 = in.h;
    if (r1 < r0) r1 = r0;
    fill(g_band, (r1 - r0 + 1) * in_row + 16);
    copy(g_band, g_in + r0 * in_row, (r1 - r0) * in_row);
    run_spatial_opt(c, g_band, r0, g_opt + y * out_row, y, y1);
    y = y1;
  }
  check(name, case_no, g_ref, g_opt, out_bytes);
}

static void gen_conv(bt_conv_params *p, int32_t h, int32_t w, int32_t cin, int32_t cout, int32_t kh, int32_t kw,
                     int32_t sh, int32_t sw, int32_t dh, int32_t dw_, int same, int32_t in_ps, int32_t out_ps, int is_dw) {
  p->in = (bt_shape){h, w, cin, in_ps};
  p->kh = kh; p->kw = kw; p->stride_h = sh; p->stride_w = sw; p->dil_h = dh; p->dil_w = dw_;
  p->out = (bt_shape){out_size(h, kh, sh, dh, same), out_size(w, kw, sw, dw_, same), cout, out_ps};
  p->pad_top = pad_before(h, kh, sh, dh, same);
  p->pad_left = pad_before(w, kw, sw, dw_, same);
  p->input_offset = ri(-127, 128);
  p->output_offset = ri(-128, 127);
  rand_act(&p->act_min, &p->act_max, p->output_offset);
  int32_t taps = kh * kw * (is_dw ? 1 : cin);
  int32_t fsize = is_dw ? kh * kw * cout : cout * kh * kw * cin;
  fill(g_w, fsize);
  p->filter = g_w;
  for (int32_t i = 0; i < cout; i++) g_bias[i] = ri(-20000, 20000);
  p->bias = (rnd() % 4) ? g_bias : NULL;
  rand_quant(cout, 14 + ilog2((uint32_t)taps) / 2);
  p->multiplier = g_mult; p->shift = g_shift;
}

static void test_conv(void) {
  for (int32_t t = 0; t < 60; t++) {
    spatial_case c; c.kind = K_CONV;
    int32_t kh = ri(1, 3) * 2 - 1, kw = kh;
    if (t % 5 == 1) { kh = 1; kw = 3; }
    if (t % 5 == 2) { kh = 1; kw = 1; }
    int32_t cin = (t % 4 == 0) ? ri(1, 5) : ri(1, 24), cout = ri(1, 20);
    if (t % 7 == 0) { cin = 4 * ri(1, 8); cout = 4 * ri(1, 6); }
    if (t % 10 == 9) { cin = ri(33, 72); cout = ri(17, 40); kh = kw = (t & 1) ? 1 : 3; }   /* several chunks/groups */
    int32_t s = ri(1, 3), d = (t % 6 == 5) ? 2 : 1;
    int same = (int)(rnd() & 1);
    int32_t h = ri(kh + (kh - 1) * (d - 1), 11), w = ri(kw + (kw - 1) * (d - 1), 11);
    int32_t ips = cin + ((t % 3 == 0) ? ri(1, 5) : 0), ops = cout + ((t % 3 == 1) ? ri(1, 5) : 0);
    gen_conv(&c.dw.conv, h, w, cin, cout, kh, kw, s, ri(1, 3), d, d, same, ips, ops, 0);
    c.dw.depth_multiplier = 1;
    if (c.dw.conv.out.h <= 0 || c.dw.conv.out.w <= 0) continue;
    fill(g_in, h * w * ips + 16);
    spatial_check("conv", t, &c);
  }
}

/* Convolution variants of the optimised sets (cortex-m: the patch-matrix path of im2col.h and its
 * bt_rq2 requantisation): input depths 1, 3, 5, 17 and random, odd and even pixel and channel counts
 * (1 included), rectangular filters (10x4 as a keyword-spotting stem), strides, dilations, both
 * paddings, random offsets, pixel-strided views, a left shift on one channel (the generic
 * requantisation) and patches just over the 640-value column limit (the direct path). */
static void test_conv_variants(void) {
  static const int32_t depths[] = {1, 3, 5, 17};
  for (int32_t t = 0; t < 64; t++) {
    spatial_case c; c.kind = K_CONV;
    int32_t cin = t < 32 ? depths[t % 4] : ri(1, 40), cout = (t % 5 == 0) ? 1 : ri(1, 24);
    int32_t kh = (t % 4 == 3) ? 1 : ri(1, 3) * 2 - 1, kw = (t % 8 == 5) ? ri(1, 4) : kh;
    if (t % 12 == 11) { kh = 10; kw = 4; }
    if (t % 16 == 15) { cin = ri(72, 80); kh = kw = 3; }
    const int32_t d = (t % 10 == 7) ? 2 : 1;
    int32_t h = ri(kh + (kh - 1) * (d - 1), 13), w = ri(kw + (kw - 1) * (d - 1), 13);
    int32_t ips = cin + ((t % 3 == 0) ? ri(1, 5) : 0), ops = cout + ((t % 3 == 1) ? ri(1, 5) : 0);
    gen_conv(&c.dw.conv, h, w, cin, cout, kh, kw, ri(1, 3), ri(1, 3), d, d, (int)(rnd() & 1), ips, ops, 0);
    c.dw.depth_multiplier = 1;
    if (t % 9 == 4) g_shift[ri(0, cout - 1)] = ri(0, 2);
    if (c.dw.conv.out.h <= 0 || c.dw.conv.out.w <= 0) continue;
    fill(g_in, h * w * ips + 16);
    spatial_check("conv_variants", t, &c);
  }
}

/* bt_rq2 and bt_rq2s (requant.h; the cortex-m and riscv sets) against bt_mbqm wherever bt_rq2_ok allows it (TFLite
 * multipliers, right shifts) */
static void test_rq2(void) {
  static const int32_t edge[] = {0, 1, -1, 2, -2, 3, -3, 127, -128, 1 << 20, -(1 << 20), (1 << 30) - 1, 1 << 30,
                                 -(1 << 30), INT32_MAX, INT32_MIN, INT32_MIN + 1, INT32_MAX - 1, 12345678, -12345678};
  static const int32_t mults[] = {0, 1 << 30, (1 << 30) + 1, INT32_MAX, INT32_MAX - 1, 1518500250};
  int32_t bad = 0;
  for (uint32_t j = 0; j < sizeof mults / sizeof mults[0]; j++)
    for (int32_t s = -31; s <= -2; s++) {
      if (!bt_rq2_ok(&mults[j], &s, 1)) bad++;
      for (uint32_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
        if (bt_mbqm(edge[i], mults[j], s) != bt_rq2(edge[i], mults[j], bt_rq2_p2(s), bt_rq2_e1(s)) ||
            bt_mbqm(edge[i], mults[j], s) != bt_rq2s(edge[i], mults[j], -s - 2)) bad++;
    }
  for (int32_t t = 0; t < 20000; t++) {
    const int32_t x = (int32_t)rnd() >> ri(0, 30), m = (int32_t)(0x40000000u | (rnd() & 0x3fffffffu)), s = ri(-31, -2);
    const int32_t want = bt_mbqm(x, m, s);
    if (want != bt_rq2(x, m, bt_rq2_p2(s), bt_rq2_e1(s)) || want != bt_rq2s(x, m, -s - 2)) bad++;
  }
  const int32_t m_small = (1 << 30) - 1, m_neg = -(1 << 30), s_pos = -1, s_neg = -2, s_big = -32;
  if (bt_rq2_ok(&m_small, &s_neg, 1) || bt_rq2_ok(&m_neg, &s_neg, 1) || bt_rq2_ok(&mults[1], &s_pos, 1) ||
      bt_rq2_ok(&mults[1], &s_big, 1)) bad++;
  if (bad) { failed++; bt_puts("FAIL bt_rq2 mismatches: "); put_i(bad); bt_puts("\n"); }
  else passed++;
}

static void test_depthwise(void) {
  for (int32_t t = 0; t < 60; t++) {
    spatial_case c; c.kind = K_DW;
    int32_t k = ri(1, 3) * 2 - 1, kw = k;
    if (t % 6 == 1) kw = 1;
    int32_t dm = (t % 5 == 0) ? ri(2, 3) : 1;
    int32_t cin = (t % 4 == 0) ? 4 * ri(1, 12) : ri(1, 40), cout = cin * dm;
    int32_t s = ri(1, 2), d = (t % 7 == 3) ? 2 : 1;
    int same = (int)(rnd() & 1);
    int32_t h = ri(k + (k - 1) * (d - 1), 12), w = ri(kw + (kw - 1) * (d - 1), 12);
    int32_t ips = cin + ((t % 3 == 0) ? ri(1, 5) : 0), ops = cout + ((t % 3 == 1) ? ri(1, 5) : 0);
    gen_conv(&c.dw.conv, h, w, cin, cout, k, kw, s, s, d, d, same, ips, ops, 1);
    c.dw.depth_multiplier = dm;
    if (t % 8 == 6) g_shift[ri(0, cout - 1)] = ri(-1, 1);   /* not bt_rq2: the generic requantisation */
    if (c.dw.conv.out.h <= 0 || c.dw.conv.out.w <= 0) continue;
    fill(g_in, h * w * ips + 16);
    spatial_check("depthwise", t, &c);
  }
  /* in-place: output written over its own input (from case 25 on, few channels and tall images: the
   * scratch plane holds several output rows, so an optimised set may go row by row) */
  for (int32_t t = 0; t < 40; t++) {
    bt_depthwise_params dp;
    int32_t k = ri(1, 2) * 2 + 1, cin = t < 25 ? ri(1, 33) : ri(1, 5), ps = cin + ((t & 1) ? ri(1, 3) : 0);
    int32_t h = t < 25 ? ri(k, 10) : ri(2 * ps, 24), w = ri(k, 10), s = ri(1, 2);
    gen_conv(&dp.conv, h, w, cin, cin, k, k, s, s, 1, 1, (int)(rnd() & 1), ps, ps, 1);
    dp.depth_multiplier = 1;
    const int32_t n = h * w * ps;
    fill(g_in, n + 16);
    copy(g_ref, g_in, n + 16);
    copy(g_opt, g_in, n + 16);
    ref_bt_depthwise_s8(&dp, g_in, 0, g_ref, 0, dp.conv.out.h);
    fill(g_band, h * w);
    bt_depthwise_s8_inplace(&dp, g_opt, g_band);
    check("depthwise_inplace", t, g_ref, g_opt, n + 16);
  }
}

static void test_pool(void) {
  for (int32_t t = 0; t < 40; t++) {
    spatial_case c; c.kind = (t & 1) ? K_MAX : K_AVG;
    bt_pool_params *p = &c.pool;
    int32_t fh = ri(1, 4), fw = ri(1, 4), sh = ri(1, 3), sw = ri(1, 3), cc = ri(1, 30);
    int same = (int)(rnd() & 1);
    int32_t h = ri(fh, 12), w = ri(fw, 12);
    if (t % 8 == 0) { fh = h; fw = w; sh = sw = 1; same = 0; }   /* global pooling */
    int32_t ips = cc + ((t % 3 == 0) ? ri(1, 4) : 0), ops = cc + ((t % 3 == 1) ? ri(1, 4) : 0);
    p->in = (bt_shape){h, w, cc, ips};
    p->out = (bt_shape){out_size(h, fh, sh, 1, same), out_size(w, fw, sw, 1, same), cc, ops};
    p->filter_h = fh; p->filter_w = fw; p->stride_h = sh; p->stride_w = sw;
    p->pad_top = pad_before(h, fh, sh, 1, same); p->pad_left = pad_before(w, fw, sw, 1, same);
    rand_act(&p->act_min, &p->act_max, ri(-128, 127));
    fill(g_in, h * w * ips + 16);
    spatial_check((t & 1) ? "max_pool" : "avg_pool", t, &c);
  }
}

/* ------------------------------------------------------------------ fully connected */
static void test_fc(void) {
  for (int32_t t = 0; t < 40; t++) {
    bt_fc_params p;
    p.n_in = (t % 3 == 0) ? 4 * ri(1, 80) : ri(1, 300);
    p.n_out = ri(1, 40); p.batches = ri(1, 3);
    p.input_offset = ri(-127, 128); p.output_offset = ri(-128, 127);
    p.filter_offset = (t % 5 == 4) ? ri(-3, 3) : 0;
    rand_act(&p.act_min, &p.act_max, p.output_offset);
    fill(g_w, p.n_in * p.n_out);
    p.weights = g_w;
    for (int32_t i = 0; i < p.n_out; i++) g_bias[i] = ri(-30000, 30000);
    p.bias = (rnd() % 4) ? g_bias : NULL;
    p.per_channel = (int32_t)(rnd() & 1);
    rand_quant(p.n_out, 14 + ilog2((uint32_t)p.n_in) / 2);
    p.multiplier = g_mult; p.shift = g_shift;
    fill(g_in, p.n_in * p.batches);
    int32_t nout = p.n_out * p.batches + 8;
    fill(g_ref, nout); copy(g_opt, g_ref, nout);
    ref_bt_fully_connected_s8(&p, g_in, g_ref);
    NOTE_FC(&p);
    bt_fully_connected_s8(&p, g_in, g_opt);
    check("fully_connected", t, g_ref, g_opt, nout);
  }
}

/* Fully connected at the sizes around the optimised sets' row and input blocks: n_in and n_out each
 * 1, 3, 5 and 17, per-channel and per-tensor, with and without bias, extreme input offsets, and one
 * output whose multiplier or shift bt_rq2 does not take (the generic requantisation). */
static void test_fc_sizes(void) {
  static const int32_t sizes[] = {1, 3, 5, 17};
  static const int32_t offs[] = {-127, 128, 0, 5};
  for (int32_t t = 0; t < 16; t++) {
    bt_fc_params p;
    p.n_in = sizes[t % 4]; p.n_out = sizes[t / 4]; p.batches = 1 + (t % 3 == 2);
    p.input_offset = offs[(t + t / 4) % 4]; p.output_offset = ri(-128, 127); p.filter_offset = 0;
    rand_act(&p.act_min, &p.act_max, p.output_offset);
    fill(g_w, p.n_in * p.n_out); p.weights = g_w;
    for (int32_t j = 0; j < p.n_out; j++) g_bias[j] = ri(-30000, 30000);
    p.bias = (t % 5 == 1) ? NULL : g_bias;
    p.per_channel = (t % 2 == 0);
    rand_quant(p.n_out, 14 + ilog2((uint32_t)p.n_in) / 2);
    if (t % 4 == 3) g_shift[ri(0, p.n_out - 1)] = ri(-1, 1);
    if (t % 8 == 5) g_mult[ri(0, p.n_out - 1)] = ri(1, (1 << 30) - 1);
    p.multiplier = g_mult; p.shift = g_shift;
    fill(g_in, p.n_in * p.batches);
    const int32_t nout = p.n_out * p.batches + 8;
    fill(g_ref, nout); copy(g_opt, g_ref, nout);
    ref_bt_fully_connected_s8(&p, g_in, g_ref);
    NOTE_FC(&p);
    bt_fully_connected_s8(&p, g_in, g_opt);
    check("fc_sizes", t, g_ref, g_opt, nout);
  }
}

/* ------------------------------------------------------------------ add / mul */
static void rand_bcast(bt_bcast4 *q, int alias) {
  int32_t d[4] = {ri(1, 2), ri(1, 5), ri(1, 6), ri(1, 24)};
  uint32_t bmask = alias ? 0 : rnd() & 15, amask = (alias || (rnd() & 1)) ? 0 : rnd() & 15;
  int32_t extra = (rnd() & 1) ? ri(1, 4) : 0;
  for (int k = 0; k < 4; k++) q->dims[k] = d[k];
  /* out: NHWC with a pixel stride; a: same layout as out when aliased */
  q->out_stride[3] = 1; q->out_stride[2] = d[3] + extra; q->out_stride[1] = d[2] * q->out_stride[2];
  q->out_stride[0] = d[1] * q->out_stride[1];
  int32_t s = 1;
  for (int k = 3; k >= 0; k--) { q->b_stride[k] = (bmask >> k & 1) ? 0 : s; s *= (bmask >> k & 1) ? 1 : d[k]; }
  if (alias) { for (int k = 0; k < 4; k++) q->a_stride[k] = q->out_stride[k]; }
  else { s = 1; for (int k = 3; k >= 0; k--) { q->a_stride[k] = (amask >> k & 1) ? 0 : s; s *= (amask >> k & 1) ? 1 : d[k]; } }
}
static int32_t bcast_bytes(const bt_bcast4 *q) { return q->dims[0] * q->out_stride[0] + 8; }

static void test_add_mul(void) {
  for (int32_t t = 0; t < 60; t++) {
    const int alias = (t % 3 == 2), is_mul = (t & 1);
    bt_bcast4 q; rand_bcast(&q, alias);
    const int32_t n = bcast_bytes(&q);
    fill(g_in, n); fill(g_in2, n);
    fill(g_ref, n);
    if (alias) copy(g_ref, g_in, n);
    copy(g_opt, g_ref, n);
    const int8_t *a_opt = alias ? g_opt : g_in;
    if (is_mul) {
      bt_mul_params p;
      p.input1_offset = ri(-127, 128); p.input2_offset = ri(-127, 128); p.output_offset = ri(-128, 127);
      p.output_multiplier = (int32_t)(0x40000000u + (rnd() & 0x3fffffffu)); p.output_shift = ri(-12, -5);
      rand_act(&p.act_min, &p.act_max, p.output_offset);
      p.b = q;
      ref_bt_mul_s8(&p, g_in, g_in2, g_ref);
      bt_mul_s8(&p, a_opt, g_in2, g_opt);
      check(alias ? "mul_alias" : "mul", t, g_ref, g_opt, n);
    } else {
      bt_add_params p;
      p.input1_offset = ri(-127, 128); p.input2_offset = ri(-127, 128); p.output_offset = ri(-128, 127);
      p.left_shift = 20;
      p.input1_multiplier = (int32_t)(0x40000000u + (rnd() & 0x3fffffffu)); p.input1_shift = ri(-3, 0);
      p.input2_multiplier = (int32_t)(0x40000000u + (rnd() & 0x3fffffffu)); p.input2_shift = ri(-3, 0);
      p.output_multiplier = (int32_t)(0x40000000u + (rnd() & 0x3fffffffu)); p.output_shift = ri(-22, -17);
      rand_act(&p.act_min, &p.act_max, p.output_offset);
      p.b = q;
      ref_bt_add_s8(&p, g_in, g_in2, g_ref);
      bt_add_s8(&p, a_opt, g_in2, g_opt);
      check(alias ? "add_alias" : "add", t, g_ref, g_opt, n);
    }
  }
}

/* ------------------------------------------------------------------ element-wise and the rest */
static void test_unary(void) {
  for (int32_t t = 0; t < 40; t++) {
    const int32_t n = ri(1, 700), alias = t & 1;
    fill(g_in, n + 8);
    fill(g_ref, n + 8);
    if (alias) copy(g_ref, g_in, n + 8);
    copy(g_opt, g_ref, n + 8);
    const int8_t *src_opt = alias ? g_opt : g_in;
    switch (t % 4) {
      case 0: {
        bt_logistic_params p = {n, ri(-128, 127), 0, 0, 0};
        p.input_multiplier = (int32_t)(0x40000000u + (rnd() & 0x3fffffffu));
        p.input_left_shift = ri(-2, 6);
        p.input_range_radius = ri(20, 300);
        ref_bt_logistic_s8(&p, g_in, g_ref); bt_logistic_s8(&p, src_opt, g_opt);
        check("logistic", t, g_ref, g_opt, n + 8);
      } break;
      case 1: {
        bt_hard_swish_params p = {n, ri(-128, 127), ri(-128, 127), ri(1, 32767), ri(-8, 8), ri(1, 32767), ri(-10, -1)};
        ref_bt_hard_swish_s8(&p, g_in, g_ref); bt_hard_swish_s8(&p, src_opt, g_opt);
        check("hard_swish", t, g_ref, g_opt, n + 8);
      } break;
      case 2: {
        bt_requant_params p = {n, ri(-128, 127), ri(-128, 127), (int32_t)(0x40000000u + (rnd() & 0x3fffffffu)), ri(-6, 2)};
        ref_bt_requantize_s8(&p, g_in, g_ref); bt_requantize_s8(&p, src_opt, g_opt);
        check("requantize", t, g_ref, g_opt, n + 8);
      } break;
      case 3: {
        bt_softmax_params p;
        p.depth = ri(1, 40); p.rows = ri(1, 4);
        p.input_multiplier = (int32_t)(0x40000000u + (rnd() & 0x3fffffffu));
        p.input_left_shift = ri(18, 27);
        p.diff_min = -(int32_t)((((int64_t)31) << 26) >> p.input_left_shift);
        ref_bt_softmax_s8(&p, g_in, g_ref); bt_softmax_s8(&p, g_in, g_opt);
        check("softmax", t, g_ref, g_opt, p.rows * p.depth + 8);
      } break;
    }
  }
  /* float model I/O */
  for (int32_t t = 0; t < 6; t++) {
    static float f[300], f2[300];
    const int32_t n = ri(1, 300);
    const float scale = (float)ri(1, 1000) / 4096.0f;
    const int32_t zp = ri(-128, 127);
    fill(g_in, n);
    ref_bt_dequantize_s8_f32(n, scale, zp, g_in, f);
    bt_dequantize_s8_f32(n, scale, zp, g_in, f2);
    check("dequantize", t, (const int8_t *)f, (const int8_t *)f2, n * 4);
    for (int32_t i = 0; i < n; i++) f[i] = f[i] * 1.37f + (float)(i % 7) * scale * 0.5f;   /* exact .5 ties too */
    fill(g_ref, n + 8); copy(g_opt, g_ref, n + 8);
    ref_bt_quantize_f32_s8(n, scale, zp, f, g_ref);
    bt_quantize_f32_s8(n, scale, zp, f, g_opt);
    check("quantize_f32", t, g_ref, g_opt, n + 8);
    /* both also work in place (same start address) */
    for (int32_t i = 0; i < n; i++) f2[i] = f[i];
    bt_quantize_f32_s8(n, scale, zp, f2, (int8_t *)f2);
    check("quantize_f32_inplace", t, g_ref, (const int8_t *)f2, n);
    bt_dequantize_s8_f32(n, scale, zp, (const int8_t *)f2, f2);
    ref_bt_dequantize_s8_f32(n, scale, zp, g_ref, f);
    check("dequantize_inplace", t, (const int8_t *)f, (const int8_t *)f2, n * 4);
  }
}

static void test_mean(void) {
  for (int32_t t = 0; t < 20; t++) {
    bt_mean_params p;
    p.outer = ri(1, 2); p.reduce = ri(1, 60); p.inner = ri(1, 24);
    p.reduce_stride = p.inner + ((t & 1) ? ri(1, 3) : 0);
    p.outer_stride = p.reduce * p.reduce_stride;
    p.input_zp = ri(-128, 127); p.output_zp = ri(-128, 127);
    p.same_qparams = (t % 3 == 0);
    p.multiplier = (int32_t)(0x40000000u + (rnd() & 0x3fffffffu));
    p.shift = -ilog2((uint32_t)p.reduce) + ri(-1, 1);
    fill(g_in, p.outer * p.outer_stride + 8);
    const int32_t n = p.outer * p.inner + 8;
    fill(g_ref, n); copy(g_opt, g_ref, n);
    ref_bt_mean_s8(&p, g_in, g_ref); bt_mean_s8(&p, g_in, g_opt);
    check("mean", t, g_ref, g_opt, n);
  }
}

static void test_data_movement(void) {
  for (int32_t t = 0; t < 15; t++) {
    bt_pad_params p;
    int32_t total = 1;
    for (int k = 0; k < 4; k++) {
      p.in_dims[k] = k == 0 ? 1 : ri(1, 6);
      p.before[k] = ri(0, 2);
      p.out_dims[k] = p.in_dims[k] + p.before[k] + ri(0, 2);
      p.out_stride[k] = 0;
      total *= p.out_dims[k];
    }
    p.pad_value = ri(-128, 127);
    fill(g_in, p.in_dims[1] * p.in_dims[2] * p.in_dims[3]);
    fill(g_ref, total + 8); copy(g_opt, g_ref, total + 8);
    ref_bt_pad_s8(&p, g_in, g_ref); bt_pad_s8(&p, g_in, g_opt);
    check("pad", t, g_ref, g_opt, total + 8);
  }
  for (int32_t t = 0; t < 10; t++) {
    int32_t sizes[4];
    bt_concat_params p = {ri(1, 4), ri(1, 20), sizes};
    const int8_t *ins[4];
    int8_t *outs_r[4], *outs_o[4];
    int32_t row = 0, off = 0;
    for (int32_t k = 0; k < p.n; k++) { sizes[k] = ri(1, 30); row += sizes[k]; }
    fill(g_in, p.outer * row);
    for (int32_t k = 0; k < p.n; k++) { ins[k] = g_in + off; off += p.outer * sizes[k]; }
    fill(g_ref, p.outer * row + 8); copy(g_opt, g_ref, p.outer * row + 8);
    ref_bt_concat_s8(&p, ins, g_ref); bt_concat_s8(&p, ins, g_opt);
    check("concat", t, g_ref, g_opt, p.outer * row + 8);
    off = 0;
    for (int32_t k = 0; k < p.n; k++) { outs_r[k] = g_ref + off; outs_o[k] = g_opt + off; off += p.outer * sizes[k]; }
    fill(g_ref, p.outer * row + 8); copy(g_opt, g_ref, p.outer * row + 8);
    ref_bt_split_s8(&p, g_in, outs_r); bt_split_s8(&p, g_in, outs_o);
    check("split", t, g_ref, g_opt, p.outer * row + 8);
  }
  for (int32_t t = 0; t < 10; t++) {
    bt_slice_params p;
    int32_t total = 1, in_total = 1;
    for (int k = 0; k < 4; k++) {
      p.in_dims[k] = ri(1, 6);
      p.stride[k] = (rnd() % 3 == 0) ? -ri(1, 2) : ri(1, 2);
      p.begin[k] = p.stride[k] > 0 ? ri(0, p.in_dims[k] - 1) : p.in_dims[k] - 1 - ri(0, p.in_dims[k] - 1);
      int32_t avail = p.stride[k] > 0 ? (p.in_dims[k] - p.begin[k] + p.stride[k] - 1) / p.stride[k]
                                     : (p.begin[k] + 1 + (-p.stride[k]) - 1) / (-p.stride[k]);
      p.out_dims[k] = ri(1, avail);
      total *= p.out_dims[k]; in_total *= p.in_dims[k];
    }
    fill(g_in, in_total);
    fill(g_ref, total + 8); copy(g_opt, g_ref, total + 8);
    ref_bt_strided_slice_s8(&p, g_in, g_ref); bt_strided_slice_s8(&p, g_in, g_opt);
    check("strided_slice", t, g_ref, g_opt, total + 8);
  }
}

/* the optimised sets' requantisation (bt_mbqm_fast) against the TFLM transcription (bt_mbqm) */
static void test_requant_helpers(void) {
  static const int32_t edge[] = {0, 1, -1, 2, -2, 127, -128, 255, -255, 1 << 20, -(1 << 20), (1 << 30) - 1, 1 << 30,
                                 -(1 << 30), INT32_MAX, INT32_MIN, INT32_MIN + 1, 12345678, -12345678};
  static const int32_t mults[] = {0, 1, 1 << 30, (1 << 30) + 1, INT32_MAX, INT32_MIN, -(1 << 30), 1518500250};
  int32_t bad = 0;
  for (uint32_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
    for (uint32_t j = 0; j < sizeof mults / sizeof mults[0]; j++)
      for (int32_t s = -31; s <= 0; s++)
        if (bt_mbqm(edge[i], mults[j], s) != bt_mbqm_fast(edge[i], mults[j], s)) bad++;
  for (int32_t t = 0; t < 20000; t++) {
    int32_t x = (int32_t)rnd() >> ri(0, 30), m = (int32_t)rnd(), s = ri(-31, 4);
    if (s > 0) x >>= s + 1;   /* TFLM's left shift must not overflow */
    if (bt_mbqm(x, m, s) != bt_mbqm_fast(x, m, s)) bad++;
  }
  if (bad) { failed++; bt_puts("FAIL bt_mbqm_fast mismatches: "); put_i(bad); bt_puts("\n"); }
  else passed++;
}

#ifdef BT_SET_XCORE
/* The VPU model against hand-computed XS3 semantics (instructions the kernels do not all use). */
static void test_vpu_model(void) {
  int8_t a[32] __attribute__((aligned(4))), c[32] __attribute__((aligned(4))), r[32] __attribute__((aligned(4)));
  uint16_t sh[16] __attribute__((aligned(4)));
  int32_t acc[16];
  int bad = 0;
  for (int i = 0; i < 32; i++) { a[i] = (int8_t)(i - 16); c[i] = (int8_t)(3 - i % 7); }
  VSETC_S8(); VCLRDR(); VLDC(c);
  for (int k = 0; k < 16; k++) { a[0] = (int8_t)k; VLMACCR(a); }       /* row k ends in acc[15-k] */
  bt_vpu_read_acc(acc);
  for (int k = 0; k < 16; k++) {
    int32_t want = 0;
    for (int i = 0; i < 32; i++) want += c[i] * (i == 0 ? 15 - k : i - 16);
    bad += acc[k] != want;
  }
  VCLRDR(); VLMACC(a); VLMACC(a); bt_vpu_read_acc(acc);                 /* element-wise, 16 lanes */
  for (int i = 0; i < 16; i++) bad += acc[i] != 2 * c[i] * a[i];
  for (int i = 0; i < 16; i++) sh[i] = (uint16_t)(i % 4);
  VLSAT(sh); VSTR(r);                                                    /* round half up, sat +-127 */
  for (int i = 0; i < 16; i++) {
    int32_t v = acc[i], s2 = i % 4, want = s2 ? (v >> s2) + ((v >> (s2 - 1)) & 1) : v;
    want = want > 127 ? 127 : (want < -127 ? -127 : want);
    bad += r[i] != want;
  }
  for (int i = 16; i < 32; i++) bad += r[i] != 0;
  for (int i = 0; i < 32; i++) a[i] = (int8_t)(i * 8 - 128);
  VLASHR(a, 1); VLADD(a); VSTR(r);                                       /* sat8(a/2 + a) */
  for (int i = 0; i < 32; i++) {
    int32_t want = (a[i] >> 1) + a[i];
    bad += r[i] != (want > 127 ? 127 : (want < -127 ? -127 : want));
  }
  for (int i = 0; i < 32; i++) r[i] = 5;
  VSTRPV(r, 0x0000f00fu);
  for (int i = 0; i < 32; i++) bad += r[i] != (((0x0000f00fu >> i) & 1) ? bt_vpu.vR.s8[i] : 5);
  if (bad) { failed++; bt_puts("FAIL vpu model: "); put_i(bad); bt_puts(" mismatches\n"); }
  else passed++;
}
#endif

/* ------------------------------------------------------------------ fast paths of the riscv and host sets
 * (rvhost block) channel counts 1, 3, 5, 17 around the 4-, 8- and 16-channel blocks, 1x1 stride 1 and 2,
 * 3x3 depthwise interiors and borders, the 3-channel stem, filters beyond the host stack buffer,
 * extreme input offsets; each case in random row bands like the others. */
static void test_fast_paths(void) {
  static const int32_t chans[] = {1, 3, 5, 17, 16, 33};
  static const int32_t offs[] = {-127, 128, 0};
  int32_t n = 0;
  for (uint32_t i = 0; i < sizeof chans / sizeof chans[0]; i++)
    for (int32_t v = 0; v < 4; v++, n++) {
      spatial_case c; c.kind = K_CONV;
      const int32_t cin = chans[(i + v) % 6], cout = chans[i], k = v < 2 ? 1 : 3, s = (v & 1) + 1;
      const int32_t ips = cin + (v == 3 ? 2 : 0), h = ri(3, 9), w = ri(3, 9);
      gen_conv(&c.dw.conv, h, w, cin, cout, k, k, s, s, 1, 1, v >= 2, ips, cout, 0);
      c.dw.conv.input_offset = offs[n % 3];
      c.dw.depth_multiplier = 1;
      fill(g_in, h * w * ips + 16);
      spatial_check("fast_conv", n, &c);
      c.kind = K_DW;
      gen_conv(&c.dw.conv, h + 2, w + 2, cout, cout, 3, 3, s, s, 1, 1, v != 1, cout + (v == 2), cout, 1);
      c.dw.conv.input_offset = offs[(n + 1) % 3];
      fill(g_in, (h + 2) * (w + 2) * (cout + 1) + 16);
      spatial_check("fast_depthwise", n, &c);
    }
  for (int32_t t = 0; t < 3; t++, n++) {   /* stem 3x3 s2 SAME, 3 input channels; 3x3 x 120 > 1024 taps */
    spatial_case c; c.kind = K_CONV; c.dw.depth_multiplier = 1;
    const int32_t cin = t == 2 ? 120 : 3, cout = t == 2 ? 5 : 16 + t;
    gen_conv(&c.dw.conv, 9, 10, cin, cout, 3, 3, 2, 2, 1, 1, 1, cin, cout, 0);
    fill(g_in, 9 * 10 * cin + 16);
    spatial_check("fast_conv_stem", t, &c);
  }
  for (uint32_t i = 0; i < sizeof chans / sizeof chans[0]; i++) {
    bt_fc_params p;
    p.n_in = chans[i] + (i & 1) * 16; p.n_out = chans[(i + 2) % 6]; p.batches = 1 + (i & 1);
    p.input_offset = offs[i % 3]; p.output_offset = ri(-128, 127); p.filter_offset = 0;
    rand_act(&p.act_min, &p.act_max, p.output_offset);
    fill(g_w, p.n_in * p.n_out); p.weights = g_w;
    for (int32_t j = 0; j < p.n_out; j++) g_bias[j] = ri(-30000, 30000);
    p.bias = g_bias; p.per_channel = (int32_t)(i & 1);
    rand_quant(p.n_out, 14 + ilog2((uint32_t)p.n_in) / 2);
    p.multiplier = g_mult; p.shift = g_shift;
    fill(g_in, p.n_in * p.batches);
    const int32_t nout = p.n_out * p.batches + 8;
    fill(g_ref, nout); copy(g_opt, g_ref, nout);
    ref_bt_fully_connected_s8(&p, g_in, g_ref);
    bt_fully_connected_s8(&p, g_in, g_opt);
    check("fast_fc", (int32_t)i, g_ref, g_opt, nout);
  }
}
#if defined(__has_include)
#if __has_include("rv_requant.h")
#define BT_HAVE_RV_REQUANT 1
#include "rv_requant.h"
#endif
#endif
/* the riscv set's requantisation with precomputed per-channel parameters against bt_mbqm */
static void test_rv_requant(void) {
#ifdef BT_HAVE_RV_REQUANT
  static const int32_t edge[] = {0, 1, -1, 2, -2, 127, -128, 1 << 20, -(1 << 20), (1 << 30) - 1, 1 << 30,
                                 -(1 << 30), INT32_MAX, INT32_MIN, INT32_MIN + 1, 12345678, -12345678};
  static const int32_t mults[] = {0, 1, 1 << 30, (1 << 30) + 1, INT32_MAX, -(1 << 30), 1518500250};
  int32_t bad = 0;
  rv_rq q;
  for (uint32_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
    for (uint32_t j = 0; j < sizeof mults / sizeof mults[0]; j++)
      for (int32_t s = -31; s <= 0; s++) {
        rv_rq_init(&q, mults[j], s);
        if (bt_mbqm(edge[i], mults[j], s) != rv_mbqm(edge[i], &q)) bad++;
      }
  for (int32_t t = 0; t < 20000; t++) {
    int32_t x = (int32_t)rnd() >> ri(0, 30), m = (int32_t)rnd(), s = ri(-31, 4);
    if (m == INT32_MIN) m++;
    if (s > 0) x >>= s + 1;   /* TFLM's left shift must not overflow */
    rv_rq_init(&q, m, s);
    if (bt_mbqm(x, m, s) != rv_mbqm(x, &q)) bad++;
  }
  if (bad) { failed++; bt_puts("FAIL rv_mbqm mismatches: "); put_i(bad); bt_puts("\n"); }
  else passed++;
#endif
}
#if defined(__has_include)
#if __has_include("host_block.h")
#define BT_HAVE_HOST_BLOCK 1
#include "host_block.h"
#endif
#endif
/* the host set's folded requantisation (bt_hb_rq_one, zero point 0, no clamp) against bt_mbqm */
static void test_host_requant(void) {
#ifdef BT_HAVE_HOST_BLOCK
  static const int32_t edge[] = {0, 1, -1, 2, -2, 127, -128, 1 << 20, -(1 << 20), (1 << 30) - 1, 1 << 30,
                                 -(1 << 30), (1 << 30) + 1, -(1 << 30) - 1, INT32_MAX, INT32_MIN, INT32_MIN + 1,
                                 12345678, -12345678};
  static const int32_t mults[] = {0, 1, 1 << 30, (1 << 30) + 1, INT32_MAX, -(1 << 30), 1518500250, -1518500250};
  int32_t bad = 0;
  bt_hb_rq q;
  for (uint32_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
    for (uint32_t j = 0; j < sizeof mults / sizeof mults[0]; j++)
      for (int32_t s = -31; s <= 0; s++) {
        bt_hb_rq_init(&q, 1, &mults[j], &s, 0, INT32_MIN, INT32_MAX);
        if (bt_mbqm(edge[i], mults[j], s) != bt_hb_rq_one(&q, 0, edge[i])) bad++;
      }
  for (int32_t t = 0; t < 20000; t++) {
    int32_t x = (int32_t)rnd() >> ri(0, 30), m = (int32_t)rnd(), s = ri(-31, 4);
    if (m == INT32_MIN) m++;
    if (s > 0) x >>= s + 1;   /* TFLM's left shift must not overflow */
    bt_hb_rq_init(&q, 1, &m, &s, 0, INT32_MIN, INT32_MAX);
    if (bt_mbqm(x, m, s) != bt_hb_rq_one(&q, 0, x)) bad++;
  }
  if (bad) { failed++; bt_puts("FAIL host requantisation mismatches: "); put_i(bad); bt_puts("\n"); }
  else passed++;
#endif
}
/* ------------------------------------------------------------------ end of the rvhost block */

/* ------------------------------------------------------------------ benchmark cases */
static void shape_cases(void) {
  /* the representative shapes of the benchmark, checked for correctness too */
  spatial_case c;
  c.kind = K_CONV;
  gen_conv(&c.dw.conv, 16, 16, 32, 64, 1, 1, 1, 1, 1, 1, 1, 32, 64, 0);
  fill(g_in, 16 * 16 * 32);
  spatial_check("conv1x1_16x16x32_64", 0, &c);
  c.kind = K_DW; c.dw.depth_multiplier = 1;
  gen_conv(&c.dw.conv, 40, 40, 96, 96, 3, 3, 1, 1, 1, 1, 1, 96, 96, 1);
  fill(g_in, 40 * 40 * 96);
  spatial_check("dw3x3_40x40x96", 0, &c);
}

#ifdef BT_BENCH
#define MARK(n) \
  __attribute__((noinline, used)) void n(void) { __asm__ volatile("" ::: "memory"); }
MARK(bench_0_ref_begin) MARK(bench_0_ref_end) MARK(bench_0_opt_begin) MARK(bench_0_opt_end)
MARK(bench_1_ref_begin) MARK(bench_1_ref_end) MARK(bench_1_opt_begin) MARK(bench_1_opt_end)
MARK(bench_2_ref_begin) MARK(bench_2_ref_end) MARK(bench_2_opt_begin) MARK(bench_2_opt_end)
MARK(bench_3_ref_begin) MARK(bench_3_ref_end) MARK(bench_3_opt_begin) MARK(bench_3_opt_end)
/* xcore set: VPU instructions issued by the benchmark kernel just run (model count) */
static void vpu_report(int k) {
#ifdef BT_SET_XCORE
  static uint32_t last;
  bt_puts("bench "); put_i(k); bt_puts(" vpu_ops="); bt_putu(bt_vpu_ops - last); bt_puts("\n");
  last = bt_vpu_ops;
#else
  (void)k;
#endif
}
/* 0: conv 1x1 16x16x32->64   1: depthwise 3x3 40x40x96 s1 SAME
 * 2: conv 3x3 16x16x16->32 SAME   3: fully connected 512->64 */
static void bench(void) {
  bt_depthwise_params d; bt_fc_params f;
  gen_conv(&d.conv, 16, 16, 32, 64, 1, 1, 1, 1, 1, 1, 1, 32, 64, 0);
  fill(g_in, BUF);
  vpu_report(-1);
  bench_0_ref_begin(); ref_bt_conv_s8(&d.conv, g_in, 0, g_ref, 0, 16); bench_0_ref_end();
  bench_0_opt_begin(); bt_conv_s8(&d.conv, g_in, 0, g_opt, 0, 16); bench_0_opt_end(); vpu_report(0);
  check("bench_conv1x1", 0, g_ref, g_opt, 16 * 16 * 64);
  gen_conv(&d.conv, 40, 40, 96, 96, 3, 3, 1, 1, 1, 1, 1, 96, 96, 1); d.depth_multiplier = 1;
  bench_1_ref_begin(); ref_bt_depthwise_s8(&d, g_in, 0, g_ref, 0, 40); bench_1_ref_end();
  bench_1_opt_begin(); bt_depthwise_s8(&d, g_in, 0, g_opt, 0, 40); bench_1_opt_end(); vpu_report(1);
  check("bench_dw3x3", 0, g_ref, g_opt, 40 * 40 * 96);
  gen_conv(&d.conv, 16, 16, 16, 32, 3, 3, 1, 1, 1, 1, 1, 16, 32, 0);
  bench_2_ref_begin(); ref_bt_conv_s8(&d.conv, g_in, 0, g_ref, 0, 16); bench_2_ref_end();
  bench_2_opt_begin(); bt_conv_s8(&d.conv, g_in, 0, g_opt, 0, 16); bench_2_opt_end(); vpu_report(2);
  check("bench_conv3x3", 0, g_ref, g_opt, 16 * 16 * 32);
  f.n_in = 512; f.n_out = 64; f.batches = 1; f.input_offset = 5; f.filter_offset = 0; f.output_offset = -3;
  f.act_min = -128; f.act_max = 127; fill(g_w, 512 * 64); f.weights = g_w; f.bias = g_bias;
  rand_quant(64, 18); f.multiplier = g_mult; f.shift = g_shift; f.per_channel = 1;
  bench_3_ref_begin(); ref_bt_fully_connected_s8(&f, g_in, g_ref); bench_3_ref_end();
  bench_3_opt_begin(); bt_fully_connected_s8(&f, g_in, g_opt); bench_3_opt_end(); vpu_report(3);
  check("bench_fc", 0, g_ref, g_opt, 64);
}
#endif

/* ------------------------------------------------------------------ fused-plan tile runtime
 * bt_fused.h (kernels/reference/fused.c unless the set replaces it): the tile calls a fused model.c
 * makes, on random tile boxes of random operators, against the reference kernel run whole. */
#define FX_MAXR 64
static int8_t *fx_rowp[FX_MAXR];
static const int8_t *g_image;  /* the streamed input bt_read_input_rows serves */

/* The test's platform input: served from memory (replaces the semihosting file of the boards). */
int bt_read_input_rows(uint32_t offset, uint32_t n, uint32_t rows, uint32_t in_stride, void *dst, uint32_t dst_stride) {
  for (uint32_t y = 0; y < rows; y++) copy((int8_t *)dst + y * dst_stride, g_image + offset + y * in_stride, (int32_t)n);
  return 0;
}

static int32_t fx_kernel_kind(spatial_kind k) { return k == K_CONV ? FX_CONV : k == K_DW ? FX_DW : k == K_MAX ? FX_MAXP : FX_AVGP; }

/* Geometry of a spatial case along one axis: stride, padding, effective kernel extent. */
static void fx_axes(const spatial_case *c, int32_t *sh, int32_t *sw, int32_t *pt, int32_t *pl, int32_t *eh, int32_t *ew) {
  if (c->kind <= K_DW) {
    const bt_conv_params *p = &c->dw.conv;
    *sh = p->stride_h; *sw = p->stride_w; *pt = p->pad_top; *pl = p->pad_left;
    *eh = (p->kh - 1) * p->dil_h + 1; *ew = (p->kw - 1) * p->dil_w + 1;
  } else {
    *sh = c->pool.stride_h; *sw = c->pool.stride_w; *pt = c->pool.pad_top; *pl = c->pool.pad_left;
    *eh = c->pool.filter_h; *ew = c->pool.filter_w;
  }
}

/* A random split of [0, n) into tiles: bounds[0..k], returns k. */
static int32_t fx_split(int32_t n, int32_t *bounds) {
  int32_t k = 0;
  bounds[0] = 0;
  while (bounds[k] < n) { bounds[k + 1] = bounds[k] + ri(1, n - bounds[k]); k++; }
  return k;
}

/* One spatial case computed tile by tile through fx_win (mode 0: each tile's input window copied
   out of the image, dense; 1: a row-banded input, rows scattered; 2: pulled from the streamed
   input by fx_pulled; 3: whole input tensor), compared with the reference run whole. */
static void fused_spatial_check(const char *name, int32_t case_no, const spatial_case *c, int mode) {
  const bt_shape in = c->kind <= K_DW ? c->dw.conv.in : c->pool.in;
  const bt_shape out = c->kind <= K_DW ? c->dw.conv.out : c->pool.out;
  const void *prm = c->kind == K_CONV ? (const void *)&c->dw.conv : c->kind == K_DW ? (const void *)&c->dw
                                                                                    : (const void *)&c->pool;
  int32_t sh, sw, pt, pl, eh, ew;
  fx_axes(c, &sh, &sw, &pt, &pl, &eh, &ew);
  const int32_t out_bytes = out.h * out.w * out.pixel_stride + 8;
  fill(g_ref, out_bytes);
  copy(g_opt, g_ref, out_bytes);
  run_spatial_ref(c, g_in, g_ref);
  const fx_buf o = {g_opt, 0, 0, out.w, out.pixel_stride, 0};
  const int32_t kind = fx_kernel_kind(c->kind), ps = in.pixel_stride;
  int32_t rb[FX_MAXR + 1], cb[FX_MAXR + 1];
  const int32_t nr = fx_split(out.h, rb), nc = fx_split(out.w, cb);
  if (mode == 1) {  /* row r of the image at g_band + (in.h - 1 - r) * row bytes */
    for (int32_t r = 0; r < in.h; r++) {
      fx_rowp[r] = g_band + (in.h - 1 - r) * in.w * ps;
      copy(fx_rowp[r], g_in + r * in.w * ps, in.w * ps);
    }
  }
  g_image = g_in;
  for (int32_t i = 0; i < nr; i++)
    for (int32_t j = 0; j < nc; j++) {
      const int32_t ra = rb[i], rb1 = rb[i + 1], ca = cb[j], cb1 = cb[j + 1];
      const int32_t c0 = BT_MAX(ca * sw - pl, 0), c1 = BT_MIN((cb1 - 1) * sw - pl + ew, in.w);
      if (mode == 1) {
        const fx_buf b = {0, 0, 0, in.w, ps, fx_rowp};
        fx_win(kind, prm, &b, &o, ra, rb1, ca, cb1, -1, 0);
      } else if (mode == 3) {
        const fx_buf b = {g_in, 0, 0, in.w, ps, 0};
        fx_win(kind, prm, &b, &o, ra, rb1, ca, cb1, -1, 0);
      } else if (mode == 2) {  /* a dense eh-row window of the tile's columns, refilled per output row */
        fill(g_band, eh * (c1 - c0) * ps + 16);
        const fx_buf w = {g_band, 0, c0, c1 - c0, ps, 0};
        fx_pulled(kind, prm, &w, &o, ra, rb1, ca, cb1, -1, c0, c1, sh, pt, eh, in.h, in.w, ps);
      } else {
        const int32_t r0 = BT_MAX(ra * sh - pt, 0), r1 = BT_MIN((rb1 - 1) * sh - pt + eh, in.h);
        const int32_t wb = (c1 - c0) * in.c;
        fill(g_band, (r1 - r0 + 1) * wb + 16);
        for (int32_t y = r0; y < r1; y++)
          for (int32_t x = c0; x < c1; x++) copy(g_band + (y - r0) * wb + (x - c0) * in.c, g_in + (y * in.w + x) * ps, in.c);
        const fx_buf w = {g_band, r0, c0, c1 - c0, in.c, 0};
        fx_win(kind, prm, &w, &o, ra, rb1, ca, cb1, -1, 0);
      }
    }
  check(name, case_no, g_ref, g_opt, out_bytes);
}

static void test_fused_spatial(void) {
  static const char *const names[4] = {"fx_win window", "fx_win row bands", "fx_pulled", "fx_win whole"};
  for (int32_t t = 0; t < 64; t++) {
    spatial_case c;
    const int mode = t % 4;
    c.kind = (spatial_kind)(t / 4 % 4);
    int32_t k = ri(1, 3) * 2 - 1, s = ri(1, 2);
    int32_t cin = ri(1, 12), h = ri(k, 14), w = ri(k, 14);
    if (mode == 2 && c.kind != K_DW) cin = ri(1, 4);  /* a streamed image: few channels */
    const int same = (int)(rnd() & 1);
    const int32_t ps = mode == 0 || mode == 2 ? cin : cin + ri(0, 3);
    if (c.kind <= K_DW) {
      gen_conv(&c.dw.conv, h, w, cin, c.kind == K_DW ? cin : ri(1, 16), k, k, s, s, 1, 1, same, ps, 0, c.kind == K_DW);
      c.dw.conv.out.pixel_stride = c.dw.conv.out.c + ri(0, 2);
      c.dw.depth_multiplier = 1;
    } else {
      bt_pool_params *p = &c.pool;
      p->in = (bt_shape){h, w, cin, ps};
      p->filter_h = p->filter_w = k; p->stride_h = p->stride_w = s;
      p->out = (bt_shape){out_size(h, k, s, 1, same), out_size(w, k, s, 1, same), cin, cin + ri(0, 2)};
      p->pad_top = pad_before(h, k, s, 1, same); p->pad_left = pad_before(w, k, s, 1, same);
      rand_act(&p->act_min, &p->act_max, 0);
    }
    fill(g_in, h * w * ps + 16);
    fused_spatial_check(names[mode], t, &c, mode);
  }
}

/* The channel-by-channel scheme (fx_win / fx_pulled with ch >= 0): a conv's output channels one at
   a time into a one-channel buffer (mode 0: from the whole input, 1: from row bands, 2: pulled from
   the streamed input), and a depthwise from a one-channel input into channel ch of its output with
   the filter regrouped per channel (mode 3), over random tiles, against the reference run whole. */
static void test_fused_channelwise(void) {
  static int8_t fch[512];
  for (int32_t t = 0; t < 80; t++) {
    const int mode = t % 4;
    spatial_case c;
    c.kind = mode == 3 ? K_DW : K_CONV;
    const int32_t k = ri(1, 3) * 2 - 1, s = ri(1, 2), h = ri(k, 14), w = ri(k, 14);
    const int32_t cin = mode == 3 ? ri(1, 12) : ri(1, mode == 2 ? 4 : 24), cout = mode == 3 ? cin : ri(1, 12);
    const int32_t ps = mode == 1 ? cin + ri(0, 3) : cin;
    gen_conv(&c.dw.conv, h, w, cin, cout, k, k, s, s, 1, 1, (int)(rnd() & 1), ps, cout + ri(0, 2), mode == 3);
    c.dw.depth_multiplier = 1;
    const bt_conv_params *p = &c.dw.conv;
    const bt_shape out = p->out;
    const int32_t out_bytes = out.h * out.w * out.pixel_stride + 8;
    fill(g_in, h * w * ps + 16);
    fill(g_ref, out_bytes);
    copy(g_opt, g_ref, out_bytes);
    run_spatial_ref(&c, g_in, g_ref);
    int32_t rb[FX_MAXR + 1], cb[FX_MAXR + 1];
    const int32_t nr = fx_split(out.h, rb), nc = fx_split(out.w, cb), eh = k;
    if (mode == 1)
      for (int32_t r = 0; r < h; r++) {
        fx_rowp[r] = g_band + (h - 1 - r) * w * ps;
        copy(fx_rowp[r], g_in + r * w * ps, w * ps);
      }
    if (mode == 3)
      for (int32_t ch = 0; ch < cout; ch++)
        for (int32_t i = 0; i < k * k; i++) fch[ch * k * k + i] = p->filter[i * cout + ch];
    g_image = g_in;
    const fx_buf o = {g_opt, 0, 0, out.w, out.pixel_stride, 0}, o1 = {g_in2, 0, 0, out.w, 1, 0};
    for (int32_t ch = 0; ch < cout; ch++) {
      if (mode == 3)
        for (int32_t i = 0; i < h * w; i++) g_band[i] = g_in[i * ps + ch];
      for (int32_t i = 0; i < nr; i++)
        for (int32_t j = 0; j < nc; j++) {
          const int32_t ra = rb[i], rb1 = rb[i + 1], ca = cb[j], cb1 = cb[j + 1];
          const int32_t c0 = BT_MAX(ca * s - p->pad_left, 0), c1 = BT_MIN((cb1 - 1) * s - p->pad_left + k, w);
          if (mode == 3) {
            const fx_buf b = {g_band, 0, 0, w, 1, 0};
            fx_win(FX_DW, &c.dw, &b, &o, ra, rb1, ca, cb1, ch, fch);
          } else if (mode == 2) {
            int8_t *win = g_band + 4096;
            fill(win, eh * (c1 - c0) * ps + 16);
            const fx_buf b = {win, 0, c0, c1 - c0, ps, 0};
            fx_pulled(FX_CONV, p, &b, &o1, ra, rb1, ca, cb1, ch, c0, c1, s, p->pad_top, eh, h, w, ps);
          } else {
            const fx_buf b = {mode == 0 ? g_in : 0, 0, 0, w, ps, mode == 1 ? fx_rowp : 0};
            fx_win(FX_CONV, p, &b, &o1, ra, rb1, ca, cb1, ch, 0);
          }
        }
      if (mode != 3)
        for (int32_t i = 0; i < out.h * out.w; i++) g_opt[i * out.pixel_stride + ch] = g_in2[i];
    }
    static const char *const names[4] = {"fx_win conv by channel", "fx_win conv by channel, row bands",
                                         "fx_pulled conv by channel", "fx_win depthwise by channel"};
    check(names[mode], t, g_ref, g_opt, out_bytes);
  }
}

/* fx_pw (MAXIMUM, MINIMUM), fx_unary (RELU6), the ring shifts, MEAN and iterative dense over tiles
   of strided buffers, against results computed here or by the reference kernels run whole. */
static void test_fused_elementwise(void) {
  for (int32_t t = 0; t < 16; t++) {
    const int32_t h = ri(1, 9), w = ri(1, 9), ch = ri(1, 12), pa = ch + ri(0, 3), pb = ch + ri(0, 3), po = ch + ri(0, 3);
    fill(g_in, h * w * pa + 8); fill(g_in2, h * w * pb + 8);
    fill(g_opt, h * w * po + 8); copy(g_ref, g_opt, h * w * po + 8);
    const fx_buf a = {g_in, 0, 0, w, pa, 0}, b = {g_in2, 0, 0, w, pb, 0}, o = {g_opt, 0, 0, w, po, 0};
    const int kind = t % 3 == 0 ? FX_MAX : t % 3 == 1 ? FX_MIN : FX_RELU6;
    const bt_bcast4 q = {{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}};
    const int32_t bounds[2] = {ri(-128, 0), ri(0, 127)};
    int32_t rbnd[FX_MAXR + 1], cbnd[FX_MAXR + 1];
    const int32_t nr = fx_split(h, rbnd), nc = fx_split(w, cbnd);
    for (int32_t i = 0; i < nr; i++)
      for (int32_t j = 0; j < nc; j++) {
        if (kind == FX_RELU6) fx_unary(kind, bounds, 0, &a, &o, rbnd[i], rbnd[i + 1], cbnd[j], cbnd[j + 1], ch);
        else fx_pw(kind, &q, &a, &b, &o, rbnd[i], rbnd[i + 1], cbnd[j], cbnd[j + 1], ch);
      }
    for (int32_t p = 0; p < h * w; p++)
      for (int32_t i = 0; i < ch; i++) {
        const int32_t x = g_in[p * pa + i], y = g_in2[p * pb + i];
        g_ref[p * po + i] = (int8_t)(kind == FX_MAX ? BT_MAX(x, y) : kind == FX_MIN ? BT_MIN(x, y)
                                                                   : bt_clamp(x, bounds[0], bounds[1]));
      }
    check(kind == FX_RELU6 ? "fx_unary relu6" : "fx_pw max/min", t, g_ref, g_opt, h * w * po + 8);
  }
  for (int32_t t = 0; t < 16; t++) {  /* ring shifts: rows (whole rows) or columns (per row) */
    const int32_t rows = ri(1, 6), ext = ri(2, 8), ch = ri(1, 9), n = ri(1, ext - 1), by_cols = t & 1;
    const int32_t bytes = rows * ext * ch;
    fill(g_opt, bytes + 8); copy(g_ref, g_opt, bytes + 8);
    if (by_cols) {
      for (int32_t y = 0; y < rows; y++) copy(g_ref + y * ext * ch, g_opt + (y * ext + n) * ch, (ext - n) * ch);
      fx_shift_cols(g_opt, rows, ext, ch, n);
    } else {  /* ext rows of rows*ch bytes */
      copy(g_ref, g_opt + n * rows * ch, (ext - n) * rows * ch);
      fx_shift_rows(g_opt, ext, rows * ch, n);
    }
    check(by_cols ? "fx_shift_cols" : "fx_shift_rows", t, g_ref, g_opt, bytes + 8);
  }
  for (int32_t t = 0; t < 16; t++) {  /* MEAN: int16 and int32 sums over tiles */
    const int32_t h = ri(1, 16), w = ri(1, 16), ch = ri(1, 24), ps = ch + ri(0, 3);
    fill(g_in, h * w * ps + 8);
    const fx_buf a = {g_in, 0, 0, w, ps, 0};
    int16_t s16[32] = {0};
    int32_t s32[32] = {0}, direct[32] = {0};
    int32_t rbnd[FX_MAXR + 1], cbnd[FX_MAXR + 1];
    const int32_t nr = fx_split(h, rbnd), nc = fx_split(w, cbnd);
    for (int32_t i = 0; i < nr; i++)
      for (int32_t j = 0; j < nc; j++) {
        fx_accumulate16(s16, &a, rbnd[i], rbnd[i + 1], cbnd[j], cbnd[j + 1], ch);
        fx_accumulate32(s32, &a, rbnd[i], rbnd[i + 1], cbnd[j], cbnd[j + 1], ch);
      }
    for (int32_t p = 0; p < h * w; p++)
      for (int32_t i = 0; i < ch; i++) direct[i] += g_in[p * ps + i];
    const int32_t zp = ri(-128, 127), mult = (int32_t)(0x40000000u + (rnd() & 0x3fffffffu)), shift = -ri(0, 8);
    const int32_t ozp = ri(-128, 127);
    fx_mean_done16(s16, g_opt, ch, zp * h * w, mult, shift, ozp);
    fx_mean_done32(s32, g_opt + 32, ch, zp * h * w, mult, shift, ozp);
    for (int32_t i = 0; i < ch; i++) {
      const int32_t v = bt_mbqm(direct[i] - zp * h * w, mult, shift) + ozp;
      g_ref[i] = g_ref[32 + i] = (int8_t)bt_clamp(v, -128, 127);
    }
    check("fx_mean16", t, g_ref, g_opt, ch);
    check("fx_mean32", t, g_ref + 32, g_opt + 32, ch);
  }
  for (int32_t t = 0; t < 16; t++) {  /* iterative dense: tiles of a strided map vs the FC run whole */
    const int32_t h = ri(1, 6), w = ri(1, 6), ch = ri(1, 12), ps = ch + ri(0, 3);
    bt_fc_params p;
    p.n_in = h * w * ch; p.n_out = ri(1, 24); p.batches = 1;
    p.input_offset = ri(-127, 128); p.output_offset = ri(-128, 127); p.filter_offset = 0;
    rand_act(&p.act_min, &p.act_max, p.output_offset);
    fill(g_w, p.n_in * p.n_out); p.weights = g_w;
    for (int32_t i = 0; i < p.n_out; i++) g_bias[i] = ri(-30000, 30000);
    p.bias = (rnd() % 4) ? g_bias : NULL;
    p.per_channel = (int32_t)(rnd() & 1);
    rand_quant(p.n_out, 14 + ilog2((uint32_t)p.n_in) / 2);
    p.multiplier = g_mult; p.shift = g_shift;
    fill(g_in, h * w * ps + 8);
    for (int32_t q = 0; q < h * w; q++) copy(g_in2 + q * ch, g_in + q * ps, ch);
    fill(g_ref, p.n_out + 8); copy(g_opt, g_ref, p.n_out + 8);
    ref_bt_fully_connected_s8(&p, g_in2, g_ref);
    int32_t acc[32] = {0};
    const fx_buf a = {g_in, 0, 0, w, ps, 0};
    int32_t rbnd[FX_MAXR + 1], cbnd[FX_MAXR + 1];
    const int32_t nr = fx_split(h, rbnd), nc = fx_split(w, cbnd);
    for (int32_t i = 0; i < nr; i++)
      for (int32_t j = 0; j < nc; j++) fx_dense_acc(acc, &p, &a, rbnd[i], rbnd[i + 1], cbnd[j], cbnd[j + 1], w, ch);
    fx_dense_done(acc, &p, g_opt);
    check("fx_dense", t, g_ref, g_opt, p.n_out + 8);
  }
  for (int32_t t = 0; t < 16; t++) {  /* 1x1 convolution in place (out channels <= in channels) */
    const int32_t h = ri(1, 8), w = ri(1, 8), cin = ri(1, 16), cout = ri(1, cin);
    bt_conv_params p;
    gen_conv(&p, h, w, cin, cout, 1, 1, 1, 1, 1, 1, 0, cin, cout, 0);
    fill(g_in, h * w * cin + 8);
    fill(g_ref, h * w * cout + 8);
    ref_bt_conv_s8(&p, g_in, 0, g_ref, 0, h);
    copy(g_opt, g_in, h * w * cin + 8);
    const fx_buf i0 = {g_opt, 0, 0, w, cin, 0}, o = {g_opt, 0, 0, w, cout, 0};
    fx_conv_inplace(&p, &i0, &o, 0, h, 0, w);
    check("fx_conv_inplace", t, g_ref, g_opt, h * w * cout);
  }
}

int bt_main(void) {
#ifdef BT_RVV
  __asm__ volatile(".option push\n.option arch,+zicsr\ncsrs mstatus, %0\n.option pop" ::"r"(1u << 9));
#endif
  bt_puts("kernel set: "); bt_puts(bt_kernel_set_name()); bt_puts("\n");
#ifdef BT_BENCH
  bench();
#endif
  test_requant_helpers();
#ifdef BT_SET_XCORE
  test_vpu_model();
#endif
  test_conv();
  test_depthwise();
  test_pool();
  test_fc();
  test_add_mul();
  test_unary();
  test_mean();
  test_data_movement();
  shape_cases();
  test_fast_paths();
  test_rv_requant();
  test_host_requant();
  test_fused_spatial();
  test_fused_channelwise();
  test_fused_elementwise();
  test_conv_variants();
  test_rq2();
  test_fc_sizes();
#ifdef BT_SET_XCORE
  if (bt_vpu_align_faults) { failed++; bt_puts("FAIL unaligned VPU memory operands: "); bt_putu(bt_vpu_align_faults); bt_puts("\n"); }
  else passed++;
#endif
  bt_puts("variants:");
  for (int i = 0; i < g_nvariants; i++) { bt_puts(" "); bt_puts(g_variants[i]); }
  bt_puts("\n");
  put_i(passed); bt_puts(" passed, "); put_i(failed); bt_puts(" failed\n");
  return failed ? 1 : 0;
}
