/* dw_kxk.h -- part of depthwise.c (included after dw_rows, whose dw_widen, dw_chan and dw_requant it uses):
 * 5x5 and 7x7 depthwise, depth multiplier 1, dilation 1, stride_w 1 or 2 (any stride_h), any channel count,
 * padding and map size (issue 29's held-out clause: MCUNet, MobileNetV3, MnasNet, EfficientNet-lite take these;
 * they ran the general per-pixel loops at 4.5-8 est. cycles a MAC). Per strip of output columns (at most DWK_NMAX
 * outputs), group of (up to) four channels and chunk of output rows, the chunk's input rows inside the image are
 * widened once (dw_widen, stride 1 along the row whatever the layer's stride; a dense one-channel plane, the in-place
 * kernel's per-channel calls, by dwk_widen1) into one int16 plane per channel, rows rl cells apart, the cells left and
 * right of the image the input zero point (the input offset times the weights' sum is in the bias: border columns are
 * no special case); tap rows above or below the image are skipped (their weights' share of that bias taken out per
 * output row: dwk_rows' pre). Per channel and output row, four outputs a pass with SMLAD on column pairs, every cell
 * word loaded once a pass and every load word-aligned:
 *   stride 1, outputs x..x+3 (x even): per tap row the words of cells x..x+K+2; with the row's pairs
 *     P_i = (w_i, w_i+1) stored as A_j = P_2j and B_j = P_2j+1 (K - 1 words): out x = sum_j SMLAD(p_j, A_j) +
 *     SMLABT(p_H, B_H-1), out x+1 = SMLATB(p_0, A_0) + sum_j SMLAD(p_j+1, B_j) (H = (K - 1) / 2), x+2 and x+3
 *     the same one word on (7x7: 5 LDR of cells, 6 of weights, 16 MAC instructions for 28 MACs a tap row);
 *   stride 2, outputs x..x+3: out x+k reads cells from 2x+2k, an even cell: sum_j SMLAD(p_k+j, A_j) +
 *     SMLABB(p_k+H, w_K-1) ((K + 1) / 2 weight words a tap row),
 * then a pair and a single output. The whole int8 range with every channel bt_rq2_zp_ok (fast, sat): doubled weights
 * and bias (dw_rqm's 2a, |a| < 2^29 + 49 * 255 * 128 < 2^30), each output by dw_rqm with the zero point folded and
 * SSAT in dwk_rows; other layers' sums go to a stack row and dw_rows' dw_requant (bt_rq2, or bt_mbqm_fast where
 * bt_rq2 cannot take a channel or a bias is 2^29 or more). Weights set up once per strip and group (dwk_weights4).
 * Measured (cortex-m4 est. high; before: the general loops): mcunet-vww1's 10x10x120 5x5 2418 K -> 873 K, 10x10x48
 * 7x7 stride 2 1759 K -> 650 K, 5x5x240 7x7 1334 K -> 784 K, 5x5x144 7x7 stride 2 1125 K -> 553 K; mcunet-in3's
 * in-place 44x44x80 7x7 153.2 M -> 16.0 M. Stack: dwk's frame 4272 bytes (planes 2688 + dw_fill_z's 16 bytes of
 * slack, 4 x 42 weight words, 56 sums; dwk_rows 136-144 below it), dw_rows' 4280; nothing in the arena. */

#define DWK_CELLS DW_CELLS /* int16 cells of four channels' planes (dw_rows': 2688 bytes) */
#define DWK_NMAX 56    /* most outputs of a strip (its sums' row) */
#define DWK_WMAX 42    /* weight words of a channel (7x7 stride 1: 7 rows of 6) */
#define DWK_ACC 56     /* sums of a chunk (layers not requantised in dwk_rows): at least a strip's row */
_Static_assert(DWK_ACC >= DWK_NMAX, "dwk's chunks of one row must fit acc");
/* Calls of fewer output pixels take the general loops: a group's set-up (weights, widening) did not repay on vww1's
 * 3x3x240 5x5 and 3x3x288 7x7 layers (309 K -> 395 K and 271 K -> 499 K cycles, cortex-m4 est. high), whose general
 * loops also skip the taps outside the image (3 of 5 and 3 of 7 a row); its 5x5x240 7x7 layer gains (1334 K -> 784 K). */
#define DWK_MIN_PIXELS 16

/* A chunk's rows for dwk_rows: rl cells a plane row, rstep cells from an output row's first tap row to the next one's,
 * n outputs a row, rows of them, ops and out_row bytes between outputs and rows, iy0 the input row of the first
 * output row's tap row 0, ih the image's rows, sh the stride down. */
typedef struct {
  int32_t rl, rstep, n, rows, ops, out_row, iy0, ih, sh;
} dwk_geo;

/* One channel's `rows` output rows from its plane r (cell 0 the input column of output 0's tap 0; r word-aligned, rl
 * even), weights w (WR words a tap row), f's bias and requantisation; tap rows outside the image skipped (their
 * cells the zero point: pre[t] = the input offset times tap rows 0..t-1's weight sums leaves the bias). sat: each
 * output by dw_rqm (the zero point folded) and SSAT into o; else the sums into acc (n a row). */
static inline __attribute__((always_inline)) void dwk_rows(const int16_t *r, const int32_t *w, const int32_t *pre,
                                                          const dw_chan *f, const dwk_geo *G, int32_t *acc, int8_t *o,
                                                          const int K, const int s, const int sat) {
  const int H = (K - 1) / 2, WR = s == 1 ? K - 1 : (K + 1) / 2, PW = s == 1 ? H + 2 : H + 4;
  const int32_t rw = G->rl >> 1, n = G->n, ops = G->ops, rows = G->rows, ih = G->ih;
  const int32_t m = f->m, pm = f->p2, e = f->e1, full = f->bias - pre[K];
  int32_t iy = G->iy0;
  for (int32_t y = 0; y < rows; y++, r += G->rstep, iy += G->sh, o += G->out_row, acc += n) {
    const int32_t t0 = iy < 0 ? -iy : 0;
    int32_t t1 = ih - iy;
    t1 = t1 > K ? K : (t1 < t0 ? t0 : t1);
    const int32_t b = full + pre[t1] - pre[t0], nt = t1 - t0;
    const uint32_t *const q0 = (const uint32_t *)(const void *)(r + t0 * G->rl);
    const int32_t *const w0 = w + t0 * WR;
    int8_t *d = o;
    int32_t x = 0;
#define DWK_OUT(v, i)                                                \
  do {                                                               \
    if (sat) { *d = (int8_t)bt_ssat8(dw_rqm((v), m, pm, e)); d += ops; } \
    else acc[x + (i)] = (v);                                         \
  } while (0)
    for (; x + 4 <= n; x += 4) {
      const uint32_t *q = q0 + (s == 1 ? x >> 1 : x);
      const int32_t *wt = w0;
      int32_t a[4] = {b, b, b, b};
#define DWK_QUAD_ROW()                                                                    \
  do {                                                                                    \
    uint32_t pw[8];                                                                       \
    int32_t wv[8];                                                                        \
    _Pragma("GCC unroll 8") for (int i = 0; i < PW; i++) pw[i] = q[i];                    \
    _Pragma("GCC unroll 8") for (int j = 0; j < WR; j++) wv[j] = wt[j];                   \
    if (s == 1) {                                                                         \
      _Pragma("GCC unroll 2") for (int k = 0; k < 2; k++) {                               \
        int32_t ev = a[2 * k], od = a[2 * k + 1];                                         \
        od = bt_smlatb(pw[k], wv[0], od);                                                 \
        _Pragma("GCC unroll 4") for (int j = 0; j < H; j++) {                             \
          ev = bt_smlad(pw[k + j], wv[j], ev);                                            \
          od = bt_smlad(pw[k + j + 1], wv[H + j], od);                                    \
        }                                                                                 \
        ev = bt_smlabt(pw[k + H], wv[2 * H - 1], ev);                                     \
        a[2 * k] = ev; a[2 * k + 1] = od;                                                 \
      }                                                                                   \
    } else {                                                                              \
      _Pragma("GCC unroll 4") for (int k = 0; k < 4; k++) {                               \
        int32_t ev = a[k];                                                                \
        _Pragma("GCC unroll 4") for (int j = 0; j < H; j++) ev = bt_smlad(pw[k + j], wv[j], ev); \
        a[k] = bt_smlabb(pw[k + H], wv[H], ev);                                           \
      }                                                                                   \
    }                                                                                     \
  } while (0)
      /* stride 1 with every tap row inside the image: straight-line (no count, no branch a tap row: vww1's 10x10x120
         5x5 905 K -> 875 K, in3's 44x44x80 7x7 19.3 M -> 18.5 M; at stride 2 the unrolled rows spilled, 10x10x48
         7x7 629 K -> 693 K) */
      if (s == 1 && nt == K) {
#pragma GCC unroll 8
        for (int t = 0; t < K; t++, q += rw, wt += WR) DWK_QUAD_ROW();
      } else {
        for (int32_t t = nt; t > 0; t--, q += rw, wt += WR) DWK_QUAD_ROW();
      }
#undef DWK_QUAD_ROW
      DWK_OUT(a[0], 0); DWK_OUT(a[1], 1); DWK_OUT(a[2], 2); DWK_OUT(a[3], 3);
    }
    if (x + 2 <= n) {   /* a pair */
      const uint32_t *q = q0 + (s == 1 ? x >> 1 : x);
      const int32_t *wt = w0;
      int32_t ev = b, od = b;
      for (int32_t t = nt; t > 0; t--, q += rw, wt += WR) {
        if (s == 1) {
          od = bt_smlatb(q[0], wt[0], od);
#pragma GCC unroll 4
          for (int j = 0; j < H; j++) {
            ev = bt_smlad(q[j], wt[j], ev);
            od = bt_smlad(q[j + 1], wt[H + j], od);
          }
          ev = bt_smlabt(q[H], wt[2 * H - 1], ev);
        } else {
#pragma GCC unroll 4
          for (int j = 0; j < H; j++) {
            ev = bt_smlad(q[j], wt[j], ev);
            od = bt_smlad(q[j + 1], wt[j], od);
          }
          ev = bt_smlabb(q[H], wt[H], ev);
          od = bt_smlabb(q[H + 1], wt[H], od);
        }
      }
      DWK_OUT(ev, 0); DWK_OUT(od, 1);
      x += 2;
    }
    if (x < n) {   /* a single output (x even: the cell after its last tap, in its last word, unused) */
      const uint32_t *q = q0 + (s == 1 ? x >> 1 : x);
      const int32_t *wt = w0;
      int32_t ev = b;
      for (int32_t t = nt; t > 0; t--, q += rw, wt += WR) {
#pragma GCC unroll 4
        for (int j = 0; j < H; j++) ev = bt_smlad(q[j], wt[j], ev);
        ev = s == 1 ? bt_smlabt(q[H], wt[2 * H - 1], ev) : bt_smlabb(q[H], wt[H], ev);
      }
      DWK_OUT(ev, 0);
    }
#undef DWK_OUT
  }
}

typedef void (*dwk_rows_fn)(const int16_t *, const int32_t *, const int32_t *, const dw_chan *, const dwk_geo *,
                            int32_t *, int8_t *);
#define DWK_ROWS(K, s, sat)                                                                                      \
  static void dwk_rows_##K##_##s##_##sat(const int16_t *r, const int32_t *w, const int32_t *pre, const dw_chan *f, \
                                         const dwk_geo *G, int32_t *acc, int8_t *o) {                            \
    dwk_rows(r, w, pre, f, G, acc, o, K, s, sat);                                                               \
  }
DWK_ROWS(5, 1, 0)
DWK_ROWS(5, 2, 0)
DWK_ROWS(7, 1, 0)
DWK_ROWS(7, 2, 0)
DWK_ROWS(5, 1, 1)
DWK_ROWS(5, 2, 1)
DWK_ROWS(7, 1, 1)
DWK_ROWS(7, 2, 1)
#undef DWK_ROWS
#if defined(DW_PART_ROWS) || !defined(BT_CM_DEPTHWISE_CORE_H)
static const dwk_rows_fn dwk_rows_fns[2][2][2] = {
    {{dwk_rows_5_1_0, dwk_rows_5_2_0}, {dwk_rows_7_1_0, dwk_rows_7_2_0}},
    {{dwk_rows_5_1_1, dwk_rows_5_2_1}, {dwk_rows_7_1_1, dwk_rows_7_2_1}}};
#else   /* not this file's: its functions not kept by -O0 (whose -fno-toplevel-reorder keeps a table) */
static const dwk_rows_fn dwk_rows_fns[2][2][2];
#endif

/* 1 when dwk takes the layer (depth multiplier 1 is the caller's). */
static int dwk_ok(const bt_conv_params *p) {
  return (p->kh == 5 || p->kh == 7) && p->kw == p->kh && p->dil_h == 1 && p->dil_w == 1 &&
         (p->stride_w == 1 || p->stride_w == 2) && p->stride_h >= 1 && p->out.w > 0;
}

/* Four channels c..c+3's weights (ws[k], WR words a tap row: stride 1 A_0.., B_0.., stride 2 A_0.., w_K-1; dm ~0
 * for doubled weights, else 0) and each tap row's weight sums (rs[k][t]): a word a tap, SXTB16 halves (c, c+2) and
 * (c+1, c+3), pairs by PKHBT/PKHTB; K and s constants, the taps unrolled (a run-time K loop with its branches took
 * ~57 cycles a tap, 2.8 K a group of 7x7: a third of vww1's 5x5x240 layer). */
static inline __attribute__((always_inline)) void dwk_weights4(const int8_t *f, int32_t c_n, uint32_t dm,
                                                              int32_t (*ws)[DWK_WMAX], int32_t (*rs)[8], const int K,
                                                              const int s) {
  const int H = (K - 1) / 2, WR = s == 1 ? K - 1 : (K + 1) / 2;
  for (int32_t t = 0; t < K; t++) {
    int32_t se = 0, so = 0;   /* the tap row's sums */
    int32_t *const w0 = ws[0] + t * WR, *const w1 = ws[1] + t * WR, *const w2 = ws[2] + t * WR,
                   *const w3 = ws[3] + t * WR;
    uint32_t pe = 0, po = 0;   /* tap j - 1's halves */
#pragma GCC unroll 8
    for (int j = 0; j < K; j++, f += c_n) {
      const uint32_t W = bt_ld4(f);
      uint32_t e = (uint32_t)bt_sxtb16(W), o = (uint32_t)bt_sxtb16_ror8(W);
      se = bt_sadd16(se, (int32_t)e);
      so = bt_sadd16(so, (int32_t)o);
      e = (uint32_t)bt_sadd16((int32_t)e, (int32_t)(e & dm));
      o = (uint32_t)bt_sadd16((int32_t)o, (int32_t)(o & dm));
      if (j > 0 && (s == 1 || (j & 1))) {   /* pair (w_j-1, w_j): stride 1 A_(j-1)/2 or B_(j-2)/2, stride 2 A_(j-1)/2 */
        const int i = (j & 1) ? (j - 1) >> 1 : H + ((j - 2) >> 1);
        w0[i] = (int32_t)bt_pkhbt16(pe, e); w2[i] = (int32_t)bt_pkhtb16(e, pe);
        w1[i] = (int32_t)bt_pkhbt16(po, o); w3[i] = (int32_t)bt_pkhtb16(o, po);
      } else if (s == 2 && j == K - 1) {   /* w_K-1 alone (its top half unused) */
        w0[H] = (int32_t)e; w2[H] = (int32_t)e >> 16; w1[H] = (int32_t)o; w3[H] = (int32_t)o >> 16;
      }
      pe = e; po = o;
    }
    rs[0][t + 1] = (int16_t)se; rs[1][t + 1] = (int16_t)so; rs[2][t + 1] = se >> 16; rs[3][t + 1] = so >> 16;
  }
}

/* Channels c..c+nc-1's weights and tap rows' weight sums as dwk_weights4's (d: 2 for doubled weights). */
static __attribute__((noinline)) void dwk_weights(const bt_conv_params *p, int32_t c, int32_t nc, int32_t d,
                                                  int32_t (*ws)[DWK_WMAX], int32_t (*rs)[8]) {
  const int32_t K = p->kh, c_n = p->out.c, s = p->stride_w, H = (K - 1) / 2, WR = s == 1 ? K - 1 : (K + 1) / 2;
  const int8_t *f = p->filter + c;
  if (nc == 4) {
    const uint32_t dm = d == 2 ? ~0u : 0u;
    if (K == 5) {
      if (s == 1) dwk_weights4(f, c_n, dm, ws, rs, 5, 1);
      else dwk_weights4(f, c_n, dm, ws, rs, 5, 2);
    } else {
      if (s == 1) dwk_weights4(f, c_n, dm, ws, rs, 7, 1);
      else dwk_weights4(f, c_n, dm, ws, rs, 7, 2);
    }
    return;
  }
  for (int32_t k = 0; k < nc; k++) {
    for (int32_t t = 0; t < K; t++) {
      int32_t v[7], sm = 0;
      for (int32_t j = 0; j < K; j++) {
        v[j] = f[(t * K + j) * c_n + k];
        sm += v[j];
        v[j] *= d;
      }
      int32_t *const wr = ws[k] + t * WR;
      for (int32_t j = 0; j < H; j++) {
        wr[j] = (int32_t)bt_pkhbt16((uint32_t)v[2 * j], (uint32_t)v[2 * j + 1]);
        if (s == 1) wr[H + j] = (int32_t)bt_pkhbt16((uint32_t)v[2 * j + 1], (uint32_t)v[2 * j + 2]);
      }
      if (s == 2) wr[H] = v[K - 1];
      rs[k][t + 1] = sm;
    }
  }
}

/* A dense one-channel plane's rows (the in-place kernel's per-channel calls: ips 1) widened: rows [iy0, iy0 + nr) of
 * the image only (dwk_rows reads no other), cells [0, cells) input columns ix0 + b, those inside the image; four
 * pixels a pass: LDR, SXTB16 both ways, PKHBT and PKHTB, two STRs (dw_widen's byte loop took ~28 instructions a
 * pixel group: 5.3 M of in3's in-place 44x44x80 7x7 layer). */
static __attribute__((noinline)) void dwk_widen1(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int16_t *d0,
                                                 int32_t rl, int32_t iy0, int32_t nr, int32_t ix0, int32_t cells) {
  const int32_t iw = p->in.w, ih = p->in.h;
  int32_t b0 = -ix0, b1 = iw - ix0;
  b0 = b0 < 0 ? 0 : (b0 > cells ? cells : b0);
  b1 = b1 < b0 ? b0 : (b1 > cells ? cells : b1);
  int32_t ra = -iy0, rz = ih - iy0;
  ra = ra < 0 ? 0 : (ra > nr ? nr : ra);
  rz = rz < ra ? ra : (rz > nr ? nr : rz);
  for (int32_t r = ra; r < rz; r++) {
    const int8_t *src = in + (iy0 + r - in_y0) * iw + ix0 + b0;
    int16_t *d = d0 + r * rl + b0;
    int32_t cnt = b1 - b0;
    if (cnt > 0 && ((uintptr_t)d & 2)) { *d++ = *src++; cnt--; }
    for (; cnt >= 4; cnt -= 4, src += 4, d += 4) {
      const uint32_t W = bt_ld4(src), e = (uint32_t)bt_sxtb16(W), o = (uint32_t)bt_sxtb16_ror8(W);
      const uint32_t v0 = bt_pkhbt16(e, o), v1 = bt_pkhtb16(o, e);   /* pixels (0, 1), (2, 3) */
      __builtin_memcpy(d, &v0, 4);
      __builtin_memcpy(d + 2, &v1, 4);
    }
    for (; cnt > 0; cnt--) *d++ = *src++;
  }
}

/* Output rows [y0, y1) (out holds row y0) of a dwk_ok layer (fast: bt_rq2). */
static __attribute__((noinline)) void dwk(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out,
                                          int32_t y0, int32_t y1, int fast) {
  int16_t plane[DWK_CELLS + 8] __attribute__((aligned(8)));   /* (+8: dw_fill_z writes four words a pass) */
  int32_t ws[4][DWK_WMAX], pre[4][8];   /* pre: dwk_weights' tap row sums, then dwk_rows' pre */
  int32_t acc[DWK_ACC];
  dw_chan ch[4];
  if (y1 <= y0) return;
  const int32_t K = p->kh, s = p->stride_w, sh = p->stride_h, c_n = p->out.c, ops = p->out.pixel_stride;
  const int32_t ow = p->out.w, out_row = ow * ops, ips = p->in.pixel_stride;
  const int32_t off = p->input_offset, zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int act = hi != 127 ? 0 : (lo == -128 ? 2 : 1);
  if (fast && !dw_mm_ok(p)) fast = 0;   /* sums of 2a for dw_rqm; a bias of 2^29 or more: bt_mbqm_fast */
  int sat = fast && act == 2;           /* every channel bt_rq2_zp_ok: requantised in dwk_rows */
  for (int32_t c = 0; sat && c < c_n; c++) sat = bt_rq2_zp_ok(p->shift[c]);
  const dwk_rows_fn rowsf = dwk_rows_fns[sat][K == 7][s - 1];
  const int32_t D = fast ? 2 : 1;
  const dw_geo g = {p->in.w, p->in.h, ips, p->in.w * ips, ow, ops, out_row, 1, sh, p->pad_left, p->pad_top, 0, 0};
  /* strips: the fewest whose planes hold two output rows' input rows (a strip repeats every group's set-up and
     narrows the quads; a chunk only widens its first K - stride_h rows again: vww1's 10x10x48 7x7 stride-2 layer
     with four output rows a chunk asked, two strips, 762 K cycles; with two, one strip of chunks of 3, 629 K) */
  const int32_t want = K + (y1 - y0 > 1 ? sh : 0);
  const int32_t np = c_n < 4 ? c_n : 4;   /* planes (a one-channel call, the in-place kernel's: all cells for one) */
  int32_t strips = (ow + DWK_NMAX - 1) / DWK_NMAX, n, rl;
  for (;; strips++) {
    n = (ow + strips - 1) / strips;
    rl = s == 1 ? (n + K + 1) & ~1 : 2 * n - 1 + K;
    if (DWK_CELLS / (np * rl) >= want || n == 1) break;
  }
  strips = (ow + n - 1) / n;
  int32_t rc = (DWK_CELLS / (np * rl) - K) / sh + 1;   /* output rows a chunk, the chunks balanced */
  if (!sat && rc * n > DWK_ACC) rc = DWK_ACC / n;     /* (the sums of a chunk's rows in acc; n <= DWK_ACC) */
  if (rc >= y1 - y0) {
    rc = y1 - y0;
  } else {
    const int32_t nch = (y1 - y0 + rc - 1) / rc;
    rc = (y1 - y0 + nch - 1) / nch;
  }
  const int32_t NR = (rc - 1) * sh + K, KP = NR * rl;   /* input rows and cells of a channel's plane */
  const int16_t z = (int16_t)-off;
  for (int32_t st = 0; st < strips; st++) {
    const int32_t xa = ow * st / strips, xb = ow * (st + 1) / strips, m = xb - xa, ix0 = xa * s - p->pad_left;
    const int32_t cells = s == 1 ? m + K - 1 : 2 * m + K - 2;   /* cells a row reads */
    {   /* the cells outside the image the zero point (dw_widen writes those inside), in every row */
      int32_t bv0 = -ix0, bv1 = p->in.w - ix0;
      bv0 = bv0 < 0 ? 0 : (bv0 > rl ? rl : bv0);
      bv1 = bv1 < bv0 ? bv0 : (bv1 > rl ? rl : bv1);
      for (int32_t b = 0; b < rl; b++) {
        if (b == bv0) b = bv1;
        if (b >= rl) break;
        for (int32_t i = b; i < np * KP; i += rl) plane[i] = z;
      }
    }
    for (int32_t c = 0; c < c_n; c += 4) {
      const int32_t nc = c_n - c < 4 ? c_n - c : 4;
      dwk_weights(p, c, nc, D, ws, pre);
      int fold = fast;
      for (int32_t k = 0; k < nc; k++) {
        pre[k][0] = 0;
        for (int32_t t = 0; t < K; t++) pre[k][t + 1] = pre[k][t] + D * off * pre[k][t + 1];
        ch[k].bias = D * (p->bias ? p->bias[c + k] : 0) + pre[k][K];
        if (!dw_chan_rq(p, &ch[k], c + k, zp, fast)) fold = 0;
      }
      const dw_requant_fn rq = dw_chan_fold(ch, nc, zp, fast, fold, act);
      for (int32_t ya = y0; ya < y1; ya += rc) {
        const int32_t rows = y1 - ya < rc ? y1 - ya : rc, nr = (rows - 1) * sh + K, iy0 = ya * sh - p->pad_top;
        /* (zdone: the rows outside the image are never read, dwk_rows skipping their tap rows) */
        if (nc == 1 && ips == 1 && c_n == 1) dwk_widen1(p, in, in_y0, plane, rl, iy0, nr, ix0, cells);
        else dw_widen(p, &g, in, in_y0, plane, KP, rl, iy0, nr, ix0, cells, c, nc, 1, 1);
        const dwk_geo G = {rl, sh * rl, m, rows, ops, out_row, iy0, p->in.h, sh};
        for (int32_t k = 0; k < nc; k++) {
          int8_t *o = out + (ya - y0) * out_row + xa * ops + c + k;
          rowsf(plane + k * KP, ws[k], pre[k], &ch[k], &G, acc, o);
          if (!sat) rq(acc, m, rows, o, ops, out_row, &ch[k], lo, hi);
        }
      }
    }
  }
}
