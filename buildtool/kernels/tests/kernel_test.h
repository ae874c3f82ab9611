/* kernel_test.h -- the kernel tests' harness: platform output, buffers, the random generator, the
 * byte-for-byte check, random quantisation and the spatial (conv/depthwise/pool) case helpers.
 * Included once, by kernel_test.c, before the per-kernel test files. */
#ifndef BT_KERNEL_TEST_H
#define BT_KERNEL_TEST_H

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
void ref_bt_sub_s8(const bt_add_params *, const int8_t *, const int8_t *, int8_t *);
void ref_bt_mul_s8(const bt_mul_params *, const int8_t *, const int8_t *, int8_t *);
void ref_bt_avg_pool_s8(const bt_pool_params *, const int8_t *, int32_t, int8_t *, int32_t, int32_t);
void ref_bt_max_pool_s8(const bt_pool_params *, const int8_t *, int32_t, int8_t *, int32_t, int32_t);
void ref_bt_mean_s8(const bt_mean_params *, const int8_t *, int8_t *);
void ref_bt_softmax_s8(const bt_softmax_params *, const int8_t *, int8_t *);
void ref_bt_softmax_s8_s16(const bt_softmax_params *, const int8_t *, int16_t *);
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
#include "bt_platform.h" /* bt_puts from the platform (semihost_io.c), bt_putu on top of it */
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
 * check that every variant of the set's table (buildtool/codegen/kernel_variants.py) ran against the reference. */
static const char *g_variants[64];
static int g_nvariants;
static inline void note_variant(const char *name) {
  for (int i = 0; i < g_nvariants; i++)
    if (g_variants[i] == name) return;
  if (g_nvariants < 64) g_variants[g_nvariants++] = name;
}
#if defined BT_VARIANTS_CORTEX_M || defined BT_VARIANTS_RISCV
#define NOTE_CONV(p) note_variant(bt_conv_s8_variant(p))
#else
#define NOTE_CONV(p) ((void)(p))
#endif
#ifdef BT_VARIANTS_CORTEX_M
/* the depthwise variant and the path it runs for the call (depthwise.c dw_path) */
#define NOTE_DW(p, in_y0, y0, y1) \
  (note_variant(bt_depthwise_s8_variant(p)), note_variant(bt_depthwise_s8_path(p, in_y0, y0, y1)))
#define NOTE_FC(p) note_variant(bt_fully_connected_s8_variant(p))
#else
#define NOTE_DW(p, in_y0, y0, y1) ((void)(p))
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
static void rand_act32(int32_t *lo, int32_t *hi, int32_t out_off) {
  switch (rnd() % 4) {
    case 0: *lo = out_off < -128 ? -128 : out_off; *hi = 127; break;   /* RELU */
    case 1: *lo = ri(-128, 0); *hi = ri(*lo, 127); break;
    default: *lo = -128; *hi = 127;
  }
}
/* into act_min/act_max fields of either width (int32 in bt_add_params, int16 in bt_conv_params) */
#define rand_act(lo, hi, out_off) \
  do { int32_t lo_, hi_; rand_act32(&lo_, &hi_, out_off); *(lo) = lo_; *(hi) = hi_; } while (0)

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

#ifdef BT_VARIANTS_CORTEX_M55
/* The cortex-m55 set's conv with each channel's bias + input_offset * (filter sum) made beforehand (code
   generation's tile kernels: bt_variants.h), on every other call. */
static void conv_kb(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1) {
  static int32_t kb[512];
  static int turn;
  const int32_t fs = p->kh * p->kw * p->in.c;
  if ((turn ^= 1) == 0 || p->out.c > 512) {
    bt_conv_s8(p, in, in_y0, out, y0, y1);
    return;
  }
  for (int32_t oc = 0; oc < p->out.c; oc++) {
    uint32_t sum = 0;
    for (int32_t i = 0; i < fs; i++) sum += (uint32_t)(int32_t)p->filter[oc * fs + i];
    kb[oc] = (int32_t)((uint32_t)(p->bias ? p->bias[oc] : 0) + (uint32_t)p->input_offset * sum);
  }
  bt_conv_s8_kb(p, kb, in, in_y0, out, y0, y1);
}
#define RUN_CONV conv_kb
#else
#define RUN_CONV bt_conv_s8
#endif
static void run_spatial_opt(const spatial_case *c, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1) {
  switch (c->kind) {
    case K_CONV: NOTE_CONV(&c->dw.conv); RUN_CONV(&c->dw.conv, in, in_y0, out, y0, y1); break;
    case K_DW: NOTE_DW(&c->dw, in_y0, y0, y1); bt_depthwise_s8(&c->dw, in, in_y0, out, y0, y1); break;
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

#endif
