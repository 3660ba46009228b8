#!/usr/bin/env bash
# One-step set-up on a fresh machine: the helper's build tools (Debian/Ubuntu:
# GCC's Objective-C and GNUstep Base; macOS: the Xcode command line tools), then
# stibium itself with pip. `./install.sh --test` also installs the test extras.
# A Python that refuses system-wide installs (PEP 668, as Debian's own) gets a
# virtual environment in .venv, and its stibium and pytest are linked into
# /usr/local/bin (root) or ~/.local/bin.
set -euo pipefail
cd "$(dirname "$0")"
extras=""
[ "${1:-}" = "--test" ] && extras="[test]"

if [ "$(uname -s)" = "Darwin" ]; then
  xcode-select -p >/dev/null 2>&1 || { echo "install.sh: run 'xcode-select --install' first, then again" >&2; exit 2; }
elif command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends gcc gobjc gnustep-make libgnustep-base-dev \
    python3-pip python3-venv >/dev/null
  # GCC's Objective-C builds the helper on Linux (meson would otherwise prefer clang when present).
  export OBJC="${OBJC:-gcc}"
else
  echo "install.sh: install GCC's Objective-C (gobjc) and GNUstep Base (libgnustep-base-dev) with your package manager" >&2
  export OBJC="${OBJC:-gcc}"
fi

managed=$(python3 -c 'import sysconfig, os; print(os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))')
if [ "$managed" = "True" ]; then
  python3 -m venv .venv
  .venv/bin/python -m pip install -q ".${extras}"
  bin=/usr/local/bin
  [ "$(id -u)" -eq 0 ] || { bin="$HOME/.local/bin"; mkdir -p "$bin"; }
  for tool in stibium pytest; do
    [ -x ".venv/bin/$tool" ] && ln -sf "$PWD/.venv/bin/$tool" "$bin/$tool"
  done
  echo "install.sh: installed in $PWD/.venv; stibium and pytest are linked into $bin"
else
  python3 -m pip install -q ".${extras}"
fi
