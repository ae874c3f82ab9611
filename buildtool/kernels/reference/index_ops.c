/* ARG_MAX / ARG_MIN, GATHER, GATHER_ND with computed indices, FILL, SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND, MIRROR_PAD and EMBEDDING_LOOKUP on int8: TFLM's reference
 * semantics on raw codes (see bt_kernels.h). */
#include "bt_kernels.h"

/* Byte copies and fills without libc (the boards link no C library). */
static void index_copy(int8_t *dst, const int8_t *src, int32_t n) {
  for (int32_t i = 0; i < n; i++) dst[i] = src[i];
}

static void index_fill(int8_t *dst, int32_t v, int32_t n) {
  for (int32_t i = 0; i < n; i++) dst[i] = (int8_t)v;
}

void bt_argminmax_s8(const bt_argminmax_params *p, const int8_t *in, int32_t *out) {
  for (int32_t o = 0; o < p->outer; o++)
    for (int32_t i = 0; i < p->inner; i++) {
      const int8_t *src = in + o * p->axis * p->inner + i;
      int32_t best = src[0], at = 0;
      for (int32_t k = 1; k < p->axis; k++) {
        const int32_t v = src[k * p->inner];
        if (p->kind == 0 ? v > best : v < best) {
          best = v;
          at = k;
        }
      }
      out[o * p->inner + i] = at;
    }
}

void bt_gather_s8(const bt_gather_params *p, const int32_t *idx, const int8_t *in, int8_t *out) {
  for (int32_t o = 0; o < p->outer; o++)
    for (int32_t j = 0; j < p->count; j++) {
      index_copy(out, in + ((int64_t)o * p->axis_size + idx[j]) * p->inner, p->inner);
      out += p->inner;
    }
}

int32_t bt_gather_idx_s8(const bt_gather_params *p, const int32_t *idx, const int8_t *in, int8_t *out) {
  for (int32_t j = 0; j < p->count; j++)
    if (idx[j] < 0 || idx[j] >= p->axis_size) return 1;
  bt_gather_s8(p, idx, in, out);
  return 0;
}

int32_t bt_gather_nd_s8(const bt_gather_nd_params *p, const int32_t *idx, const int8_t *in, int8_t *out) {
  for (int32_t i = 0; i < p->count; i++) {
    int64_t row = 0;
    for (int32_t j = 0; j < p->nd; j++) row += (int64_t)idx[i * p->nd + j] * p->stride[j];
    if (row < 0 || row >= p->rows) return 1;
  }
  for (int32_t i = 0; i < p->count; i++) {
    int64_t row = 0;
    for (int32_t j = 0; j < p->nd; j++) row += (int64_t)idx[i * p->nd + j] * p->stride[j];
    index_copy(out + (int64_t)i * p->inner, in + row * p->inner, p->inner);
  }
  return 0;
}

void bt_fill_s8(int32_t n, const int8_t *value, int8_t *out) { index_fill(out, *value, n); }

void bt_space_to_batch_s8(const bt_space_batch_params *p, const int8_t *in, int8_t *out) {
  const int32_t in_b = p->in_dims[0], in_h = p->in_dims[1], in_w = p->in_dims[2], depth = p->in_dims[3];
  const int32_t out_b = p->out_dims[0], out_h = p->out_dims[1], out_w = p->out_dims[2];
  for (int32_t b = 0; b < out_b; b++) {
    const int32_t src_b = b % in_b, shift_w = (b / in_b) % p->block_w, shift_h = (b / in_b) / p->block_w;
    for (int32_t y = 0; y < out_h; y++)
      for (int32_t x = 0; x < out_w; x++) {
        int8_t *dst = out + (((int64_t)b * out_h + y) * out_w + x) * depth;
        const int32_t sy = y * p->block_h + shift_h - p->top, sx = x * p->block_w + shift_w - p->left;
        if (sy < 0 || sy >= in_h || sx < 0 || sx >= in_w)
          index_fill(dst, p->pad_value, depth);
        else
          index_copy(dst, in + (((int64_t)src_b * in_h + sy) * in_w + sx) * depth, depth);
      }
  }
}

void bt_batch_to_space_s8(const bt_space_batch_params *p, const int8_t *in, int8_t *out) {
  const int32_t in_b = p->in_dims[0], in_h = p->in_dims[1], in_w = p->in_dims[2], depth = p->in_dims[3];
  const int32_t out_b = p->out_dims[0], out_h = p->out_dims[1], out_w = p->out_dims[2];
  for (int32_t b = 0; b < in_b; b++) {
    const int32_t dst_b = b % out_b, off = b / out_b, off_h = off / p->block_w, off_w = off % p->block_w;
    for (int32_t y = 0; y < in_h; y++) {
      const int32_t oy = y * p->block_h + off_h - p->top;
      if (oy < 0 || oy >= out_h) continue;
      for (int32_t x = 0; x < in_w; x++) {
        const int32_t ox = x * p->block_w + off_w - p->left;
        if (ox < 0 || ox >= out_w) continue;
        index_copy(out + (((int64_t)dst_b * out_h + oy) * out_w + ox) * depth,
                   in + (((int64_t)b * in_h + y) * in_w + x) * depth, depth);
      }
    }
  }
}

static int32_t mirror_index(int32_t o, int32_t before, int32_t n, int32_t offset) {
  int32_t i = o - before;
  if (i < 0) return -i - 1 + offset;
  if (i >= n) return 2 * n - i - 1 - offset;
  return i;
}

void bt_mirror_pad_s8(const bt_mirror_pad_params *p, const int8_t *in, int8_t *out) {
  const int32_t *d = p->out_dims, *n = p->in_dims;
  for (int32_t i0 = 0; i0 < d[0]; i0++) {
    const int32_t s0 = mirror_index(i0, p->before[0], n[0], p->offset);
    for (int32_t i1 = 0; i1 < d[1]; i1++) {
      const int32_t s1 = s0 * n[1] + mirror_index(i1, p->before[1], n[1], p->offset);
      for (int32_t i2 = 0; i2 < d[2]; i2++) {
        const int8_t *row = in + (s1 * n[2] + mirror_index(i2, p->before[2], n[2], p->offset)) * n[3];
        for (int32_t i3 = 0; i3 < d[3]; i3++) *out++ = row[mirror_index(i3, p->before[3], n[3], p->offset)];
      }
    }
  }
}

void bt_embedding_lookup_s8(int32_t count, int32_t rows, int32_t row_bytes, const int32_t *ids, const int8_t *table,
                            int8_t *out) {
  for (int32_t i = 0; i < count; i++, out += row_bytes) {
    if (ids[i] >= 0 && ids[i] < rows)
      index_copy(out, table + (int64_t)ids[i] * row_bytes, row_bytes);
    else
      index_fill(out, 0, row_bytes);
  }
}
