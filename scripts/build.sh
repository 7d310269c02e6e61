#!/usr/bin/env bash
# Builds the buildpack: detect, build and the init, static and stripped, for each target.
#
#   linux/<arch>/bin/{detect,build,init}  one complete buildpack root per target; pack buildpack
#                                         package uses linux/<arch>/ for target linux/<arch>
#   bin/{detect,build,init}               copies for this machine's architecture, so the repository
#                                         root is itself a buildpack (pack build --buildpack .)
#   build/buildpack/                      buildpack.toml and bin/ only: a small buildpack directory
#                                         for pack build --buildpack build/buildpack
#   bin/audit                             the audit for builder owners and platforms (cmd/audit),
#                                         for this machine: a tool, not part of the buildpack
#
# Usage: scripts/build.sh [--target linux/<arch>]...   (default: linux/amd64 and linux/arm64)
set -Eeuo pipefail
trap 'echo "build.sh: line ${LINENO}: \`${BASH_COMMAND}\` failed" >&2' ERR

cd "$(dirname "${BASH_SOURCE[0]}")/.."

targets=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --target)
      [[ $# -ge 2 ]] || { echo "build.sh: --target needs a value such as linux/amd64" >&2; exit 2; }
      targets+=("$2"); shift 2 ;;
    *)
      echo "build.sh: unknown argument '$1'; usage: scripts/build.sh [--target linux/<arch>]..." >&2; exit 2 ;;
  esac
done
[[ ${#targets[@]} -gt 0 ]] || targets=(linux/amd64 linux/arm64)

if ! ls init/*.go >/dev/null 2>&1; then
  echo "build.sh: no Go files in init/: the init (package main github.com/pid1-buildpacks/init/init) must exist before the buildpack can be built" >&2
  exit 1
fi

host_arch="$(go env GOARCH)"
host_built=false

for target in "${targets[@]}"; do
  os="${target%%/*}"
  arch="${target#*/}"
  if [[ "$os" != linux || -z "$arch" || "$arch" == "$target" ]]; then
    echo "build.sh: unsupported target '$target': expected linux/<arch>, such as linux/amd64" >&2
    exit 2
  fi
  out="linux/${arch}/bin"
  mkdir -p "$out"
  echo "Building ${target} into ${out}"
  for pkg in detect build; do
    CGO_ENABLED=0 GOOS=linux GOARCH="$arch" go build -trimpath -buildvcs=false -ldflags='-s -w' \
      -o "${out}/${pkg}" "./cmd/${pkg}"
  done
  CGO_ENABLED=0 GOOS=linux GOARCH="$arch" go build -trimpath -buildvcs=false -ldflags='-s -w' \
    -o "${out}/init" ./init
  [[ "$arch" == "$host_arch" ]] && host_built=true
done

if [[ "$host_built" != true ]]; then
  echo "build.sh: this machine's architecture linux/${host_arch} was not among the targets; bin/ is not updated" >&2
  exit 0
fi

mkdir -p bin
cp "linux/${host_arch}/bin/detect" "linux/${host_arch}/bin/build" "linux/${host_arch}/bin/init" bin/
echo "Copied linux/${host_arch}/bin to bin/ (the repository root is a buildpack directory)"

CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags='-s -w' -o bin/audit ./cmd/audit
echo "Built bin/audit"

rm -rf build/buildpack
mkdir -p build/buildpack/bin
cp buildpack.toml build/buildpack/
cp bin/detect bin/build bin/init build/buildpack/bin/
echo "Assembled build/buildpack"
