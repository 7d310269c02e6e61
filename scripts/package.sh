#!/usr/bin/env bash
# Builds the buildpack and packages it as .cnb files, one per target, with pack:
#   build/init-buildpack-linux-amd64.cnb, build/init-buildpack-linux-arm64.cnb
# and build/init-buildpack.cnb, a copy of the one for this machine's architecture.
# Each is packaged from build/package/linux-<arch>/: buildpack.toml with only that target's
# [[targets]] entry, and that target's bin/, so a package declares only what it holds.
# pack comes from $PACK, else .tools/bin/pack, else pack on PATH. No Docker daemon is needed.
set -Eeuo pipefail
trap 'echo "package.sh: line ${LINENO}: \`${BASH_COMMAND}\` failed" >&2' ERR

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$(pwd)"

pack="${PACK:-}"
if [[ -z "$pack" ]]; then
  if [[ -x .tools/bin/pack ]]; then
    pack=.tools/bin/pack
  elif command -v pack >/dev/null 2>&1; then
    pack="$(command -v pack)"
  fi
fi
if [[ -z "$pack" || ! -x "$pack" ]]; then
  echo "package.sh: pack not found: set PACK, build it into .tools/bin/pack, or put pack on PATH" >&2
  exit 1
fi

pack="$(cd "$(dirname "$pack")" && pwd)/$(basename "$pack")"

arches=(amd64 arm64)
build_args=()
for arch in "${arches[@]}"; do build_args+=(--target "linux/${arch}"); done
scripts/build.sh "${build_args[@]}"

# one_target ARCH: buildpack.toml without the [[targets]] entries (and their
# [[targets.distros]]) of other architectures.
one_target() {
  awk -v want="$1" '
    function flush() { if (n && keep) for (i = 1; i <= n; i++) print buf[i]; n = 0 }
    /^[[:space:]]*\[/ {
      if ($0 ~ /^[[:space:]]*\[\[targets\]\]/) { flush(); intarget = 1; keep = 0 }
      else if ($0 !~ /^[[:space:]]*\[\[targets\./) { flush(); intarget = 0 }
    }
    intarget { buf[++n] = $0; if ($0 ~ "^[[:space:]]*arch[[:space:]]*=[[:space:]]*\"" want "\"") { keep = 1; kept++ }; next }
    { print }
    END { flush(); if (kept != 1) exit 3 }
  ' buildpack.toml
}

mkdir -p build
for arch in "${arches[@]}"; do
  stage="build/package/linux-${arch}"
  rm -rf "$stage"
  mkdir -p "$stage/bin"
  one_target "$arch" >"$stage/buildpack.toml" ||
    { echo "package.sh: buildpack.toml must declare exactly one [[targets]] entry with arch = \"${arch}\"" >&2; exit 1; }
  cp "linux/${arch}/bin/detect" "linux/${arch}/bin/build" "linux/${arch}/bin/init" "$stage/bin/"
  printf '# Written by scripts/package.sh.\n[buildpack]\n  uri = "."\n' >"$stage/package.toml"
  out="build/init-buildpack-linux-${arch}.cnb"
  rm -f "$out"
  # --target names the platform of the image; without it pack v0.40 also writes a package for
  # the daemon's platform holding this one's binaries. pack runs in the stage: v0.40 looks for
  # a linux/<arch>/ folder relative to its working directory, not the buildpack's, and the
  # repository root has one.
  (cd "$stage" && "$pack" buildpack package "$root/$out" --config package.toml --format file --target "linux/${arch}")
done

host_arch="$(go env GOARCH)"
if [[ -f "build/init-buildpack-linux-${host_arch}.cnb" ]]; then
  cp "build/init-buildpack-linux-${host_arch}.cnb" build/init-buildpack.cnb
  echo "build/init-buildpack.cnb is the linux/${host_arch} package"
fi
