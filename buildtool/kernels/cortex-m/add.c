/* ADD and SUB: the reference kernels, int8 from reference/add_dense.h (requantisations chosen once
 * per call, contiguous runs in one loop), the saturation to int8 one SSAT (dsp.h). */
#include "dsp.h"
#define AD_SAT8(v) bt_ssat8(v)
#define BT_ADD_S8_DENSE
#include "../reference/add.c"
