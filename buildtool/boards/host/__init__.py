"""The host board: a native executable built with the system C compiler."""

from buildtool.targets import Target


def targets():
    return [Target(
        name="host", cpu="native", description="native executable (gcc), stdio input/output",
        platform="host", cc="gcc", cflags=("-O2", "-std=gnu11", "-g"), ldflags=("-pthread",),
        kernel_sets=("host",), ram_bytes=0, flash_bytes=0, stack_bytes=1 << 20)]
