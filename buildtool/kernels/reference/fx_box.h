/* fx_box.h -- geometry shared by kernel sets' own tile paths (a set's fused.c, over the reference
 * runtime's fx_k_box / fx_k_pulled hooks): where a box's input and output rows are, which taps of
 * an output fall inside the input, which rows and columns of a box have all their taps inside. */
#ifndef BT_FX_BOX_H
#define BT_FX_BOX_H
#include "bt_fused.h"

/* Where input row iy of a tile starts: a band (base holds row y0, rows `row` bytes apart) or row
   bands (rows[iy], from column offset xoff bytes). */
typedef struct {
  const int8_t *base;
  int32_t y0, row;
  int8_t *const *rows;
  int32_t xoff;
} box_src;

static inline const int8_t *box_row(const box_src *s, int32_t iy) {
  return s->rows ? s->rows[iy] + s->xoff : s->base + (iy - s->y0) * s->row;
}

/* Where output row y of a box goes: column ca, channel oc of a window, whole or row-banded tensor. */
typedef struct {
  const fx_buf *b;
  int32_t ca, oc;
} box_dst;

static inline int8_t *box_orow(const box_dst *d, int32_t y) { return fx_at(d->b, y, d->ca) + d->oc; }

/* Range [*a, *b) of taps 0..k-1 (step d) from o that fall inside [0, n). */
static inline void box_taps(int32_t o, int32_t k, int32_t d, int32_t n, int32_t *a, int32_t *b) {
  int32_t t0 = 0, t1 = k;
  while (t0 < t1 && o + t0 * d < 0) t0++;
  while (t1 > t0 && o + (t1 - 1) * d >= n) t1--;
  *a = t0; *b = t1;
}

/* Columns [*a, *b) of the output whose taps all lie inside the input. */
static inline void box_interior(const bt_conv_params *p, int32_t *a, int32_t *b) {
  int32_t x0 = 0, x1 = p->out.w;
  while (x0 < x1 && x0 * p->stride_w - p->pad_left < 0) x0++;
  while (x1 > x0 && (x1 - 1) * p->stride_w - p->pad_left + (p->kw - 1) * p->dil_w >= p->in.w) x1--;
  *a = x0; *b = x1;
}

/* Rows [*a, *b) of [y0, y1) whose taps all lie inside the input (the others are at its top or bottom). */
static inline void box_inside_rows(const bt_conv_params *p, int32_t y0, int32_t y1, int32_t *a, int32_t *b) {
  int32_t ya = y0, yb = y1;
  while (ya < yb && ya * p->stride_h - p->pad_top < 0) ya++;
  while (yb > ya && (yb - 1) * p->stride_h - p->pad_top + (p->kh - 1) * p->dil_h >= p->in.h) yb--;
  *a = ya; *b = yb;
}

/* One conv output (channel 0 of p) at a border pixel: the valid taps only, scalar (its bias
   included, not requantised). */
static int32_t conv1_border(const bt_conv_params *p, const box_src *s, int32_t iy0, int32_t ix0) {
  const int32_t c = p->in.c, ps = p->in.pixel_stride;
  int32_t ky0, ky1, kx0, kx1, acc = p->bias ? p->bias[0] : 0;
  box_taps(iy0, p->kh, p->dil_h, p->in.h, &ky0, &ky1);
  box_taps(ix0, p->kw, p->dil_w, p->in.w, &kx0, &kx1);
  for (int32_t ky = ky0; ky < ky1; ky++) {
    const int8_t *irow = box_row(s, iy0 + ky * p->dil_h);
    for (int32_t kx = kx0; kx < kx1; kx++) {
      const int8_t *ip = irow + (ix0 + kx * p->dil_w) * ps, *fp = p->filter + (ky * p->kw + kx) * c;
      for (int32_t i = 0; i < c; i++) acc += fp[i] * (ip[i] + p->input_offset);
    }
  }
  return acc;
}
#endif
