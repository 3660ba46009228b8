#!/usr/bin/env bash
# Build the helper's C code for macOS on any machine: every C file but the Linux platform file compiled
# for arm64 and x86_64 against Apple's SDK headers with -Wall -Wextra -Werror, then linked against
# Apple's libSystem with a small C entry point into a Mach-O executable per architecture. The compiler and
# the SDK (headers and libSystem.tbd) are those the `ziglang` package ships (python -m ziglang cc).
# Foundation is not in that SDK: the Objective-C files are checked by check.sh beside this file.
# Usage: helper/darwin-check/build-macos.sh OUT_DIR [SOURCE_DIR]   (default source: the helper folder)
# PYTHON names the Python that has ziglang installed (default: python3).
# Writes OUT_DIR/stibium-core-<target> for aarch64-macos and x86_64-macos; exit 1 naming the failing file.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: build-macos.sh OUT_DIR [SOURCE_DIR]}"
src="${2:-$here/..}"
py="${PYTHON:-python3}"
"$py" -m ziglang version >/dev/null 2>&1 || { echo "build-macos: the ziglang package is not installed (pip install ziglang)" >&2; exit 2; }
mkdir -p "$out"
# without -O zig adds UBSan: -O2. It does not repeat a cached file's warnings, which -Werror makes errors
# (never cached); a cache of its own unless ZIG_GLOBAL_CACHE_DIR names one to share between builds
export ZIG_GLOBAL_CACHE_DIR="${ZIG_GLOBAL_CACHE_DIR:-$out/zig-cache}"
export ZIG_LOCAL_CACHE_DIR="$ZIG_GLOBAL_CACHE_DIR"
flags=(-O2 -std=gnu11 -Wall -Wextra -Werror -I"$src")
sources=()
for f in "$src"/*.c; do
  case "$(basename "$f")" in sb_platform_linux.c) ;; *) sources+=("$f") ;; esac
done
cat >"$out/entry.c" <<'C'
/* A C entry point: every object of the core is linked, so every call they make must be in libSystem. */
#include "sb_platform.h"
int main(void) { return sb_platform_kernel_page_bytes() == 0; }
C
status=0
for target in aarch64-macos x86_64-macos; do
  mkdir -p "$out/$target"
  # two compilers at a time; each failure names its file on stderr
  if ! printf '%s\n' "${sources[@]}" | xargs -P 2 -I{} sh -c \
      'f="$1"; shift; "$@" -c "$f" -o "'"$out/$target"'/$(basename "$f" .c).o"' _ {} \
      "$py" -m ziglang cc -target "$target" "${flags[@]}"; then
    echo "build-macos: $target: compiling failed" >&2
    status=1
    continue
  fi
  # --no-gc-sections: zig's linker would drop code the entry point does not reach, and with it any call
  # of that code that libSystem lacks
  if ! "$py" -m ziglang cc -target "$target" "${flags[@]}" "$out/entry.c" "$out/$target"/*.o -lpthread \
      -Wl,--no-gc-sections -o "$out/stibium-core-$target"; then
    echo "build-macos: $target: linking failed" >&2
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "build-macos: Mach-O executables for aarch64-macos and x86_64-macos linked"
exit "$status"
