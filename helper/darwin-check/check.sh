#!/usr/bin/env bash
# Check the helper's Objective-C files as Apple's compiler sees them, on Linux: clang -fsyntax-only with
# __APPLE__ defined and __linux__ undefined, against GNUstep Base's Foundation headers and the few Apple
# Foundation declarations GNUstep lacks (include/sb_darwin_foundation.h). Not a Mac build: the C files
# are built for macOS against Apple's real SDK by build-macos.sh beside this file.
# Usage: helper/darwin-check/check.sh [SOURCE_DIR]   (default: the helper folder beside this one)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="${1:-$here/..}"
clang=${CLANG:-clang}
command -v "$clang" >/dev/null || { echo "darwin-check: clang not found; install clang" >&2; exit 2; }
common=(-fsyntax-only -Werror -Wall -Wno-unknown-pragmas -D__APPLE__ -D__MACH__ -U__linux__ -U__linux -Ulinux
        -U__gnu_linux__ -I"$here/include" -I"$src")
status=0
# Apple's branches (no GNUSTEP defined) against GNUstep Base's Foundation headers, with GCC's Objective-C
# runtime headers, as the Linux clang build of the helper.
objc_flags=$(gnustep-config --objc-flags | tr ' ' '\n' | grep -E '^-I|^-D' | grep -v -E '^-DGNUSTEP$|^-DGNUSTEP_' || true)
gcc_include=$(gcc -print-file-name=include)
for f in "$src"/*.m; do
  # shellcheck disable=SC2086
  "$clang" -x objective-c -fobjc-runtime=gcc -fobjc-exceptions -fconstant-string-class=NSConstantString -I"$gcc_include" $objc_flags \
    "${common[@]}" -include "$here/include/sb_darwin_foundation.h" "$f" || status=1
done
[ "$status" -eq 0 ] && echo "darwin-check: the Objective-C files compile for Apple (syntax and types; not a Mac build)"
exit "$status"
