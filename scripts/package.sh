#!/usr/bin/env bash
# Builds the buildpack and packages it as .cnb files, one per target, with pack:
#   build/init-buildpack-linux-amd64.cnb, build/init-buildpack-linux-arm64.cnb
# and build/init-buildpack.cnb, a copy of the one for this machine's architecture.
# pack comes from $PACK, else .tools/bin/pack, else pack on PATH. No Docker daemon is needed.
set -Eeuo pipefail
trap 'echo "package.sh: line ${LINENO}: \`${BASH_COMMAND}\` failed" >&2' ERR

cd "$(dirname "${BASH_SOURCE[0]}")/.."

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

arches=(amd64 arm64)
build_args=()
for arch in "${arches[@]}"; do build_args+=(--target "linux/${arch}"); done
scripts/build.sh "${build_args[@]}"

mkdir -p build
for arch in "${arches[@]}"; do
  out="build/init-buildpack-linux-${arch}.cnb"
  rm -f "$out"
  # pack reads [[targets]] from ./buildpack.toml and packages the directory linux/<arch>/
  "$pack" buildpack package "$out" --config package.toml --format file --target "linux/${arch}"
done

host_arch="$(go env GOARCH)"
if [[ -f "build/init-buildpack-linux-${host_arch}.cnb" ]]; then
  cp "build/init-buildpack-linux-${host_arch}.cnb" build/init-buildpack.cnb
  echo "build/init-buildpack.cnb is the linux/${host_arch} package"
fi
