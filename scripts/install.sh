#!/usr/bin/env bash
# Installs everything buildtool needs on a fresh Debian machine (run as root or with sudo available):
# the cross toolchains and emulators from Debian's packages, then this project with its test extras.
# nginx-extras (nginx with WebDAV) is only for tests/test_remote_cache.py: the tests start their own nginx.
# chromium is only for tests/test_report_map.py: it renders the report's arena map headless.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
PKGS="gcc g++ make cmake ninja-build gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm gcc-riscv64-unknown-elf qemu-system-misc nginx-extras bazel-bootstrap clangd chromium"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  echo "install.sh: installing Debian packages:$missing"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
if ! python3 -m pip --version >/dev/null 2>&1; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-pip python3-dev >/dev/null
fi
PIP="python3 -m pip"
extra=""
# Debian's own python refuses system-wide pip installs (PEP 668); this project is a tool, so allow it there.
if python3 -c 'import sys,sysconfig,os; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_paths()["stdlib"],"EXTERNALLY-MANAGED")) else 1)'; then
  extra="--break-system-packages"
fi
# netsplit: TensorFlow for `buildtool netsplit` and tests/test_netsplit.py (which must not skip on CI)
$PIP install -q $extra --disable-pip-version-check -e ".[test,netsplit]"
echo "install.sh: done ($(python3 -m buildtool.cli --version))"
