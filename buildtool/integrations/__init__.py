"""Build-system shells beyond the CLI: Bazel actions and workers, watch mode (SCons and CMake: scons/, cmake/)."""
