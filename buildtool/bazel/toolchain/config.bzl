"""C toolchains for the cross boards, their flags taken from boards.bzl (what buildtool's boards say)."""

load("@bazel_tools//tools/cpp:cc_toolchain_config_lib.bzl", "feature", "flag_group", "flag_set", "tool_path")
load("@bazel_tools//tools/build_defs/cc:action_names.bzl", "ACTION_NAMES")
load("@buildtool_src//:boards.bzl", "BOARDS")

_COMPILE = [
    ACTION_NAMES.c_compile,
    ACTION_NAMES.cpp_compile,
    ACTION_NAMES.assemble,
    ACTION_NAMES.preprocess_assemble,
]
_LINK = [
    ACTION_NAMES.cpp_link_executable,
    ACTION_NAMES.cpp_link_dynamic_library,
    ACTION_NAMES.cpp_link_nodeps_dynamic_library,
]
_TOOLS = ["gcc", "ar", "ld", "nm", "objcopy", "objdump", "strip", "cpp"]

def _flags(name, actions, flags):
    groups = [flag_group(flags = flags)]
    return feature(name = name, enabled = True, flag_sets = [flag_set(actions = actions, flag_groups = groups)])

def _impl(ctx):
    prefix = ctx.attr.prefix
    return cc_common.create_cc_toolchain_config_info(
        ctx = ctx,
        features = [
            _flags("board_compile_flags", _COMPILE, ctx.attr.cpu_flags + ctx.attr.copts),
            # As Bazel's own gcc toolchain: header paths as given, not realpath'd through the symlinked package.
            _flags("no_canonical_paths", _COMPILE, ["-no-canonical-prefixes", "-fno-canonical-system-headers"]),
            _flags("board_link_flags", _LINK, ctx.attr.cpu_flags + ctx.attr.linkopts),
        ],
        cxx_builtin_include_directories = ctx.attr.builtin_includes,
        toolchain_identifier = prefix + "gcc",
        host_system_name = "local",
        target_system_name = prefix[:-1],
        target_cpu = ctx.attr.board,
        target_libc = "none",
        compiler = "gcc",
        abi_version = "none",
        abi_libc_version = "none",
        tool_paths = [tool_path(name = t, path = "bin/" + prefix + t) for t in _TOOLS] +
                     [tool_path(name = "gcov", path = "/bin/false")],
    )

bt_cc_toolchain_config = rule(
    implementation = _impl,
    attrs = {
        "board": attr.string(),
        "prefix": attr.string(),
        "cpu_flags": attr.string_list(),
        "copts": attr.string_list(),
        "linkopts": attr.string_list(),
        "builtin_includes": attr.string_list(),
    },
    provides = [CcToolchainConfigInfo],
)

def bt_cc_toolchains():
    """config + cc_toolchain + toolchain for every cross board (called in @buildtool_src//toolchain)."""
    native.filegroup(name = "tools", srcs = native.glob(["bin/*"]))
    for name, b in BOARDS.items():
        if not b["cross"]:
            continue
        bt_cc_toolchain_config(
            name = name + "_config",
            board = name,
            prefix = b["cc"][:-len("gcc")],
            cpu_flags = b["cpu_flags"],
            copts = b["copts"],
            # -lgcc goes after the objects: bt_model's link flags carry it
            linkopts = [f for f in b["linkopts"] if f != "-lgcc"],
            builtin_includes = b["builtin_includes"],
        )
        native.cc_toolchain(
            name = name + "_cc_toolchain",
            all_files = ":tools",
            ar_files = ":tools",
            as_files = ":tools",
            compiler_files = ":tools",
            dwp_files = ":tools",
            linker_files = ":tools",
            objcopy_files = ":tools",
            strip_files = ":tools",
            toolchain_config = ":" + name + "_config",
            supports_param_files = 0,
        )
        native.toolchain(
            name = name,
            exec_compatible_with = ["@platforms//os:linux"],
            target_compatible_with = ["@buildtool//platforms:board_" + name],
            toolchain = ":" + name + "_cc_toolchain",
            toolchain_type = "@bazel_tools//tools/cpp:toolchain_type",
        )
