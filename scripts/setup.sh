#!/usr/bin/env bash
# Sets up, on a fresh machine of this project's kind, everything the demo and the
# integration tests need, and reuses whatever is already there:
#   1. Debian packages: docker.io, busybox-static, bash-static, strace (the init's tests), podman
#      (a second engine), qemu-user-static (runs the arm64 init), docker-registry (a local
#      registry), tini, dumb-init and catatonit (the init's benchmark and peers), after one
#      `apt-get update`, only when missing;
#   2. a Docker daemon: dockerd is started when none answers, and waited for; the local registry
#      (scripts/registry.sh start: docker-registry on 127.0.0.1:5311) likewise;
#   3. pack v0.40.0 and lifecycle v0.21.11 (lifecycle + launcher), built from the Go module
#      proxy as declared in integration/go.mod, into the git-ignored .tools/bin; and the older
#      lifecycles of the lifecycle matrix (v0.18.5, v0.20.12), each declared in its own module
#      integration/lifecycles/v<version>/go.mod, into .tools/lifecycles/v<version>; crictl v1.37.0
#      (the CRI client of the Pods tests), declared in integration/cri-tools/v1.37.0/go.mod,
#      into .tools/bin. Builds are
#      cached machine-wide by version in $PID1_TOOLS_CACHE (default
#      /var/cache/pid1-buildpacks), so another clone on the same machine (CI) reuses them;
#   4. .tools/env, a file to source: PATH with .tools/bin first, DOCKER_API_VERSION set to the
#      daemon's API version (pack speaks a newer one than Debian's engine accepts), PACK,
#      PID1_REGISTRY (the local registry's HOST:PORT).
#
# Usage: scripts/setup.sh            (everything)
#        scripts/setup.sh --no-docker (packages and tools only)
set -Eeuo pipefail
trap 'echo "setup.sh: line ${LINENO}: \`${BASH_COMMAND}\` failed" >&2' ERR

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="${ROOT}/.tools"
CACHE="${PID1_TOOLS_CACHE:-/var/cache/pid1-buildpacks}"
PACK_VERSION="0.40.0"
LIFECYCLE_VERSION="0.21.11"
CRICTL_VERSION="1.37.0"

log() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[31m[setup] ERROR:\033[0m %s\n' "$*" >&2; exit 1; }

with_docker=true
[[ "${1:-}" == "--no-docker" ]] && with_docker=false

[[ "$(id -u)" == 0 ]] || die "must run as root (installs Debian packages, starts dockerd)"
command -v go >/dev/null || die "go is not on PATH (needs Go 1.26 to build pack and the lifecycle)"

# --- 1. Debian packages -----------------------------------------------------------------
install_packages() {
  local missing=()
  command -v dockerd >/dev/null || missing+=(docker.io)
  [[ -x /bin/busybox ]] || missing+=(busybox-static)
  [[ -x /bin/bash-static ]] || missing+=(bash-static)
  [[ -x /usr/bin/tini-static ]] || missing+=(tini) # tini-static: the init's stress suite
  command -v perl >/dev/null || missing+=(perl-base) # the stress suite's fork loads
  command -v dumb-init >/dev/null || missing+=(dumb-init)
  command -v catatonit >/dev/null || missing+=(catatonit)
  command -v unshare >/dev/null || missing+=(util-linux)
  command -v script >/dev/null || missing+=(bsdutils)
  command -v strace >/dev/null || missing+=(strace)
  command -v podman >/dev/null || missing+=(podman)
  command -v qemu-aarch64-static >/dev/null || missing+=(qemu-user-static)
  command -v docker-registry >/dev/null || missing+=(docker-registry)
  command -v curl >/dev/null || missing+=(curl)
  command -v containerd >/dev/null || missing+=(containerd)
  command -v containerd-shim-runc-v2 >/dev/null || missing+=(containerd)
  command -v runc >/dev/null || missing+=(runc)
  if ((${#missing[@]} == 0)); then
    log "Debian packages: all present"
    return
  fi
  log "Debian packages: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  timeout 600 apt-get update -q >/dev/null || die "apt-get update failed"
  timeout 900 apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null \
    || die "apt-get install ${missing[*]} failed"
  # docker.io's own client is enough; it may have been missing too.
  command -v docker >/dev/null || die "docker client still missing after installing docker.io"
}

# --- 2. Docker daemon -------------------------------------------------------------------
start_docker() {
  if timeout 20 docker version --format '{{.Server.APIVersion}}' >/dev/null 2>&1; then
    log "Docker: daemon answers"
    return
  fi
  log "Docker: no daemon answers; starting dockerd (log: /var/log/pid1-dockerd.log)"
  if ! pgrep -x dockerd >/dev/null; then
    setsid dockerd >/var/log/pid1-dockerd.log 2>&1 </dev/null &
  fi
  local i
  for i in $(seq 1 60); do
    if timeout 10 docker version --format '{{.Server.APIVersion}}' >/dev/null 2>&1; then
      log "Docker: daemon up after ${i}s"
      return
    fi
    sleep 1
  done
  tail -20 /var/log/pid1-dockerd.log >&2 || true
  die "Docker daemon did not answer within 60s; the integration tests and the demo need it"
}

# --- 3. pack and the lifecycles ---------------------------------------------------------
# Each build is cached under a key that covers the versions, the go.mod and go.sum it is built
# from (every dependency's hash) and the Go toolchain, so a changed dependency or toolchain
# builds anew.
cache_key() {
  cat "$1/go.mod" "$1/go.sum" <(go version) | sha256sum | cut -c1-16
}

# build_tool MODULE_DIR PACKAGE LDFLAGS OUT: builds PACKAGE, as MODULE_DIR's go.mod pins it,
# into OUT unless OUT is already there.
build_tool() {
  local module="$1" pkg="$2" flags="$3" out="$4"
  if [[ -x "${out}" ]]; then
    log "$(basename "${out}"): cached in $(dirname "${out}")"
    return
  fi
  log "$(basename "${out}"): building ${pkg} from ${module#"${ROOT}/"}/go.mod (about 90s on 2 cores)"
  (cd "${module}" &&
    CGO_ENABLED=0 GOFLAGS=-buildvcs=false timeout 1200 \
      go build -trimpath -ldflags "${flags}" -o "${out}.tmp" "${pkg}") \
    || die "building ${pkg} from ${module}/go.mod failed"
  mv "${out}.tmp" "${out}"
}

# link_tool FROM TO: a hard link when the cache shares the file system, a copy otherwise.
link_tool() {
  mkdir -p "$(dirname "$2")"
  ln -f "$1" "$2" 2>/dev/null || cp -f "$1" "$2"
}

# build_lifecycle VERSION MODULE_DIR CACHE_DIR DEST: lifecycle and launcher of VERSION, built in
# CACHE_DIR, linked into DEST.
build_lifecycle() {
  local version="$1" module="$2" dir="$3" dest="$4" name
  mkdir -p "${dir}"
  for name in lifecycle launcher; do
    build_tool "${module}" "github.com/buildpacks/lifecycle/cmd/${name}" \
      "-s -w -X github.com/buildpacks/lifecycle/cmd.Version=${version}" "${dir}/${name}"
    link_tool "${dir}/${name}" "${dest}/${name}"
  done
}

build_tools() {
  local dir
  dir="${CACHE}/tools/pack-${PACK_VERSION}_lifecycle-${LIFECYCLE_VERSION}_$(cache_key "${ROOT}/integration")"
  mkdir -p "${dir}" "${TOOLS}/bin"
  build_tool "${ROOT}/integration" github.com/buildpacks/pack \
    "-s -w -X github.com/buildpacks/pack/pkg/client.Version=${PACK_VERSION}" "${dir}/pack"
  link_tool "${dir}/pack" "${TOOLS}/bin/pack"
  build_lifecycle "${LIFECYCLE_VERSION}" "${ROOT}/integration" "${dir}" "${TOOLS}/bin"

  # The older lifecycles of the integration tests' lifecycle matrix, each pinned by its own
  # module in integration/lifecycles/v<version>.
  local module version
  for module in "${ROOT}"/integration/lifecycles/v*/; do
    module="${module%/}"
    version="${module##*/v}"
    build_lifecycle "${version}" "${module}" \
      "${CACHE}/tools/lifecycle-${version}_$(cache_key "${module}")" "${TOOLS}/lifecycles/v${version}"
  done

  # crictl, the CRI client of the Pods tests, pinned by its own module.
  module="${ROOT}/integration/cri-tools/v${CRICTL_VERSION}"
  dir="${CACHE}/tools/crictl-${CRICTL_VERSION}_$(cache_key "${module}")"
  mkdir -p "${dir}"
  build_tool "${module}" sigs.k8s.io/cri-tools/cmd/crictl \
    "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=${CRICTL_VERSION}" "${dir}/crictl"
  link_tool "${dir}/crictl" "${TOOLS}/bin/crictl"
}

write_env() {
  local api=""
  if ${with_docker}; then
    api="$(timeout 20 docker version --format '{{.Server.APIVersion}}')" || die "cannot read the daemon's API version"
  fi
  cat >"${TOOLS}/env" <<EOF
# Written by scripts/setup.sh; source it.
export PATH="${TOOLS}/bin:\${PATH}"
export PACK="${TOOLS}/bin/pack"
export PID1_TOOLS="${TOOLS}"
export PACK_VERSION="${PACK_VERSION}"
export LIFECYCLE_VERSION="${LIFECYCLE_VERSION}"
# A fixed key for pack's cache volumes: pack sees it runs in a container and otherwise warns and
# records a random key per image in ~/.pack/volume-keys.toml.
export PACK_VOLUME_KEY="\${PACK_VOLUME_KEY:-pid1-buildpacks-local}"
# The local registry (scripts/registry.sh).
export PID1_REGISTRY="${PID1_REGISTRY:-127.0.0.1:5311}"
EOF
  if [[ -n "${api}" ]]; then
    echo "export DOCKER_API_VERSION=\"${api}\"" >>"${TOOLS}/env"
    log "Docker: DOCKER_API_VERSION=${api} (negotiated with the daemon)"
  fi
}

install_packages
if ${with_docker}; then
  start_docker
  "${ROOT}/scripts/registry.sh" start || die "the local registry did not start (scripts/registry.sh start)"
fi
build_tools
write_env
log "ready: source ${TOOLS}/env"
