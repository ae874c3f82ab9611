/* The whole reference set in one translation unit under the ref_bt_ prefix, linked next to the set
 * under test by kernel_test.c. (Static helpers of the reference files must have distinct names.) */
#define BT_KERNEL_PREFIX_REF
#include "../reference/conv.c"
#include "../reference/depthwise.c"
#include "../reference/fully_connected.c"
#include "../reference/add.c"
#include "../reference/mul.c"
#include "../reference/pooling.c"
#include "../reference/mean.c"
#include "../reference/softmax.c"
#include "../reference/logistic.c"
#include "../reference/hard_swish.c"
#include "../reference/quantize.c"
#include "../reference/pad.c"
#include "../reference/concat.c"
#include "../reference/split.c"
#include "../reference/strided_slice.c"
