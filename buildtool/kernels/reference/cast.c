/* CAST, TFLM cast.cc (see bt_kernels.h): raw values converted, no requantisation. */
#include "bt_kernels.h"

static int32_t cast_esize(int32_t type) {
  return type == BT_TYPE_INT16 ? 2 : (type == BT_TYPE_INT32 || type == BT_TYPE_FLOAT32) ? 4 : 1;
}

/* Integer inputs (and bool) as a 32-bit two's complement value; float32 truncated toward zero and saturated to
   [lo, hi], NaN 0 (C leaves an out-of-range float conversion undefined, so the range is tested first). */
static int32_t cast_load(int32_t type, const void *in, int32_t i, int32_t lo, int32_t hi) {
  switch (type) {
    case BT_TYPE_INT8: return ((const int8_t *)in)[i];
    case BT_TYPE_INT16: return ((const int16_t *)in)[i];
    case BT_TYPE_INT32: return ((const int32_t *)in)[i];
    case BT_TYPE_BOOL: return ((const uint8_t *)in)[i] != 0;
    default: {
      float f = ((const float *)in)[i];
      if (f != f) return 0;
      if (f <= (float)lo) return lo;
      if (f >= (float)hi) return hi; /* (float)INT32_MAX is 2^31: at or above it saturates */
      return (int32_t)f;
    }
  }
}

void bt_cast(int32_t n, int32_t in_type, int32_t out_type, const void *in, void *out) {
  int32_t lo = out_type == BT_TYPE_INT8 ? -128 : out_type == BT_TYPE_INT16 ? -32768 : INT32_MIN;
  int32_t hi = out_type == BT_TYPE_INT8 ? 127 : out_type == BT_TYPE_INT16 ? 32767 : INT32_MAX;
  /* widening: backwards, so out may start where in does; otherwise forwards */
  int32_t back = cast_esize(out_type) > cast_esize(in_type);
  for (int32_t k = 0; k < n; k++) {
    int32_t i = back ? n - 1 - k : k;
    uint32_t v = (uint32_t)cast_load(in_type, in, i, lo, hi); /* the low bits: two's complement wrap */
    if (out_type == BT_TYPE_INT8) ((uint8_t *)out)[i] = (uint8_t)v;
    else if (out_type == BT_TYPE_INT16) ((uint16_t *)out)[i] = (uint16_t)v;
    else ((uint32_t *)out)[i] = v;
  }
}
