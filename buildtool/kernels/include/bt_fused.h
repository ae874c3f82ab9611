/* bt_fused.h -- the fused-plan tile runtime (kernels/reference/fused.c): the calls a fused model.c
 * makes per tile. Code generation (buildtool/codegen/fused_c.py) writes each block's tile tables
 * and constant kernel parameters; these functions walk a tile's box through the bt_ kernels. */
#ifndef BT_FUSED_H
#define BT_FUSED_H
#include <stdint.h>
#include <stddef.h>
#include "bt_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A tensor as a tile sees it: a cached window, a whole tensor, or a row-banded tensor. */
typedef struct {
  int8_t *base;            /* physical position 0 (window) or row 0 (whole tensor) */
  int32_t r0, c0;          /* image row/column held at physical position 0 */
  int32_t wp, ps;          /* physical width (pixels), bytes per pixel */
  int8_t *const *rows;     /* row-banded tensor: address of each row, else 0 */
} fx_buf;

enum { FX_CONV, FX_DW, FX_MAXP, FX_AVGP, FX_ADD, FX_MUL, FX_MAX, FX_MIN, FX_RELU, FX_RELU6, FX_TANH, FX_PRELU,
       FX_SUB, FX_LEAKY_RELU, FX_ADD_DENSE, FX_ADD_HS };

/* Address of image pixel (y, x) of b. */
static inline int8_t *fx_at(const fx_buf *b, int32_t y, int32_t x) {
  if (b->rows) return b->rows[y] + x * b->ps;
  return (int8_t *)((uintptr_t)b->base + (uintptr_t)(intptr_t)(((y - b->r0) * b->wp + (x - b->c0)) * b->ps));
}

/* A cached window's ring moves n positions down (oldest out) along rows / columns. */
void fx_shift_rows(int8_t *w, int32_t ext, int32_t row_bytes, int32_t n);
void fx_shift_cols(int8_t *w, int32_t rows, int32_t ext, int32_t ch, int32_t n);
/* One output row y of a sliding-window operator (kind FX_CONV/FX_DW/FX_MAXP/FX_AVGP, prm its bt_
   params at the tile's geometry) whose input rows are at rows[iy], read from column x0. */
void fx_rows(int kind, const void *prm, int8_t *const *rows, int32_t x0, int8_t *out, int32_t y);
/* Output rows [ra, rb) x cols [ca, cb) of a sliding-window operator from in into out. ch >= 0: only
   channels [ch, ch + n) of a channelwise window of n channels (n: the window's pixel stride): a conv's
   filters ch.. into the window; a depthwise on the window into channels ch.. of out, with the filter
   regrouped per n channels in fch ([C/n][kh*kw][n]). */
void fx_win_conv(const void *prm, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb,
                 int32_t ch);
/* fx_win_conv(prm, in, out, ra, rb, ca, cb, -1) for a conv of more than one output channel, without the set's
   one-channel box paths (which decline it). */
void fx_win_conv_all(const void *prm, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca,
                     int32_t cb);
void fx_win_dw(const void *prm, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb,
               int32_t ch, const int8_t *fch);
void fx_win_pool(int kind, const void *prm, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca,
                 int32_t cb, int32_t ch);
void fx_win_maxp(const void *prm, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb,
                 int32_t ch);
void fx_win_avgp(const void *prm, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb,
                 int32_t ch);
/* Inline: a call with a constant kind links only that kind's runtime (the conv dispatcher only for convs, one
   pooling kind's kernel only for it). */
/* fx_win_avgp / fx_win_maxp on all channels (ch -1) where every call reads row bands (code generation proves it) */
void fx_win_avgpr(const void *prm, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca,
                  int32_t cb);
void fx_win_maxpr(const void *prm, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca,
                  int32_t cb);
static inline void fx_win(int kind, const void *prm, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb,
                          int32_t ca, int32_t cb, int32_t ch, const int8_t *fch) {
  if (kind == FX_CONV) fx_win_conv(prm, in, out, ra, rb, ca, cb, ch);
  else if (kind == FX_DW) fx_win_dw(prm, in, out, ra, rb, ca, cb, ch, fch);
  else if (kind == FX_MAXP) fx_win_maxp(prm, in, out, ra, rb, ca, cb, ch);
  else fx_win_avgp(prm, in, out, ra, rb, ca, cb, ch);
}
/* A channelwise window's tile: for each group of n channels (n: win's pixel stride) from 0 to
   `channels`, the conv cprm from cin into win over the window's box [wra, wrb) x [wca, wcb), then the
   depthwise dprm (filter regrouped in fch) from win into out over [ra, rb) x [ca, cb): the same as
   fx_win(FX_CONV, cprm, cin, win, .., ch, 0) then fx_win(FX_DW, dprm, win, out, .., ch, fch) per
   group, with what is the same for every group (geometry, dispatch) worked out once. */
void fx_chw(const void *cprm, const fx_buf *cin, const fx_buf *win, int32_t wra, int32_t wrb, int32_t wca,
            int32_t wcb, const void *dprm, const int8_t *fch, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca,
            int32_t cb, int32_t channels);
/* A conv kernel with bt_conv_s8's signature. Generated model.c may define one per CONV_2D of a fused
   block (a "tile kernel": the layer's kernel variant instantiated with every parameter that is the same
   on every tile as a constant, the tile's geometry copied from p; buildtool/codegen/tile_kernels.py)
   and pass it to fx_win_k. It must give bt_conv_s8's bytes on every call the runtime makes with it. */
typedef void (*fx_conv_kernel)(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                               int32_t y1);
/* fx_win(FX_CONV, prm, in, out, ra, rb, ca, cb, ch, 0) with the conv's kernel calls through kernel
   instead of bt_conv_s8. */
void fx_win_k(const void *prm, fx_conv_kernel kernel, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb,
              int32_t ca, int32_t cb, int32_t ch);
/* fx_win_k where code generation proved every call takes its box path (fx_win_kb) or its row-band path (fx_win_kr):
   without the others' code. */
void fx_win_kb(const void *prm, fx_conv_kernel kernel, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb,
               int32_t ca, int32_t cb, int32_t ch);
void fx_win_kr(const void *prm, fx_conv_kernel kernel, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb,
               int32_t ca, int32_t cb, int32_t ch);
/* fx_win_k, fx_win_kb or fx_win_kr: the entry fx_chw_kg's conv calls (fx_chw_kgb, fx_chw_kgr: code generation proved
   its calls take that one's path) */
typedef void (*fx_win_fn)(const void *prm, fx_conv_kernel kernel, const fx_buf *in, const fx_buf *out, int32_t ra,
                          int32_t rb, int32_t ca, int32_t cb, int32_t ch);
/* A depthwise kernel with bt_depthwise_s8's signature: generated model.c passes the variant code generation
   chose for the layer (buildtool/codegen/kernel_variants.py; it must give bt_depthwise_s8's bytes on every call
   the runtime makes with it: on any group of the layer's channels) to fx_win_dk. */
typedef void (*fx_dw_kernel)(const bt_depthwise_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                             int32_t y1);
/* fx_win(FX_DW, prm, in, out, ra, rb, ca, cb, ch, fch) with the depthwise's kernel calls through kernel instead of
   bt_depthwise_s8 (a set's own paths, fx_rows, keep theirs). */
void fx_win_dk_ch(const void *prm, fx_dw_kernel kernel, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb,
                  int32_t ca, int32_t cb, int32_t ch, const int8_t *fch);
void fx_win_dk_all(const void *prm, fx_dw_kernel kernel, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb,
                   int32_t ca, int32_t cb, const int8_t *fch);
/* fx_win_dk_all's box of a window output (not row-banded) one kernel call per output column x in [ca, cb), of rows
   [ra, rb): the call's out.w 1 and out.pixel_stride the output's row pitch (wp * ps), where code generation proved each
   such call is a whole-height column its kernel runs transposed as one row (codegen/tile_kernels.py dw_column_rl), a
   box narrower than its window otherwise a call per output row of a pixel or two. */
void fx_win_dk_cols(const void *prm, fx_dw_kernel kernel, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb,
                    int32_t ca, int32_t cb);
/* fx_win_dk_all where the plan calls fx_chw_kg too (code generation rewrites the calls): one copy of the two's code */
void fx_win_dk_allg(const void *prm, fx_dw_kernel kernel, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb,
                    int32_t ca, int32_t cb, const int8_t *fch);
/* Inline: ch < 0 (all channels; a constant in model.c) links no one-channel paths the call cannot take. */
static inline void fx_win_dk(const void *prm, fx_dw_kernel kernel, const fx_buf *in, const fx_buf *out, int32_t ra,
                             int32_t rb, int32_t ca, int32_t cb, int32_t ch, const int8_t *fch) {
  if (ch < 0) fx_win_dk_all(prm, kernel, in, out, ra, rb, ca, cb, fch);
  else fx_win_dk_ch(prm, kernel, in, out, ra, rb, ca, cb, ch, fch);
}
/* fx_chw with the conv's kernel calls for FX_CHW_K_MIN or more channels through ck (the rest through bt_conv_s8) and
   the depthwise's through dk (a set's own paths keep theirs): generated model.c passes the variants code generation
   chose for the layers. ck must give bt_conv_s8's bytes on any group of at least FX_CHW_K_MIN of its layer's
   channels, dk bt_depthwise_s8's on any group of its layer's channels. */
#define FX_CHW_K_MIN 4
void fx_chw_k(const void *cprm, fx_conv_kernel ck, const fx_buf *cin, const fx_buf *win, int32_t wra, int32_t wrb,
              int32_t wca, int32_t wcb, const void *dprm, fx_dw_kernel dk, const int8_t *fch, const fx_buf *out,
              int32_t ra, int32_t rb, int32_t ca, int32_t cb, int32_t channels);
/* fx_chw_k for a block whose every tile code generation found to take none of the set's one-channel paths (its
   window holds more than one channel, or the set's group path through ck and dk takes every tile in groups of more
   than one channel: codegen/fused_c.py chw_call): the same bytes, and it links none of those paths. few: the conv
   kernel of a group of fewer than FX_CHW_K_MIN channels (bt_conv_s8's bytes on it; model.c passes ck where no group
   has fewer, so a plan links no other). */
void fx_chw_kg(const void *cprm, fx_conv_kernel ck, fx_conv_kernel few, const fx_buf *cin, const fx_buf *win,
               int32_t wra, int32_t wrb, int32_t wca, int32_t wcb, const void *dprm, fx_dw_kernel dk,
               const int8_t *fch, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb,
               int32_t channels);
/* fx_chw_kg whose conv calls take fx_win_kb's path (fx_chw_kgb) or fx_win_kr's (fx_chw_kgr): fused_c.chw_entry */
void fx_chw_kgb(const void *cprm, fx_conv_kernel ck, fx_conv_kernel few, const fx_buf *cin, const fx_buf *win,
                int32_t wra, int32_t wrb, int32_t wca, int32_t wcb, const void *dprm, fx_dw_kernel dk,
                const int8_t *fch, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb,
                int32_t channels);
void fx_chw_kgr(const void *cprm, fx_conv_kernel ck, fx_conv_kernel few, const fx_buf *cin, const fx_buf *win,
                int32_t wra, int32_t wrb, int32_t wca, int32_t wcb, const void *dprm, fx_dw_kernel dk,
                const int8_t *fch, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb,
                int32_t channels);
/* Element-wise FX_ADD/FX_SUB/FX_MUL/FX_MAX/FX_MIN over the box, ch channels. Inline: a call with a constant kind
   links only that kind's runtime and kernel. FX_ADD_DENSE: an ADD of rows too short for the set's table path (every
   call's row under 256 values, fused_c), through its dense loops alone (FX_ADD_DENSE_S8; bt_add_s8 else). FX_ADD_HS:
   such an ADD whose one input's multiplier is 0.5, the other's at least 0.5 of 2^shift (reference/add_dense.h
   AD_HALF, AD_SMALL), its output bt_rq2's and no activation inside int8 (fused_c.add_kind): the one loop of those,
   its state made once a call (the cortex-m set; FX_ADD_DENSE's path on the others). */
#define FX_PW_DECL(name)                                                                                        \
  void name(const void *prm, const fx_buf *a, const fx_buf *b, const fx_buf *o, int32_t ra, int32_t rb, int32_t ca, \
            int32_t cb, int32_t ch);
FX_PW_DECL(fx_pw_add) FX_PW_DECL(fx_pw_add_dense) FX_PW_DECL(fx_pw_add_hs) FX_PW_DECL(fx_pw_sub) FX_PW_DECL(fx_pw_mul) FX_PW_DECL(fx_pw_max) FX_PW_DECL(fx_pw_min)
#undef FX_PW_DECL
static inline void fx_pw(int kind, const void *prm, const fx_buf *a, const fx_buf *b, const fx_buf *o, int32_t ra,
                         int32_t rb, int32_t ca, int32_t cb, int32_t ch) {
  if (kind == FX_ADD) fx_pw_add(prm, a, b, o, ra, rb, ca, cb, ch);
  else if (kind == FX_ADD_DENSE) fx_pw_add_dense(prm, a, b, o, ra, rb, ca, cb, ch);
  else if (kind == FX_ADD_HS) fx_pw_add_hs(prm, a, b, o, ra, rb, ca, cb, ch);
  else if (kind == FX_SUB) fx_pw_sub(prm, a, b, o, ra, rb, ca, cb, ch);
  else if (kind == FX_MUL) fx_pw_mul(prm, a, b, o, ra, rb, ca, cb, ch);
  else if (kind == FX_MAX) fx_pw_max(prm, a, b, o, ra, rb, ca, cb, ch);
  else fx_pw_min(prm, a, b, o, ra, rb, ca, cb, ch);
}
/* Element-wise FX_RELU/FX_RELU6/FX_TANH/FX_PRELU/FX_LEAKY_RELU over the box (alpha: PRELU's). */
void fx_unary(int kind, const void *prm, const int8_t *alpha, const fx_buf *a, const fx_buf *o, int32_t ra,
              int32_t rb, int32_t ca, int32_t cb, int32_t ch);
/* MEAN over H and W: add the box's pixels to per-channel sums (int16 when the map has at most 256
   pixels, else int32, wrapping), then TFLM's MEAN step into out. */
void fx_accumulate16(int16_t *acc, const fx_buf *t, int32_t ra, int32_t rb, int32_t ca, int32_t cb, int32_t ch);
void fx_accumulate32(int32_t *acc, const fx_buf *t, int32_t ra, int32_t rb, int32_t ca, int32_t cb, int32_t ch);
void fx_mean_done16(const int16_t *acc, int8_t *out, int32_t ch, int32_t zp_times_n, int32_t mult,
                    int32_t shift, int32_t out_zp);
void fx_mean_done32(const int32_t *acc, int8_t *out, int32_t ch, int32_t zp_times_n, int32_t mult,
                    int32_t shift, int32_t out_zp);
/* Iterative dense: a FULLY_CONNECTED over the flattened block output (w pixels wide, ch channels)
   adds the box's partial dot products to its int32 sums, then finishes once. */
void fx_dense_acc(int32_t *acc, const bt_fc_params *p, const fx_buf *t, int32_t ra, int32_t rb, int32_t ca,
                  int32_t cb, int32_t w, int32_t ch);
void fx_dense_done(const int32_t *acc, const bt_fc_params *p, int8_t *out);
/* A 1x1 stride-1 convolution over the box whose output overwrites its input window in place. */
void fx_conv_inplace(const bt_conv_params *prm, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb,
                     int32_t ca, int32_t cb);
/* The same with its kernel calls (rows of in.w = out.w pixels: in.h = out.h = 1, no padding, input pixels
   in.c bytes apart) through kernel. */
void fx_conv_inplace_k(const bt_conv_params *prm, fx_conv_kernel kernel, const fx_buf *in, const fx_buf *out,
                       int32_t ra, int32_t rb, int32_t ca, int32_t cb);
/* Streamed input: rows [r0, r1) x cols [c0, c1) of the model input (img_w x img_c per row) into dst,
   rows `stride` bytes apart (bt_read_input_rows of bt_platform.h). */
void fx_source(int32_t r0, int32_t r1, int32_t c0, int32_t c1, int8_t *dst, int32_t stride, int32_t img_w,
               int32_t img_c);
/* A sliding-window operator on a streamed input it pulls itself, one output row at a time: the
   input rows that row needs (image columns [ta, tb)) are read into the window win first. */
void fx_pulled(int kind, const void *prm, const fx_buf *win, const fx_buf *out, int32_t ra, int32_t rb,
               int32_t ca, int32_t cb, int32_t ch, int32_t ta, int32_t tb, int32_t s, int32_t pad, int32_t k,
               int32_t n_in, int32_t img_w, int32_t img_c);
/* The riscv set's entries where code generation proved their conditions (riscv/fused.c; codegen/fused_c.py
   rv_chw_only, rv_pw1; model.c maps them to fx_chw and fx_win_conv_all for another kernel set): fx_chw whose
   one-channel paths take every channel of every tile; fx_win_conv_all on a 1x1 unpadded conv pixel by pixel */
void fx_chw_rv(const void *cprm, const fx_buf *cin, const fx_buf *win, int32_t wra, int32_t wrb, int32_t wca,
               int32_t wcb, const void *dprm, const int8_t *fch, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca,
               int32_t cb, int32_t channels);
void fx_rv_pw1(const void *prm, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb);
/* fx_chw for a conv that pulls its streamed input (image columns [ta, tb); s, pad, k, n_in as fx_pulled's): for
   each group of n channels (n: win's pixel stride), fx_pulled(FX_CONV, cprm, cin, win, wra, wrb, wca, wcb, ch, ..)
   then fx_win(FX_DW, dprm, win, out, ra, rb, ca, cb, ch, fch); a set may make several groups per pull. */
void fx_pulled_chw(const void *cprm, const fx_buf *cin, const fx_buf *win, int32_t wra, int32_t wrb, int32_t wca,
                   int32_t wcb, int32_t ta, int32_t tb, int32_t s, int32_t pad, int32_t k, int32_t n_in, int32_t img_w,
                   int32_t img_c, const void *dprm, const int8_t *fch, const fx_buf *out, int32_t ra, int32_t rb,
                   int32_t ca, int32_t cb, int32_t channels);
/* Provided by the platform (firmware/common/bt_platform.h): `rows` runs of n bytes of the model input,
   the first at byte `offset`, in_stride bytes apart, into dst, dst_stride bytes apart. */
int bt_read_input_rows(uint32_t offset, uint32_t n, uint32_t rows, uint32_t in_stride, void *dst,
                       uint32_t dst_stride);

#ifdef __cplusplus
}
#endif
#endif
