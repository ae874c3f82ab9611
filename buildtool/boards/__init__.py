"""The built-in boards, one module per family (host, cortex_m, riscv, xcore).

They live inside the buildtool package so that installing it claims no generic top-level
name; each module's targets() is also declared as an entry point of group "buildtool.targets",
the way a third-party board package declares its own.
"""
