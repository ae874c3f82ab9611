/* CONV_2D int8 per channel for Cortex-M55 Helium (MVE): TFLM ConvPerChannel, byte for byte.
 *
 * Four output channels at a time (the last 1-3 channels: the same code with the extra rows repeating
 * the first and the store predicated), output pixels inner. Per output pixel and tap row the input
 * run (kw * in.c bytes when pixels are dense, else one tap of in.c bytes) is one contiguous run, as
 * is the filter's (OHWI): mve_dot4 takes it 16 bytes per beat-pair (VMLADAVA.S8 per channel, one
 * input vector shared by the four channels), the last 1-15 bytes tail-predicated (VCTP.8, zeroing
 * loads). The input offset is folded into the accumulator's start: input_offset * (sum of the
 * channel's weights) once per channel group for pixels whose window lies wholly inside the image;
 * border pixels sum the weights of their valid taps alongside (VADDVA.S8). Requantisation is four
 * channels per vector (mve.h). 1x1 convolutions without padding take a loop with no window
 * geometry. */
#include "bt_kernels.h"
#include "requant.h"
#include "mve.h"

const char *bt_kernel_set_name(void) { return "cortex-m55"; }

/* Output pixels [0, npix) of a row whose windows lie wholly inside the image, four whole channels,
 * dense input pixels: pixel i's window row ky starts at x + i * xstep + ky * ystep, run bytes long, as
 * does the filter row (w + ky * run, rows fs apart); one mve_dot4_lob per window row, then
 * k[0] (bias + input_offset * row sums) added and the requantisation of mve.h (k[1..3]), clamped to
 * [k[4], k[5]]. Its own function: inlined in bt_conv_s8, GCC keeps its pointers on the stack. */
static __attribute__((noinline)) void conv_run(const int8_t *x, int32_t xstep, int32_t ystep, int32_t kh, int32_t run,
                                               const int8_t *w, int32_t fs, const int32x4_t *k, int32_t zp,
                                               int8_t *o, int32_t ops, int32_t npix) {
  for (; npix > 0; npix--, x += xstep, o += ops) {
    int32_t acc[4] = {0, 0, 0, 0};
    for (int32_t ky = 0; ky < kh; ky++) mve_dot4_lob(x + ky * ystep, w + ky * run, fs, run, acc);
    int32x4_t v = vaddq_s32(mve_vec4(acc), k[0]);
    v = vshlq_s32(v, k[2]);
    v = vqrdmulhq_s32(v, k[1]);
    v = vqaddq_s32(v, vshrq_n_s32(vandq_s32(v, k[3]), 31));
    v = vrshlq_s32(v, k[3]);
    vstrbq_s32(o, vminq_s32(vmaxq_s32(vaddq_n_s32(v, zp), k[4]), k[5]));
  }
}

/* A run of pointwise pixels for four whole output channels, everything in registers: per pixel the four
 * accumulators zeroed, one DLSTP.8/LETP loop over the input channels (five loads, four VMLADAVA.S8 per 16
 * inputs, the last iteration tail-predicated), the four sums moved into one vector by two VMOVs (two
 * GPRs to two lanes each), then bias + input offset term, the requantisation of mve.h with its constants
 * held in q1-q6 (VSHL only in the variant for left shifts, its shifts loaded per pixel), the clamp and one
 * VSTRB.32. The job block holds the four filter rows, the input length, the steps and the end. */
typedef struct {
  const int8_t *w[4];            /* 0: the four filter rows */
  int32_t n;                     /* 16: input channels */
  int32_t ops, xstep;            /* 20, 24: output pixel stride, input step per pixel */
  const int8_t *xend;            /* 28: x of the pixel after the last */
  int32x4_t fbias, mult, right, zp, lo, hi, left; /* 32 .. 128 */
} pw_job;

/* The four sums r2, r4, r6, r8 of PW_RUN and KK_RUN into one vector (two VMOVs), + the start values (q1), then
 * mve.h's requantisation with its constants in q2-q4 (SHL: the left-shift variant's VSHL, or nothing) and the
 * clamp (q5, q6): the result in q0's four lanes. */
#define MVE_SUMS4_RQ(SHL)                                                                                      \
  "vmov q0[2], q0[0], r2, r6\n"                                                                                \
  "vmov q0[3], q0[1], r4, r8\n"                                                                                \
  "vadd.i32 q0, q0, q1\n" SHL                                                                                  \
  "vqrdmulh.s32 q0, q0, q2\n"                                                                                  \
  "vand q7, q0, q3\n"                                                                                          \
  "vshr.s32 q7, q7, #31\n"                                                                                     \
  "vqadd.s32 q0, q0, q7\n"                                                                                     \
  "vrshl.s32 q0, q0, q3\n"                                                                                     \
  "vadd.i32 q0, q0, q4\n"                                                                                      \
  "vmax.s32 q0, q0, q5\n"                                                                                      \
  "vmin.s32 q0, q0, q6\n"

#define PW_RUN(NAME, SHL)                                                                                     \
  static __attribute__((noinline)) void NAME(const pw_job *j, const int8_t *x, int8_t *o) {                   \
    register const pw_job *jr __asm__("r0") = j;                                                              \
    register const int8_t *xr __asm__("r1") = x;                                                              \
    register int8_t *orr __asm__("r3") = o;                                                                   \
    __asm__ volatile(                                                                                         \
        "vldrw.32 q1, [r0, #32]\n"                                                                            \
        "vldrw.32 q2, [r0, #48]\n"                                                                            \
        "vldrw.32 q3, [r0, #64]\n"                                                                            \
        "vldrw.32 q4, [r0, #80]\n"                                                                            \
        "vldrw.32 q5, [r0, #96]\n"                                                                            \
        "vldrw.32 q6, [r0, #112]\n"                                                                           \
        "1:\n"                                                                                                \
        "movs r2, #0\n"                                                                                       \
        "movs r4, #0\n"                                                                                       \
        "movs r6, #0\n"                                                                                       \
        "mov r8, #0\n"                                                                                        \
        "ldrd r9, r10, [r0, #0]\n"                                                                            \
        "ldrd r11, r12, [r0, #8]\n"                                                                           \
        "ldr r5, [r0, #16]\n"                                                                                 \
        "dlstp.8 lr, r5\n"                                                                                    \
        "mov r5, r1\n"                                                                                        \
        "2:\n"                                                                                                \
        "vldrb.8 q0, [r5], #16\n"                                                                             \
        "vldrb.8 q7, [r9], #16\n"                                                                             \
        "vmladava.s8 r2, q7, q0\n"                                                                            \
        "vldrb.8 q7, [r10], #16\n"                                                                            \
        "vmladava.s8 r4, q7, q0\n"                                                                            \
        "vldrb.8 q7, [r11], #16\n"                                                                            \
        "vmladava.s8 r6, q7, q0\n"                                                                            \
        "vldrb.8 q7, [r12], #16\n"                                                                            \
        "vmladava.s8 r8, q7, q0\n"                                                                            \
        "letp lr, 2b\n"                                                                                       \
        MVE_SUMS4_RQ(SHL)                                                                                     \
        "vstrb.32 q0, [r3]\n"                                                                                 \
        "ldrd r5, r9, [r0, #20]\n"                                                                            \
        "add r3, r3, r5\n"                                                                                    \
        "add r1, r1, r9\n"                                                                                    \
        "ldr r5, [r0, #28]\n"                                                                                 \
        "cmp r1, r5\n"                                                                                        \
        "bne 1b\n"                                                                                            \
        : "+r"(xr), "+r"(orr)                                                                                 \
        : "r"(jr)                                                                                             \
        : "memory", "cc", "r2", "r4", "r5", "r6", "r8", "r9", "r10", "r11", "r12", "lr", "d0", "d1", "d2",   \
          "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15");                \
  }

PW_RUN(pw_run, "")
PW_RUN(pw_run_shl, "vldrw.32 q7, [r0, #128]\nvshl.s32 q0, q0, q7\n")

/* Pixels [x, xend) of a pointwise conv, step xstep, output o (stride ops), channel group w0 (rows fs apart). */
static void pw_rows(pw_job *j, const int8_t *w0, int32_t fs, int32_t n, const int8_t *x, int32_t xstep, int32_t npix,
                    int8_t *o, int32_t ops, int shl) {
  if (npix <= 0) return;
  for (int32_t r = 0; r < 4; r++) j->w[r] = w0 + r * fs;
  j->n = n; j->ops = ops; j->xstep = xstep; j->xend = x + npix * xstep;
  (shl ? pw_run_shl : pw_run)(j, x, o);
}

/* conv_run in asm for window rows of a multiple of 16 bytes (so the filter rows' pointers run on from one
 * window row to the next): per pixel the four accumulators zeroed, per window row one DLSTP.8/LETP loop
 * (five loads, four VMLADAVA.S8 per 16 bytes) and the input pointer moved to the next row, then the
 * requantisation of pw_run with its constants in q1-q6 and one VSTRB.32. */
typedef struct {
  const int8_t *w[4];            /* 0 */
  int32_t run, ops, xstep;       /* 16, 20, 24 */
  const int8_t *xend;            /* 28 */
  int32_t kh, rowdelta;          /* 32, 36: window rows; input row step - run */
  int8_t *o;                     /* 40 */
  int32_t pad;
  int32x4_t fbias, mult, right, zp, lo, hi, left; /* 48 .. 144 */
} kk_job;

#define KK_RUN(NAME, SHL)                                                                                     \
  static __attribute__((noinline)) void NAME(kk_job *j, const int8_t *x) {                                    \
    register kk_job *jr __asm__("r0") = j;                                                                    \
    register const int8_t *xr __asm__("r1") = x;                                                              \
    __asm__ volatile(                                                                                         \
        "vldrw.32 q1, [r0, #48]\n"                                                                            \
        "vldrw.32 q2, [r0, #64]\n"                                                                            \
        "vldrw.32 q3, [r0, #80]\n"                                                                            \
        "vldrw.32 q4, [r0, #96]\n"                                                                            \
        "vldrw.32 q5, [r0, #112]\n"                                                                           \
        "vldrw.32 q6, [r0, #128]\n"                                                                           \
        "1:\n"                                                                                                \
        "movs r2, #0\n"                                                                                       \
        "movs r4, #0\n"                                                                                       \
        "movs r6, #0\n"                                                                                       \
        "mov r8, #0\n"                                                                                        \
        "ldrd r9, r10, [r0, #0]\n"                                                                            \
        "ldrd r11, r12, [r0, #8]\n"                                                                           \
        "mov r5, r1\n"                                                                                        \
        "ldr r3, [r0, #32]\n"                                                                                 \
        "2:\n"                                                                                                \
        "ldr lr, [r0, #16]\n"                                                                                 \
        "dlstp.8 lr, lr\n"                                                                                    \
        "3:\n"                                                                                                \
        "vldrb.8 q0, [r5], #16\n"                                                                             \
        "vldrb.8 q7, [r9], #16\n"                                                                             \
        "vmladava.s8 r2, q7, q0\n"                                                                            \
        "vldrb.8 q7, [r10], #16\n"                                                                            \
        "vmladava.s8 r4, q7, q0\n"                                                                            \
        "vldrb.8 q7, [r11], #16\n"                                                                            \
        "vmladava.s8 r6, q7, q0\n"                                                                            \
        "vldrb.8 q7, [r12], #16\n"                                                                            \
        "vmladava.s8 r8, q7, q0\n"                                                                            \
        "letp lr, 3b\n"                                                                                       \
        "ldr lr, [r0, #36]\n"                                                                                 \
        "add r5, r5, lr\n"                                                                                    \
        "subs r3, r3, #1\n"                                                                                   \
        "bne 2b\n"                                                                                            \
        MVE_SUMS4_RQ(SHL)                                                                                     \
        "ldr r3, [r0, #40]\n"                                                                                 \
        "vstrb.32 q0, [r3]\n"                                                                                 \
        "ldrd r5, r9, [r0, #20]\n"                                                                            \
        "add r3, r3, r5\n"                                                                                    \
        "str r3, [r0, #40]\n"                                                                                 \
        "add r1, r1, r9\n"                                                                                    \
        "ldr r5, [r0, #28]\n"                                                                                 \
        "cmp r1, r5\n"                                                                                        \
        "bne 1b\n"                                                                                            \
        : "+r"(xr)                                                                                            \
        : "r"(jr)                                                                                             \
        : "memory", "cc", "r2", "r3", "r4", "r5", "r6", "r8", "r9", "r10", "r11", "r12", "lr", "d0", "d1",   \
          "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15");          \
  }

KK_RUN(kk_run, "")
KK_RUN(kk_run_shl, "vldrw.32 q7, [r0, #144]\nvshl.s32 q0, q0, q7\n")

/* Short window rows (kw * in.c < 16 bytes: a stem conv on 1-3 channels), up to PATCH_MAX taps and
 * FB_MAX output channels, more channel groups than kw; and, for any conv of whole channel groups within
 * those limits, the border pixels (border_only): each output pixel's window is gathered once into a patch (taps outside the
 * image filled with the input zero point, which contributes exactly 0), then every channel group is
 * one mve_dot4_lob over the whole patch from a start made once per call (bias + input_offset * row
 * sum). One 16-lane loop per pixel and group instead of one per window row. */
#define PATCH_MAX 1024
#define FB_MAX 256

static void fill8(int8_t *d, int8_t v, int32_t n) {
  for (; n > 0; n -= 16, d += 16) vstrbq_p_s8(d, vdupq_n_s8(v), vctp8q((uint32_t)n));
}

static void copy8(int8_t *d, const int8_t *s, int32_t n) {
  for (; n > 0; n -= 16, d += 16, s += 16) {
    const mve_pred16_t q = vctp8q((uint32_t)n);
    vstrbq_p_s8(d, vldrbq_z_s8(s, q), q);
  }
}

static __attribute__((noinline)) void conv_patches(const bt_conv_params *p, const int32_t *kb, const int8_t *in,
                                                   int32_t in_y0, int8_t *out, int32_t y0, int32_t y1,
                                                   const int border_only) {
  int8_t patch[PATCH_MAX] __attribute__((aligned(16)));
  int32_t fbs[FB_MAX];
  const int32_t ic_n = p->in.c, oc_n = p->out.c, ps = p->in.pixel_stride, ops = p->out.pixel_stride;
  const int32_t in_row = p->in.w * ps, out_row = p->out.w * ops, kh = p->kh, kw = p->kw;
  const int32_t fs = kh * kw * ic_n, io = p->input_offset, zp = p->output_offset;
  const int8_t pad = (int8_t)(-io);
  if (!kb)
    for (int32_t oc = 0; oc < oc_n; oc++)
      fbs[oc] = (int32_t)((uint32_t)(p->bias ? p->bias[oc] : 0) + (uint32_t)io * (uint32_t)mve_sum(p->filter + oc * fs, fs));
  const int32_t *const fb = kb ? kb : fbs;
  const int32x4_t lo = vdupq_n_s32(p->act_min), hi = vdupq_n_s32(p->act_max);
  for (int32_t y = y0; y < y1; y++) {
    const int32_t iy0 = y * p->stride_h - p->pad_top;
    int8_t *orow = out + (y - y0) * out_row;
    int32_t rows_in = 1;
    for (int32_t ky = 0; ky < kh; ky++)
      if (iy0 + ky * p->dil_h < 0 || iy0 + ky * p->dil_h >= p->in.h) rows_in = 0;
    for (int32_t x = 0; x < p->out.w; x++) {
      const int32_t ix0 = x * p->stride_w - p->pad_left;
      if (border_only && rows_in && ix0 >= 0 && ix0 + (kw - 1) * p->dil_w < p->in.w) continue;
      int8_t *d = patch;
      for (int32_t ky = 0; ky < kh; ky++) {
        const int32_t iy = iy0 + ky * p->dil_h;
        if (iy < 0 || iy >= p->in.h) {
          fill8(d, pad, kw * ic_n);
          d += kw * ic_n;
          continue;
        }
        const int8_t *irow = in + (iy - in_y0) * in_row;
        if (ps == ic_n && p->dil_w == 1 && ix0 >= 0 && ix0 + kw <= p->in.w) {   /* the row in one run */
          copy8(d, irow + ix0 * ps, kw * ic_n);
          d += kw * ic_n;
          continue;
        }
        for (int32_t kx = 0; kx < kw; kx++, d += ic_n) {
          const int32_t ix = ix0 + kx * p->dil_w;
          if (ix < 0 || ix >= p->in.w) fill8(d, pad, ic_n);
          else copy8(d, irow + ix * ps, ic_n);
        }
      }
      int8_t *o = orow + x * ops;
      int32_t oc = 0;
      for (; oc + 4 <= oc_n; oc += 4) {
        int32_t acc[4] = {0, 0, 0, 0};
        mve_dot4_lob(patch, p->filter + oc * fs, fs, fs, acc);
        const int32x4_t s = vldrwq_s32(p->shift + oc);
        int32x4_t v = vaddq_s32(mve_vec4(acc), vldrwq_s32(fb + oc));
        const int32x4_t right = vminq_s32(s, vdupq_n_s32(0));
        v = vshlq_s32(v, vmaxq_s32(s, vdupq_n_s32(0)));
        v = vqrdmulhq_s32(v, vldrwq_s32(p->multiplier + oc));
        v = vqaddq_s32(v, vshrq_n_s32(vandq_s32(v, right), 31));
        v = vrshlq_s32(v, right);
        vstrbq_s32(o + oc, vminq_s32(vmaxq_s32(vaddq_n_s32(v, zp), lo), hi));
      }
      if (oc < oc_n) {
        const int32_t nr = oc_n - oc;
        const mve_pred16_t pr = vctp32q((uint32_t)nr);
        const int8_t *w[4];
        for (int32_t r = 0; r < 4; r++) w[r] = p->filter + (oc + (r < nr ? r : 0)) * fs;
        int32_t acc[4] = {0, 0, 0, 0};
        mve_dot4(patch, w, fs, acc);
        const int32x4_t v = vaddq_s32(mve_vec4(acc), vldrwq_z_s32(fb + oc, pr));
        vstrbq_p_s32(o + oc, mve_requant(v, mve_rq_load(p->multiplier + oc, p->shift + oc, pr), zp, p->act_min,
                                         p->act_max), pr);
      }
    }
  }
}

/* A 1x1 (pointwise, pointer already moved) of whole channel groups with kb given, pixels outer: per pixel
   and group one mve_dot4_lob and the group's start value and requantisation loaded there (the fused
   runtime's calls of up to 8 pixels: no per-group set-up to repeat per call). */
static __attribute__((noinline)) void conv_pw_px(const bt_conv_params *p, const int32_t *kb, const int8_t *in,
                                                 int32_t in_y0, int8_t *out, int32_t y0, int32_t y1) {
  const int32_t ic_n = p->in.c, oc_n = p->out.c, ps = p->in.pixel_stride, ops = p->out.pixel_stride;
  const int32_t in_row = p->in.w * ps, out_row = p->out.w * ops, xstep = p->stride_w * ps, zp = p->output_offset;
  const int32x4_t lo = vdupq_n_s32(p->act_min), hi = vdupq_n_s32(p->act_max), zero = vdupq_n_s32(0);
  const int8_t *const f = p->filter;
  const int32_t *const mult = p->multiplier, *const shift = p->shift;
  for (int32_t y = y0; y < y1; y++) {
    const int8_t *x = in + (y * p->stride_h - in_y0) * in_row;
    int8_t *o = out + (y - y0) * out_row;
    for (int32_t i = 0; i < p->out.w; i++, x += xstep, o += ops)
      for (int32_t oc = 0; oc < oc_n; oc += 4) {
        int32_t acc[4] = {0, 0, 0, 0};
        mve_dot4_lob(x, f + oc * ic_n, ic_n, ic_n, acc);
        const int32x4_t s = vldrwq_s32(shift + oc), right = vminq_s32(s, zero);
        int32x4_t v = vaddq_s32(mve_vec4(acc), vldrwq_s32(kb + oc));
        v = vshlq_s32(v, vmaxq_s32(s, zero));
        v = vqrdmulhq_s32(v, vldrwq_s32(mult + oc));
        v = vqaddq_s32(v, vshrq_n_s32(vandq_s32(v, right), 31));
        v = vrshlq_s32(v, right);
        vstrbq_s32(o + oc, vminq_s32(vmaxq_s32(vaddq_n_s32(v, zp), lo), hi));
      }
  }
}

/* bt_conv_s8 with kb[oc] = bias[oc] + input_offset * (sum of filter oc's weights), wrapping as int32, made
   beforehand (code generation: the fused runtime's tile kernels, bt_variants.h), or kb 0: made here. */
void bt_conv_s8_kb(const bt_conv_params *p, const int32_t *kb, const int8_t *in, int32_t in_y0,
                   int8_t *out, int32_t y0, int32_t y1) {
  const int32_t ic_n = p->in.c, oc_n = p->out.c, ps = p->in.pixel_stride, ops = p->out.pixel_stride;
  const int32_t in_row = p->in.w * ps, out_row = p->out.w * ops;
  const int32_t fs = p->kh * p->kw * ic_n, io = p->input_offset;
  const int32_t dense = ps == ic_n && p->dil_w == 1;
  /* a 1x1 without padding; a tile of the fused runtime may start its input columns before the first
     output's (pad_left < 0: the pointer moves there) */
  const int32_t pointwise = p->kh == 1 && p->kw == 1 && p->pad_top == 0 && p->pad_left <= 0 &&
                            (p->out.h - 1) * p->stride_h < p->in.h &&
                            (p->out.w - 1) * p->stride_w - p->pad_left < p->in.w;
  if (pointwise) in -= p->pad_left * ps;
  if (pointwise && kb && oc_n % 4 == 0 && ic_n > 0 && (y1 - y0) * p->out.w <= 8) {
    conv_pw_px(p, kb, in, in_y0, out, y0, y1);
    return;
  }
  /* (gathering costs about a window row's loop per tap: worth it when the channel groups outnumber kw) */
  if (p->kw * ic_n < 16 && fs <= PATCH_MAX && oc_n <= FB_MAX && !pointwise && (oc_n + 3) / 4 > p->kw) {
    conv_patches(p, kb, in, in_y0, out, y0, y1, 0);
    return;
  }
  /* whole channel groups: the border pixels (window partly outside the image) as patches, all groups per
     gathered window (below, the groups' loops take only the pixels whose window is whole) */
  const int32_t borders = !pointwise && oc_n % 4 == 0 && fs <= PATCH_MAX && oc_n <= FB_MAX;
  int32_t kbuf[FB_MAX];
  if (borders && !kb) {   /* the start values once, for the patches and the groups' loops alike */
    for (int32_t oc = 0; oc < oc_n; oc++)
      kbuf[oc] = (int32_t)((uint32_t)(p->bias ? p->bias[oc] : 0) + (uint32_t)io * (uint32_t)mve_sum(p->filter + oc * fs, fs));
    kb = kbuf;
  }
  if (borders) conv_patches(p, kb, in, in_y0, out, y0, y1, 1);
  for (int32_t oc = 0; oc < oc_n; oc += 4) {
    const int32_t nr = oc_n - oc < 4 ? oc_n - oc : 4;
    const mve_pred16_t pr = vctp32q((uint32_t)nr);
    const int8_t *w[4];
    for (int32_t r = 0; r < 4; r++) w[r] = p->filter + (oc + (r < nr ? r : 0)) * fs;
    const int32x4_t bias = p->bias ? vldrwq_z_s32(p->bias + oc, pr) : vdupq_n_s32(0);
    int32x4_t fbias;
    if (kb) {
      fbias = vldrwq_z_s32(kb + oc, pr);
    } else {
      int32_t full[4];
      for (int32_t r = 0; r < 4; r++) full[r] = mve_sum(w[r], fs);
      fbias = vaddq_s32(bias, vmulq_n_s32(mve_vec4(full), io));
    }
    const mve_rq rq = mve_rq_load(p->multiplier + oc, p->shift + oc, pr);
    if (pointwise && nr == 4 && ic_n > 0) {
      pw_job j __attribute__((aligned(16)));
      j.fbias = fbias; j.mult = rq.mult; j.right = rq.right; j.left = rq.left;
      j.zp = vdupq_n_s32(p->output_offset); j.lo = vdupq_n_s32(p->act_min); j.hi = vdupq_n_s32(p->act_max);
      const int shl = vmaxvq_s32(0, rq.left) > 0;
      const int32_t xstep = p->stride_w * ps, ow = p->out.w;
      if (p->stride_h * in_row == ow * xstep && ow * ops == out_row) {   /* the band's pixels as one run */
        pw_rows(&j, w[0], fs, ic_n, in + (y0 * p->stride_h - in_y0) * in_row, xstep, (y1 - y0) * ow, out + oc, ops,
                shl);
      } else {
        for (int32_t y = y0; y < y1; y++)
          pw_rows(&j, w[0], fs, ic_n, in + (y * p->stride_h - in_y0) * in_row, xstep, ow,
                  out + (y - y0) * out_row + oc, ops, shl);
      }
      continue;
    }
    if (pointwise) {
      for (int32_t y = y0; y < y1; y++) {
        const int8_t *irow = in + (y * p->stride_h - in_y0) * in_row;
        int8_t *o = out + (y - y0) * out_row + oc;
        for (int32_t x = 0; x < p->out.w; x++, o += ops) {
          int32_t acc[4] = {0, 0, 0, 0};
          mve_dot4(irow + x * p->stride_w * ps, w, ic_n, acc);
          vstrbq_p_s32(o, mve_requant(vaddq_s32(mve_vec4(acc), fbias), rq, p->output_offset, p->act_min, p->act_max),
                       pr);
        }
      }
      continue;
    }
    /* output columns [xa, xb) have every tap column inside the image */
    int32_t xa = 0, xb = p->out.w;
    while (xa < xb && xa * p->stride_w - p->pad_left < 0) xa++;
    while (xb > xa && (xb - 1) * p->stride_w - p->pad_left + (p->kw - 1) * p->dil_w >= p->in.w) xb--;
    const int32x4_t kv[6] = {fbias, rq.mult, rq.left, rq.right, vdupq_n_s32(p->act_min), vdupq_n_s32(p->act_max)};
    const int32_t kk = dense && nr == 4 && (p->kw * ic_n) % 16 == 0 && p->kw * ic_n > 0;
    kk_job kj __attribute__((aligned(16)));
    const int kk_shl = vmaxvq_s32(0, rq.left) > 0;
    if (kk) {
      for (int32_t r = 0; r < 4; r++) kj.w[r] = w[r];
      kj.run = p->kw * ic_n; kj.ops = ops; kj.xstep = p->stride_w * ps; kj.kh = p->kh;
      kj.rowdelta = p->dil_h * in_row - kj.run;
      kj.fbias = fbias; kj.mult = rq.mult; kj.right = rq.right; kj.left = rq.left;
      kj.zp = vdupq_n_s32(p->output_offset); kj.lo = kv[4]; kj.hi = kv[5];
    }
    for (int32_t y = y0; y < y1; y++) {
      const int32_t iy0 = y * p->stride_h - p->pad_top;
      int32_t rows_in = 1;
      for (int32_t ky = 0; ky < p->kh; ky++) {
        const int32_t iy = iy0 + ky * p->dil_h;
        if (iy < 0 || iy >= p->in.h) rows_in = 0;
      }
      int8_t *o = out + (y - y0) * out_row + oc;
      for (int32_t x = 0; x < p->out.w; x++, o += ops) {
        if (rows_in && kk && x == xa && xb > xa) {
          const int8_t *x0 = in + (iy0 - in_y0) * in_row + (xa * p->stride_w - p->pad_left) * ps;
          kj.o = o; kj.xend = x0 + (xb - xa) * kj.xstep;
          (kk_shl ? kk_run_shl : kk_run)(&kj, x0);
          o += (xb - 1 - x) * ops;
          x = xb - 1;
          continue;
        }
        if (rows_in && dense && nr == 4 && x == xa && xb > xa) {
          conv_run(in + (iy0 - in_y0) * in_row + (xa * p->stride_w - p->pad_left) * ps, p->stride_w * ps,
                   p->dil_h * in_row, p->kh, p->kw * ic_n, w[0], fs, kv, p->output_offset, o, ops, xb - xa);
          o += (xb - 1 - x) * ops;
          x = xb - 1;
          continue;
        }
        const int32_t ix0 = x * p->stride_w - p->pad_left;
        int32_t kxa = 0, kxb = p->kw;
        while (kxa < kxb && ix0 + kxa * p->dil_w < 0) kxa++;
        while (kxb > kxa && ix0 + (kxb - 1) * p->dil_w >= p->in.w) kxb--;
        const int32_t whole = rows_in && kxa == 0 && kxb == p->kw;
        if (borders && !whole) continue;
        int32_t acc[4] = {0, 0, 0, 0}, sw[4] = {0, 0, 0, 0};
        for (int32_t ky = 0; ky < p->kh && kxa < kxb; ky++) {
          const int32_t iy = iy0 + ky * p->dil_h;
          if (iy < 0 || iy >= p->in.h) continue;
          const int8_t *irow = in + (iy - in_y0) * in_row;
          const int32_t f0 = (ky * p->kw + kxa) * ic_n;
          const int8_t *wk[4] = {w[0] + f0, w[1] + f0, w[2] + f0, w[3] + f0};
          if (dense) {
            const int8_t *ip = irow + (ix0 + kxa) * ps;
            if (whole && nr == 4) mve_dot4_lob(ip, wk[0], fs, (kxb - kxa) * ic_n, acc);
            else if (whole) mve_dot4(ip, wk, (kxb - kxa) * ic_n, acc);
            else mve_dot4_sum(ip, wk, (kxb - kxa) * ic_n, acc, sw);
          } else {
            for (int32_t kx = kxa; kx < kxb; kx++) {
              const int8_t *ip = irow + (ix0 + kx * p->dil_w) * ps;
              if (whole && nr == 4) mve_dot4_lob(ip, wk[0], fs, ic_n, acc);
              else if (whole) mve_dot4(ip, wk, ic_n, acc);
              else mve_dot4_sum(ip, wk, ic_n, acc, sw);
              for (int32_t r = 0; r < 4; r++) wk[r] += ic_n;
            }
          }
        }
        const int32x4_t start = whole ? fbias : vaddq_s32(bias, vmulq_n_s32(mve_vec4(sw), io));
        const int32x4_t v = mve_requant(vaddq_s32(mve_vec4(acc), start), rq, p->output_offset, p->act_min,
                                        p->act_max);
        vstrbq_p_s32(o, v, pr);
      }
    }
  }
}

void bt_conv_s8(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1) {
  bt_conv_s8_kb(p, 0, in, in_y0, out, y0, y1);
}
