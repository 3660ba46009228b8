#!/usr/bin/env bash
# One-step set-up on a fresh machine: the helper's build tools (Debian/Ubuntu:
# GCC's Objective-C and GNUstep Base; macOS: the Xcode command line tools), then
# stibium itself with pip. `./install.sh --test` also installs the test extras.
set -euo pipefail
cd "$(dirname "$0")"
extras=""
[ "${1:-}" = "--test" ] && extras="[test]"

if [ "$(uname -s)" = "Darwin" ]; then
  xcode-select -p >/dev/null 2>&1 || { echo "install.sh: run 'xcode-select --install' first, then again" >&2; exit 2; }
  python3 -m pip install -q ".${extras}"
  exit 0
fi

if command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends gcc gobjc gnustep-make libgnustep-base-dev python3-pip >/dev/null
else
  echo "install.sh: install GCC's Objective-C (gobjc) and GNUstep Base (libgnustep-base-dev) with your package manager" >&2
fi
# GCC's Objective-C builds the helper on Linux (meson would otherwise prefer clang when present).
OBJC="${OBJC:-gcc}" python3 -m pip install -q ".${extras}"
