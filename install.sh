#!/usr/bin/env bash
# One-step set-up on a fresh machine: the helper's build tools (Debian/Ubuntu:
# GCC's Objective-C, GNUstep Base and liburing (io_uring); macOS: the Xcode command line tools), a Python
# 3.10 or later, then stibium itself with pip. `./install.sh --test` also installs
# what the tests need: the test extras, and on Debian/Ubuntu clang (the Darwin syntax
# check), strace and bpftrace (the system-call traces), fio, Chromium (the browser tests), nbdkit,
# libnbd-bin, fuse3, libfuse3-dev, pkg-config and e2fsprogs (the devices of known speed, the loop devices),
# PostgreSQL (the team's history: the tests start a server of their own in a temporary folder).
# A Python that refuses system-wide installs (PEP 668: Debian's own, Homebrew's) gets a
# virtual environment in .venv, and its stibium and pytest are linked into /usr/local/bin
# (root) or ~/.local/bin; the line to add to PATH is printed when that folder is not on it.
# `./install.sh --find-python` prints the Python it would use, and does nothing else.
set -euo pipefail
cd "$(dirname "$0")"
mode="${1:-}"
extras=""
[ "$mode" = "--test" ] && extras="[test]"

say() { echo "install.sh: $*" >&2; }

# A python3 of version 3.10 or later: $PYTHON, then what is on PATH, then the usual places of
# Homebrew (Apple Silicon and Intel), python.org's installer and pyenv.
find_python() {
  local cand found="" version
  for cand in "${PYTHON:-}" python3 python3.13 python3.12 python3.11 python3.10 /opt/homebrew/bin/python3 \
      /usr/local/bin/python3 /Library/Frameworks/Python.framework/Versions/Current/bin/python3 \
      "$HOME/.pyenv/shims/python3"; do
    [ -n "$cand" ] && command -v "$cand" >/dev/null 2>&1 || continue
    version=$("$cand" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3], "ok" if sys.version_info >= (3, 10) else "old")' 2>/dev/null) || continue
    case "$version" in
      *" ok") command -v "$cand"; return 0 ;;
      *) [ -n "$found" ] || found="$cand ${version% *}" ;;
    esac
  done
  if [ -n "$found" ]; then
    say "stibium needs Python 3.10 or later, but found only $found; install one (macOS: brew install python, or python.org; Debian/Ubuntu: apt-get install python3) or set PYTHON=/path/to/python3"
  else
    say "stibium needs Python 3.10 or later and none was found; install one (macOS: brew install python, or python.org; Debian/Ubuntu: apt-get install python3) or set PYTHON=/path/to/python3"
  fi
  return 1
}

if [ "$mode" = "--find-python" ]; then
  find_python || exit 2
  exit 0
fi

if [ "$(uname -s)" = "Darwin" ]; then
  xcode-select -p >/dev/null 2>&1 || { say "run 'xcode-select --install' first, then again"; exit 2; }
elif command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  # make: gnustep-config runs it (Debian 12's gnustep-make does not pull it in)
  packages=(gcc make gobjc gnustep-make libgnustep-base-dev liburing-dev python3-pip python3-venv)
  [ "$mode" = "--test" ] && packages+=(clang llvm strace bpftrace fio chromium nbdkit libnbd-bin fuse3 libfuse3-dev pkg-config e2fsprogs xfsprogs btrfs-progs openssh-server openssh-client sshfs iproute2 postgresql)
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
  # GCC's Objective-C builds the helper on Linux (meson would otherwise prefer clang when present).
  export OBJC="${OBJC:-gcc}"
else
  say "install GCC's Objective-C (gobjc) and GNUstep Base (libgnustep-base-dev) with your package manager"
  export OBJC="${OBJC:-gcc}"
fi

py=$(find_python) || exit 2
if [ "$(uname -s)" = "Darwin" ] && [ "$(sysctl -n hw.optional.arm64 2>/dev/null || echo 0)" = "1" ] \
    && [ "$("$py" -c 'import platform; print(platform.machine())')" != "arm64" ]; then
  say "warning: $py runs under Rosetta (x86_64), where macOS does no uncached I/O: stibium's direct numbers would be cached ones. Use an arm64 Python (Homebrew's /opt/homebrew/bin/python3, or python.org's) with PYTHON=..."
fi

managed=$("$py" -c 'import sysconfig, os; print(os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))')
if [ "$managed" = "True" ]; then
  "$py" -m venv .venv
  .venv/bin/python -m pip install -q ".${extras}"
  bin=/usr/local/bin
  [ "$(id -u)" -eq 0 ] || bin="$HOME/.local/bin"
  mkdir -p "$bin"
  for tool in stibium pytest mypy; do
    [ -x ".venv/bin/$tool" ] && ln -sf "$PWD/.venv/bin/$tool" "$bin/$tool"
  done
  say "installed in $PWD/.venv with $py; stibium, pytest (and with --test mypy) are linked into $bin"
  case ":$PATH:" in
    *":$bin:"*) ;;
    *) say "$bin is not on your PATH: add the line  export PATH=\"$bin:\$PATH\"  to your shell's profile (~/.zprofile on a Mac, ~/.profile on Linux), then open a new terminal" ;;
  esac
else
  "$py" -m pip install -q ".${extras}"
  where=$("$py" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
  scripts=$("$py" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')
  say "installed into $py's own packages ($where), the stibium command in $scripts; \`$py -m pip uninstall stibium\` removes it"
  if [ "$(id -u)" -eq 0 ] && [ -z "${VIRTUAL_ENV:-}" ]; then
    say "as root, into that Python for every user of this machine; a virtual environment keeps it apart: $py -m venv .venv && . .venv/bin/activate && ./install.sh"
  fi
fi
