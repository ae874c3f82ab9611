"""xcore.ai: the xcore kernel set built for the host against the VPU C model.

No xcore toolchain is needed: the kernels' VPU operations are modelled in C,
so the same code runs natively and is checked bit-exact. (A real xcc/xsim
board would be a separate Target with its own run command.)
"""

from buildtool.targets import Target


def targets():
    return [Target(
        name="xcore", cpu="xcore.ai VPU (C model)", description="xcore kernel set on the host, VPU C model",
        platform="host", cc="gcc", cflags=("-O2", "-std=gnu11", "-g"), ldflags=("-pthread",),
        kernel_sets=("xcore",), defines=("BT_SET_XCORE",), stack_bytes=1 << 20, weights_align=32)]
