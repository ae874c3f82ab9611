"""Entry point of buildtool's Bazel actions: btgen.py SRC_ROOT ARGS (SRC_ROOT holds the buildtool
package; an input of the action, so a planner edit changes the action's key)."""
import sys

if __name__ == "__main__":
    sys.path.insert(0, sys.argv[1])
    from buildtool.integrations.bazel import main

    sys.exit(main(sys.argv[2:]))
