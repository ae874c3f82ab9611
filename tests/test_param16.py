"""emitter.param16: a layer struct's 16-bit fields (bt_kernels.h) refuse a value their type cannot hold, in one
line naming the operator and the field, and pass every value it can (the ranges' ends included)."""

import ctypes
import sys
from pathlib import Path

import pytest

from buildtool.codegen import emitter
from buildtool.errors import ModelError
from buildtool.model.ir import Operator

sys.path.insert(0, str(Path(__file__).parent))
from test_kernels import ConvP, FcP, PoolP  # noqa: E402


def _op():
    return Operator(index=7, opcode="CONV_2D", inputs=(0,), outputs=(1,))


@pytest.mark.parametrize("field,value", [("stride_h", 65536), ("kh", -1), ("act_min", -32769), ("output_offset", 32768)])
def test_out_of_range_is_one_line(field, value):
    with pytest.raises(ModelError) as e:
        emitter.param16(_op(), {field: value})
    msg = str(e.value)
    assert "\n" not in msg and "operator 7 (CONV_2D)" in msg and f"its {field} {value}" in msg


def test_range_ends_pass_and_match_the_structs():
    f = {k: hi for k, (lo, hi) in emitter.PARAM16.items()}
    assert emitter.param16(_op(), f) is f
    assert emitter.param16(_op(), {k: lo for k, (lo, hi) in emitter.PARAM16.items()})
    # the ranges are what the C fields hold (test_kernels' mirrors of bt_kernels.h, checked there against C)
    for struct in (ConvP, FcP, PoolP):
        for name, ctype in struct._fields_:
            if name in emitter.PARAM16 and ctypes.sizeof(ctype) == 2:
                lo, hi = emitter.PARAM16[name]
                assert ctype(hi).value == hi and ctype(lo).value == lo and ctype(hi + 1).value != hi + 1, name
