/* DEPTHWISE_CONV_2D int8 per channel for Cortex-M55 Helium (MVE), depth multiplier 1: TFLM
 * DepthwiseConvPerChannel, byte for byte.
 *
 * Four channels per vector, one int32 lane each: per tap, the four input bytes and the four filter
 * bytes are loaded widened to int32 (VLDRB.S32, predicated for the last 1-3 channels: VCTP.32) and
 * multiplied and added to the accumulator (VMUL.I32 + VADD.I32: MVE's integer VMLA takes a scalar
 * operand only; whole groups load unpredicated, the last group's loads are zeroing-predicated). Channel groups outermost, so a group's bias, its
 * requantisation constants and input_offset * (sum of its filter taps) are made once per call; an
 * output pixel whose window lies inside the image (the columns found once per call) starts from that sum
 * (3x3 with dilation 1: the nine taps unrolled into two accumulators), a border pixel adds the input offset to each valid tap's input instead (VADD). Four
 * outputs requantised per vector and stored by one predicated VSTRB.32 (mve.h).
 * Depth multipliers above 1 use the reference code (included under another name); the in-place
 * variant runs this kernel row by row through a ring of rows in scratch, or channel by channel
 * (reference/dw_inplace_rows.h). */
#include "bt_kernels.h"
#include "requant.h"
#include "mve.h"


#define bt_depthwise_s8 bt_ref_depthwise_generic_s8
#define bt_depthwise_s8_inplace bt_ref_depthwise_inplace_s8
#include "../reference/depthwise_ref.h"
#undef bt_depthwise_s8
#undef bt_depthwise_s8_inplace

/* Four channels' bytes widened to int32: unpredicated for a whole group, zeroing-predicated for the last. */
#define DW_LD(ptr) (tail ? vldrbq_z_s32((ptr), pr) : vldrbq_s32(ptr))

/* A run of n output pixels of a 3x3 depthwise (dilation 1, every tap inside the image), four whole
 * channels: i0 is the first pixel's window's top-left input, step the input bytes between pixels, o
 * the first output. k: the nine taps widened to int32 [0..8], then the start (bias + input_offset *
 * taps' sum) [9], multiplier [10], left shift [11], right shift (<= 0) [12], activation min [13] and
 * max [14]. Per pixel: nine (VLDRB.S32 input, VLDRW tap, VMUL, VADD) on two accumulators, then the
 * requantisation of mve.h, all in registers (GCC 12 keeps the row pointers and the taps' addresses on
 * the stack here: three times the instructions). */
static __attribute__((noinline)) void dw33_run(const int8_t *i0, int32_t in_row, int32_t ps, int32_t step, const int32x4_t *k, int32_t zp,
                     int8_t *o, int32_t ops, int32_t n) {
  const int8_t *i1 = i0 + in_row, *i2 = i1 + in_row, *t;
  __asm__ volatile(
      "vldrw.32 q4, [%[k], #176]\n"
      "vldrw.32 q5, [%[k], #160]\n"
      "vldrw.32 q6, [%[k], #192]\n"
      "1:\n"
      "vldrb.s32 q0, [%[i0]]\n"
      "vldrw.32 q1, [%[k]]\n"
      "add %[t], %[i0], %[ps]\n"
      "vldrb.s32 q2, [%[t]]\n"
      "vldrw.32 q3, [%[k], #16]\n"
      "vmul.i32 q7, q0, q1\n"
      "add %[t], %[t], %[ps]\n"
      "vldrb.s32 q0, [%[t]]\n"
      "vldrw.32 q1, [%[k], #32]\n"
      "vmul.i32 q2, q2, q3\n"
      "vldrb.s32 q3, [%[i1]]\n"
      "vmul.i32 q0, q0, q1\n"
      "vldrw.32 q1, [%[k], #48]\n"
      "vadd.i32 q7, q7, q2\n"
      "vmul.i32 q3, q3, q1\n"
      "add %[t], %[i1], %[ps]\n"
      "vadd.i32 q7, q7, q0\n"
      "vldrb.s32 q0, [%[t]]\n"
      "vldrw.32 q1, [%[k], #64]\n"
      "add %[t], %[t], %[ps]\n"
      "vadd.i32 q7, q7, q3\n"
      "vldrb.s32 q2, [%[t]]\n"
      "vmul.i32 q0, q0, q1\n"
      "vldrw.32 q3, [%[k], #80]\n"
      "vldrb.s32 q1, [%[i2]]\n"
      "vmul.i32 q2, q2, q3\n"
      "vadd.i32 q7, q7, q0\n"
      "vldrw.32 q3, [%[k], #96]\n"
      "add %[t], %[i2], %[ps]\n"
      "vmul.i32 q1, q1, q3\n"
      "vadd.i32 q7, q7, q2\n"
      "vldrb.s32 q0, [%[t]]\n"
      "vldrw.32 q2, [%[k], #112]\n"
      "add %[t], %[t], %[ps]\n"
      "vadd.i32 q7, q7, q1\n"
      "vmul.i32 q0, q0, q2\n"
      "vldrb.s32 q1, [%[t]]\n"
      "vldrw.32 q3, [%[k], #128]\n"
      "vadd.i32 q7, q7, q0\n"
      "vmul.i32 q1, q1, q3\n"
      "vldrw.32 q2, [%[k], #144]\n"
      "vadd.i32 q7, q7, q1\n"
      "vadd.i32 q7, q7, q2\n"
      "vshl.s32 q7, q7, q4\n"
      "vqrdmulh.s32 q7, q7, q5\n"
      "vand q0, q7, q6\n"
      "vshr.s32 q0, q0, #31\n"
      "vqadd.s32 q7, q7, q0\n"
      "vrshl.s32 q7, q7, q6\n"
      "vadd.i32 q7, q7, %[zp]\n"
      "vldrw.32 q0, [%[k], #208]\n"
      "vldrw.32 q1, [%[k], #224]\n"
      "vmax.s32 q7, q7, q0\n"
      "vmin.s32 q7, q7, q1\n"
      "vstrb.32 q7, [%[o]]\n"
      "add %[o], %[o], %[ops]\n"
      "add %[i0], %[i0], %[step]\n"
      "add %[i1], %[i1], %[step]\n"
      "add %[i2], %[i2], %[step]\n"
      "subs %[n], %[n], #1\n"
      "bne 1b\n"
      : [i0] "+l"(i0), [i1] "+l"(i1), [i2] "+l"(i2), [o] "+l"(o), [n] "+r"(n), [t] "=&l"(t)
      : [k] "r"(k), [ps] "r"(ps), [step] "r"(step), [ops] "r"(ops), [zp] "r"(zp)
      : "memory", "cc", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10", "d11", "d12", "d13",
        "d14", "d15");
}

/* ---- 3x3 (dilation 1), eight channels per vector, every pixel on one asm loop ----
 * VLDRB.S16 loads eight input bytes widened to int16; the taps are int16 tables made per call; VMULLB.S16
 * and VMULLT.S16 multiply the even and the odd lanes into int32 products (channels c, c+2, c+4, c+6 and
 * c+1, c+3, c+5, c+7), added to two accumulators. Requantisation per accumulator (mve.h's, even and odd
 * constants), then VQMOVNB/VQMOVNT.S32 narrow both with saturation into one int16 vector in channel order,
 * VQADD.S16 of the output zero point (saturating: a value past int16 still clamps to the same end), the
 * clamp on eight lanes and one VSTRB.16 of the eight low bytes.
 * Border pixels run the same loop: a window row outside the image reads a row inside it with zero taps, and
 * a window with columns outside reads the nearest three columns inside (in.w >= 3) with its taps shifted
 * (dx = first column read - first window column; taps falling outside zero), its start value being
 * bias + input_offset * (sum of the taps kept). So a row of output is one call per run of pixels with the
 * same (valid rows, dx), each run's table made once per call per channel group. */
typedef struct {
  int16_t w[9][8];   /* taps, int16, channel order */
  int32_t se[4], so[4]; /* start: even channels, odd channels */
} dw8_tab;           /* 176 bytes */

typedef struct {
  int32_t mult_e[4], mult_o[4], left_e[4], left_o[4], right_e[4], right_o[4];
  int16_t zp[8], lo[8], hi[8];
} dw8_rq;            /* 144 bytes */

#define DW8_TAP(R, OFF)                 \
  "vldrb.s16 q2, [" R "]\n"             \
  "vldrh.16 q3, [%[k], #" OFF "]\n"      \
  "vmullb.s16 q4, q2, q3\n"             \
  "vadd.i32 q0, q0, q4\n"               \
  "vmullt.s16 q4, q2, q3\n"             \
  "vadd.i32 q1, q1, q4\n"

/* one window row: three taps, the row pointer moved by ps between them and to the next pixel's row after */
#define DW8_ROW(R, O0, O1, O2)          \
  DW8_TAP(R, O0)                        \
  "add " R ", " R ", %[ps]\n"           \
  DW8_TAP(R, O1)                        \
  "add " R ", " R ", %[ps]\n"           \
  DW8_TAP(R, O2)                        \
  "add " R ", " R ", %[step]\n"

#define DW8_RQ(ACC, MULT, LEFT, RIGHT, SHL)        \
  SHL("vldrw.32 q3, [%[rq], #" LEFT "]\n"          \
      "vshl.s32 " ACC ", " ACC ", q3\n")           \
  "vldrw.32 q3, [%[rq], #" MULT "]\n"              \
  "vqrdmulh.s32 " ACC ", " ACC ", q3\n"            \
  "vldrw.32 q3, [%[rq], #" RIGHT "]\n"             \
  "vand q4, " ACC ", q3\n"                         \
  "vshr.s32 q4, q4, #31\n"                         \
  "vqadd.s32 " ACC ", " ACC ", q4\n"               \
  "vrshl.s32 " ACC ", " ACC ", q3\n"

#define DW8_KEEP(x) x
#define DW8_DROP(x)

#define DW8_RUN(NAME, SHL)                                                                                   \
  static __attribute__((noinline)) void NAME(const int8_t *i0, const int8_t *i1, const int8_t *i2, int32_t ps, \
                                             int32_t step, const dw8_tab *k, const dw8_rq *rq, int8_t *o,    \
                                             int32_t ops, int32_t n) {                                       \
    __asm__ volatile(                                                                                        \
        "vldrw.32 q5, [%[rq], #96]\n"                                                                        \
        "vldrw.32 q6, [%[rq], #112]\n"                                                                       \
        "vldrw.32 q7, [%[rq], #128]\n"                                                                       \
        "1:\n"                                                                                               \
        "vldrw.32 q0, [%[k], #144]\n"                                                                        \
        "vldrw.32 q1, [%[k], #160]\n"                                                                        \
        DW8_ROW("%[i0]", "0", "16", "32")                                                                    \
        DW8_ROW("%[i1]", "48", "64", "80")                                                                   \
        DW8_ROW("%[i2]", "96", "112", "128")                                                                 \
        DW8_RQ("q0", "0", "32", "64", SHL)                                                                   \
        DW8_RQ("q1", "16", "48", "80", SHL)                                                                  \
        "vqmovnb.s32 q2, q0\n"                                                                               \
        "vqmovnt.s32 q2, q1\n"                                                                               \
        "vqadd.s16 q2, q2, q5\n"                                                                             \
        "vmax.s16 q2, q2, q6\n"                                                                              \
        "vmin.s16 q2, q2, q7\n"                                                                              \
        "vstrb.16 q2, [%[o]]\n"                                                                              \
        "add %[o], %[o], %[ops]\n"                                                                           \
        "subs %[n], %[n], #1\n"                                                                              \
        "bne 1b\n"                                                                                           \
        : [i0] "+l"(i0), [i1] "+l"(i1), [i2] "+l"(i2), [o] "+l"(o), [n] "+r"(n)                              \
        : [k] "r"(k), [rq] "r"(rq), [ps] "r"(ps), [step] "r"(step - 2 * ps), [ops] "r"(ops)                  \
        : "memory", "cc", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10", "d11", "d12",    \
          "d13", "d14", "d15");                                                                              \
  }

DW8_RUN(dw8_run, DW8_DROP)
DW8_RUN(dw8_run_shl, DW8_KEEP)

#define DW8_SLOTS 9
#define DW8_SEGS 16

/* The 3x3 depthwise of rows [y0, y1), channels [0, c_end) (c_end a multiple of 8), on dw8_run. Returns 0
 * (nothing done) when a window has no tap row or column inside the image, or the runs need more tables
 * than DW8_SLOTS. */
static int dw8_call(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1,
                    int32_t c_end) {
  const int32_t c_n = p->out.c, ps = p->in.pixel_stride, ops = p->out.pixel_stride;
  const int32_t in_h = p->in.h, in_w = p->in.w, out_w = p->out.w, in_row = in_w * ps, out_row = out_w * ops;
  const int32_t sh = p->stride_h, sw = p->stride_w, pt = p->pad_top, pl = p->pad_left, io = p->input_offset;
  /* column runs: [x, x + n) with the same dx */
  int32_t seg_x[DW8_SEGS], seg_n[DW8_SEGS], seg_dx[DW8_SEGS], nseg = 0;
  for (int32_t x = 0; x < out_w; x++) {
    const int32_t ix0 = x * sw - pl;
    const int32_t sx = ix0 < 0 ? 0 : ix0 > in_w - 3 ? in_w - 3 : ix0, dx = sx - ix0;
    if (dx < -2 || dx > 2) return 0;
    if (nseg > 0 && seg_dx[nseg - 1] == dx) { seg_n[nseg - 1]++; continue; }
    if (nseg == DW8_SEGS) return 0;
    seg_x[nseg] = x; seg_n[nseg] = 1; seg_dx[nseg] = dx; nseg++;
  }
  /* row patterns (first, last valid window row) of the rows, and the tables: slot[pattern][segment] */
  int32_t pat_a[4], pat_b[4], npat = 0, run_y[DW8_SEGS], run_p[DW8_SEGS], nrun = 0;
  for (int32_t y = y0; y < y1; y++) {
    const int32_t iy0 = y * sh - pt;
    const int32_t a = iy0 < 0 ? -iy0 : 0, b = iy0 + 3 > in_h ? in_h - iy0 : 3;
    if (a >= b) return 0;
    int32_t j = 0;
    while (j < npat && (pat_a[j] != a || pat_b[j] != b)) j++;
    if (j == npat) {
      if (npat == 4) return 0;
      pat_a[npat] = a; pat_b[npat] = b; npat++;
    }
    if (nrun > 0 && run_p[nrun - 1] == j) continue;
    if (nrun == DW8_SEGS - 1) return 0;
    run_y[nrun] = y; run_p[nrun] = j; nrun++;
  }
  run_y[nrun] = y1;
  int32_t dxs[5], ndx = 0, seg_d[DW8_SEGS];
  for (int32_t s = 0; s < nseg; s++) {
    int32_t j = 0;
    while (j < ndx && dxs[j] != seg_dx[s]) j++;
    if (j == ndx) dxs[ndx++] = seg_dx[s];
    seg_d[s] = j;
  }
  if (npat * ndx > DW8_SLOTS) return 0;
  /* table (pattern pi, dx index di) = slot pi * ndx + di: tap t (window row ky, column j read) is the
     filter's tap (ky, j + dx) when that row is inside and that column exists, else zero (9) */
  uint8_t map[DW8_SLOTS][9];
  for (int32_t pi = 0; pi < npat; pi++)
    for (int32_t di = 0; di < ndx; di++)
      for (int32_t ky = 0; ky < 3; ky++)
        for (int32_t j = 0; j < 3; j++) {
          const int32_t kx = j + dxs[di];
          map[pi * ndx + di][ky * 3 + j] =
              (uint8_t)(ky >= pat_a[pi] && ky < pat_b[pi] && kx >= 0 && kx < 3 ? ky * 3 + kx : 9);
        }
  dw8_tab tab[DW8_SLOTS] __attribute__((aligned(16)));
  dw8_rq rq __attribute__((aligned(16)));
  for (int32_t i = 0; i < 8; i++) {
    rq.zp[i] = (int16_t)p->output_offset; rq.lo[i] = (int16_t)p->act_min; rq.hi[i] = (int16_t)p->act_max;
  }
  for (int32_t c = 0; c < c_end; c += 8) {
    int shl = 0;
    int32_t be[4], bo[4];
    for (int32_t i = 0; i < 4; i++) {
      const int32_t ce = c + 2 * i, co = ce + 1;
      rq.mult_e[i] = p->multiplier[ce]; rq.mult_o[i] = p->multiplier[co];
      rq.left_e[i] = p->shift[ce] > 0 ? p->shift[ce] : 0; rq.left_o[i] = p->shift[co] > 0 ? p->shift[co] : 0;
      rq.right_e[i] = p->shift[ce] > 0 ? 0 : p->shift[ce]; rq.right_o[i] = p->shift[co] > 0 ? 0 : p->shift[co];
      shl |= p->shift[ce] > 0 || p->shift[co] > 0;
      be[i] = p->bias ? p->bias[ce] : 0; bo[i] = p->bias ? p->bias[co] : 0;
    }
    const int32x4_t vbe = vldrwq_s32(be), vbo = vldrwq_s32(bo);
    /* the group's nine taps widened once ([9]: zero), then each table's taps picked by map */
    int16x8_t base[10];
    for (int32_t t = 0; t < 9; t++) base[t] = vldrbq_s16(p->filter + c + t * c_n);
    base[9] = vdupq_n_s16(0);
    for (int32_t sl = 0; sl < npat * ndx; sl++) {
      dw8_tab *tb = &tab[sl];
      int16x8_t sum = vdupq_n_s16(0);
      for (int32_t t = 0; t < 9; t++) {
        const int16x8_t w = base[map[sl][t]];
        vst1q_s16(tb->w[t], w);
        sum = vaddq_s16(sum, w);
      }
      vst1q_s32(tb->se, vaddq_s32(vbe, vmulq_n_s32(vmovlbq_s16(sum), io)));
      vst1q_s32(tb->so, vaddq_s32(vbo, vmulq_n_s32(vmovltq_s16(sum), io)));
    }
    /* runs of rows with the same pattern; per run and column run one call along its longer side */
    for (int32_t ri = 0; ri < nrun; ri++) {
      const int32_t ya = run_y[ri], yb = run_y[ri + 1], pi = run_p[ri], iy0 = ya * sh - pt;
      const int32_t a = pat_a[pi], b = pat_b[pi];
      const int8_t *rows[3];
      for (int32_t ky = 0; ky < 3; ky++) {
        const int32_t r = ky < a ? a : ky >= b ? b - 1 : ky;   /* a row outside: a row inside, zero taps */
        rows[ky] = in + (iy0 + r - in_y0) * in_row + c;
      }
      int8_t *orow = out + (ya - y0) * out_row + c;
      const int32_t ny = yb - ya;
      for (int32_t s = 0; s < nseg; s++) {
        const int32_t off = (seg_x[s] * sw - pl + seg_dx[s]) * ps;
        const dw8_tab *k = &tab[pi * ndx + seg_d[s]];
        int8_t *o = orow + seg_x[s] * ops;
        if (seg_n[s] >= ny) {
          for (int32_t y = 0; y < ny; y++)
            (shl ? dw8_run_shl : dw8_run)(rows[0] + off + y * sh * in_row, rows[1] + off + y * sh * in_row,
                                          rows[2] + off + y * sh * in_row, ps, sw * ps, k, &rq, o + y * out_row, ops,
                                          seg_n[s]);
        } else {
          for (int32_t x = 0; x < seg_n[s]; x++)
            (shl ? dw8_run_shl : dw8_run)(rows[0] + off + x * sw * ps, rows[1] + off + x * sw * ps,
                                          rows[2] + off + x * sw * ps, ps, sh * in_row, k, &rq, o + x * ops, out_row,
                                          ny);
        }
      }
    }
  }
  return 1;
}

/* Channel group [c, c + 4) of output rows [y0, y1) (tail: fewer than 4 channels left, pr their lanes).
 * Every parameter is a local: a store through `out` may alias the parameter block, and the compiler would
 * read each field again after every store. */
static inline __attribute__((always_inline)) void dw_group(const bt_conv_params *p, const int8_t *in, int32_t in_y0,
                                                           int8_t *out, int32_t y0, int32_t y1, int32_t c,
                                                           mve_pred16_t pr, const int tail) {
  const int32_t c_n = p->out.c, ps = p->in.pixel_stride, ops = p->out.pixel_stride;
  const int32_t in_h = p->in.h, in_w = p->in.w, out_w = p->out.w, in_row = in_w * ps;
  const int32_t out_row = out_w * ops, io = p->input_offset, zp = p->output_offset;
  const int32_t lo = p->act_min, hi = p->act_max, kh = p->kh, kw = p->kw, taps = kh * kw;
  const int32_t sh = p->stride_h, sw = p->stride_w, dh = p->dil_h, dw = p->dil_w, pt = p->pad_top, pl = p->pad_left;
  const int32_t k33 = kh == 3 && kw == 3 && dh == 1 && dw == 1;
  const int8_t *f = p->filter + c;
  int32x4_t sum = vdupq_n_s32(0);
  for (int32_t t = 0; t < taps; t++) sum = vaddq_s32(sum, DW_LD(f + t * c_n));
  const int32x4_t bias = p->bias ? (tail ? vldrwq_z_s32(p->bias + c, pr) : vldrwq_s32(p->bias + c)) : vdupq_n_s32(0);
  const int32x4_t fbias = vaddq_s32(bias, vmulq_n_s32(sum, io));
  const mve_rq rq = mve_rq_load(p->multiplier + c, p->shift + c, pr);
  /* output columns [xa, xb) have every tap column inside the image */
  int32_t xa = 0, xb = out_w;
  while (xa < out_w && xa * sw - pl < 0) xa++;
  while (xb > xa && (xb - 1) * sw - pl + (kw - 1) * dw >= in_w) xb--;
  /* a 3x3 filter's nine taps of the group, widened once (one base address for the nine loads per pixel) */
  int32x4_t w9[15];
  if (k33) {
    for (int32_t t = 0; t < 9; t++) w9[t] = DW_LD(f + t * c_n);
    w9[9] = fbias; w9[10] = rq.mult; w9[11] = rq.left; w9[12] = rq.right;
    w9[13] = vdupq_n_s32(lo); w9[14] = vdupq_n_s32(hi);
  }
  const int32_t ps2 = 2 * ps;
  for (int32_t y = y0; y < y1; y++) {
    const int32_t iy0 = y * sh - pt;
    int32_t kya = 0, kyb = kh;
    while (kya < kyb && iy0 + kya * dh < 0) kya++;
    while (kyb > kya && iy0 + (kyb - 1) * dh >= in_h) kyb--;
    int8_t *orow = out + (y - y0) * out_row + c;
    const int8_t *ib = in + (iy0 - in_y0) * in_row + c;   /* window row 0 (may lie outside the band) */
    const int32_t full_rows = kya == 0 && kyb == kh;
    for (int32_t x = 0; x < out_w; x++) {
      if (!tail && k33 && full_rows && x == xa && xb > xa) {
        dw33_run(ib + (xa * sw - pl) * ps, in_row, ps, sw * ps, w9, zp, orow + xa * ops, ops, xb - xa);
        x = xb - 1;
        continue;
      }
      const int32_t ix0 = x * sw - pl;
      int32x4_t acc;
      if (full_rows && x >= xa && x < xb) {
        const int8_t *ip = ib + ix0 * ps;
        if (k33) {
          const int8_t *i1 = ip + in_row, *i2 = i1 + in_row;
          int32x4_t a = vmulq_s32(DW_LD(ip), w9[0]);
          int32x4_t b = vmulq_s32(DW_LD(ip + ps), w9[1]);
          a = vaddq_s32(a, vmulq_s32(DW_LD(ip + ps2), w9[2]));
          b = vaddq_s32(b, vmulq_s32(DW_LD(i1), w9[3]));
          a = vaddq_s32(a, vmulq_s32(DW_LD(i1 + ps), w9[4]));
          b = vaddq_s32(b, vmulq_s32(DW_LD(i1 + ps2), w9[5]));
          a = vaddq_s32(a, vmulq_s32(DW_LD(i2), w9[6]));
          b = vaddq_s32(b, vmulq_s32(DW_LD(i2 + ps), w9[7]));
          a = vaddq_s32(a, vmulq_s32(DW_LD(i2 + ps2), w9[8]));
          acc = vaddq_s32(vaddq_s32(a, b), fbias);
        } else {
          acc = fbias;
          for (int32_t ky = 0; ky < kh; ky++) {
            const int8_t *ir = ip + ky * dh * in_row;
            const int8_t *fk = f + ky * kw * c_n;
            for (int32_t kx = 0; kx < kw; kx++)
              acc = vaddq_s32(acc, vmulq_s32(DW_LD(ir + kx * dw * ps), DW_LD(fk + kx * c_n)));
          }
        }
      } else {
        int32_t kxa = 0, kxb = kw;
        while (kxa < kxb && ix0 + kxa * dw < 0) kxa++;
        while (kxb > kxa && ix0 + (kxb - 1) * dw >= in_w) kxb--;
        acc = bias;
        for (int32_t ky = kya; ky < kyb; ky++) {
          const int8_t *ir = ib + ky * dh * in_row + ix0 * ps;
          const int8_t *fk = f + ky * kw * c_n;
          for (int32_t kx = kxa; kx < kxb; kx++)
            acc = vaddq_s32(acc, vmulq_s32(vaddq_n_s32(DW_LD(ir + kx * dw * ps), io), DW_LD(fk + kx * c_n)));
        }
      }
      acc = mve_requant(acc, rq, zp, lo, hi);
      if (tail) vstrbq_p_s32(orow + x * ops, acc, pr);
      else vstrbq_s32(orow + x * ops, acc);
    }
  }
}

/* One output pixel's channels [c, c + 4) (tail: fewer left, pr their lanes), its valid taps only: per tap
   the four input and filter bytes widened (VLDRB.S32), VMUL + VADD, the taps' sum alongside for the input
   offset; requantised and stored (the channel's values loaded here: no per-call set-up). */
static inline __attribute__((always_inline)) void dw_px_group(const bt_conv_params *p, const int8_t *ib, const int8_t *f,
                                                              int32_t kya, int32_t kyb, int32_t kxa, int32_t kxb,
                                                              int8_t *o, int32_t c, mve_pred16_t pr, const int tail) {
  const int32_t c_n = p->out.c, in_row = p->in.w * p->in.pixel_stride;
  const int32_t dy = p->dil_h * in_row, dx = p->dil_w * p->in.pixel_stride;
  int32x4_t acc = p->bias ? (tail ? vldrwq_z_s32(p->bias + c, pr) : vldrwq_s32(p->bias + c)) : vdupq_n_s32(0);
  int32x4_t sw = vdupq_n_s32(0);
  for (int32_t ky = kya; ky < kyb; ky++) {
    const int8_t *ip = ib + ky * dy + kxa * dx, *fk = f + (ky * p->kw + kxa) * c_n;
    for (int32_t kx = kxa; kx < kxb; kx++, ip += dx, fk += c_n) {
      const int32x4_t w = DW_LD(fk);
      acc = vaddq_s32(acc, vmulq_s32(DW_LD(ip), w));
      sw = vaddq_s32(sw, w);
    }
  }
  acc = vaddq_s32(acc, vmulq_n_s32(sw, p->input_offset));
  acc = mve_requant(acc, mve_rq_load(p->multiplier + c, p->shift + c, pr), p->output_offset, p->act_min, p->act_max);
  if (tail) vstrbq_p_s32(o, acc, pr);
  else vstrbq_s32(o, acc);
}

/* Calls of up to 4 output pixels (the fused runtime's tiles): pixels outer, channel groups inner. */
static __attribute__((noinline)) void dw_px(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out,
                                            int32_t y0, int32_t y1) {
  const int32_t c_n = p->out.c, ps = p->in.pixel_stride, ops = p->out.pixel_stride, in_row = p->in.w * ps;
  for (int32_t y = y0; y < y1; y++) {
    const int32_t iy0 = y * p->stride_h - p->pad_top;
    int32_t kya = 0, kyb = p->kh;
    while (kya < kyb && iy0 + kya * p->dil_h < 0) kya++;
    while (kyb > kya && iy0 + (kyb - 1) * p->dil_h >= p->in.h) kyb--;
    for (int32_t x = 0; x < p->out.w; x++) {
      const int32_t ix0 = x * p->stride_w - p->pad_left;
      int32_t kxa = 0, kxb = p->kw;
      while (kxa < kxb && ix0 + kxa * p->dil_w < 0) kxa++;
      while (kxb > kxa && ix0 + (kxb - 1) * p->dil_w >= p->in.w) kxb--;
      const int8_t *ib = in + (iy0 - in_y0) * in_row + ix0 * ps;
      int8_t *o = out + (y - y0) * p->out.w * ops + x * ops;
      int32_t c = 0;
      for (; c + 4 <= c_n; c += 4) dw_px_group(p, ib + c, p->filter + c, kya, kyb, kxa, kxb, o + c, c, vctp32q(4), 0);
      if (c < c_n)
        dw_px_group(p, ib + c, p->filter + c, kya, kyb, kxa, kxb, o + c, c, vctp32q((uint32_t)(c_n - c)), 1);
    }
  }
}

void bt_depthwise_s8(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0,
                     int8_t *out, int32_t y0, int32_t y1) {
  if (dp->depth_multiplier != 1) {
    bt_ref_depthwise_generic_s8(dp, in, in_y0, out, y0, y1);
    return;
  }
  const bt_conv_params *p = &dp->conv;
  const int32_t c_n = p->out.c;
  if ((y1 - y0) * p->out.w <= 4) {
    dw_px(p, in, in_y0, out, y0, y1);
    return;
  }
  int32_t c = 0;
  if (p->kh == 3 && p->kw == 3 && p->dil_h == 1 && p->dil_w == 1 && p->in.w >= 3 && c_n >= 8 &&
      dw8_call(p, in, in_y0, out, y0, y1, c_n & ~7))
    c = c_n & ~7;
  for (; c + 4 <= c_n; c += 4) dw_group(p, in, in_y0, out, y0, y1, c, vctp32q(4), 0);
  if (c < c_n) dw_group(p, in, in_y0, out, y0, y1, c, vctp32q((uint32_t)(c_n - c)), 1);
}

#include "dw_inplace_rows.h"
