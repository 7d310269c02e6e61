#!/usr/bin/env bash
# Publishes the buildpack to a registry as one OCI image index for linux/amd64 and linux/arm64.
#
# Usage: scripts/publish.sh REPOSITORY      e.g. scripts/publish.sh 127.0.0.1:5311/pid1-buildpacks/init
#
#   1. checks that the registry answers and reads the version from buildpack.toml (the one place
#      it is written);
#   2. builds and packages the buildpack (scripts/package.sh: one .cnb per architecture, each
#      declaring only its own target);
#   3. pushes both images and the index by digest, reads them back and checks that each
#      platform's image holds bin/build, bin/detect and bin/init built for that platform
#      (ELF machine), and only then tags the index VERSION, MAJOR.MINOR, MAJOR and latest
#      (the floating tags move only forward: publishing 0.1.1 after 0.2.0 leaves 0 and latest).
#
# Prints the index digest on stdout, progress on stderr. Fails with one line and a non-zero exit
# when REPOSITORY is missing or malformed, the registry does not answer, or VERSION is already
# published with another digest (the same build published again is harmless). No tag moves
# before every check passed. Credentials come from ~/.docker/config.json, as for docker push.
set -Eeuo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

die() { echo "publish.sh: $1" >&2; exit "${2:-1}"; }

[[ $# -eq 1 && -n "$1" ]] ||
  die "usage: scripts/publish.sh REPOSITORY (a repository name without tag, e.g. 127.0.0.1:5311/pid1-buildpacks/init)" 2
repository="$1"

mkdir -p build
go build -o build/publish ./cmd/publish || die "building the release tool (./cmd/publish) failed"

# One line from the tool on failure (registry does not answer, malformed name).
version="$(build/publish check "${repository}" buildpack.toml)" || exit $?
echo "Publishing pid1-buildpacks/init ${version} to ${repository}" >&2

started=$(date +%s.%N)
echo "Packaging linux/amd64 and linux/arm64 (scripts/package.sh, log: build/publish-package.log)" >&2
scripts/package.sh >build/publish-package.log 2>&1 ||
  die "packaging failed: scripts/package.sh exited non-zero (log: build/publish-package.log)"

build/publish push "${repository}" buildpack.toml \
  build/init-buildpack-linux-amd64.cnb build/init-buildpack-linux-arm64.cnb || exit $?
printf 'Published %s:%s in %.1fs\n' "${repository}" "${version}" "$(echo "$(date +%s.%N) - ${started}" | bc)" >&2
