#!/usr/bin/env bash
# Makes, without any registry, the local platform the demo and the integration tests build on:
#   - a build image and a run image: `docker import` of a busybox-static root file system with
#     a non-root CNB user, plus /bin/bash (Debian's bash-static) because the launcher runs
#     Buildpack API 0.8 shell processes with bash and busybox has no bash applet;
#   - the lifecycle tarballs `pack builder create` takes, one per lifecycle scripts/setup.sh built
#     (.tools/lifecycle-v<version>.tgz; .tools/lifecycle.tgz is v0.21.11's): lifecycle.toml at
#     its root, listing the APIs that version supports, and a lifecycle/ folder with the binaries.
# Both are remade only when their inputs change (a hash of them is kept in a label / file name).
#
# Needs scripts/setup.sh to have run (it writes .tools/env).
set -Eeuo pipefail
trap 'echo "images.sh: line ${LINENO}: \`${BASH_COMMAND}\` failed" >&2' ERR

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=/dev/null
source "${ROOT}/.tools/env" 2>/dev/null || { echo "[images] ERROR: .tools/env missing: run scripts/setup.sh first" >&2; exit 1; }

BUILD_IMAGE="${PID1_BUILD_IMAGE:-pid1-buildpacks/build:busybox}"
RUN_IMAGE="${PID1_RUN_IMAGE:-pid1-buildpacks/run:busybox}"
STACK_ID="io.pid1-buildpacks.busybox"
WORK="${PID1_TOOLS}/images"

log() { printf '\033[1m[images]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[31m[images] ERROR:\033[0m %s\n' "$*" >&2; exit 1; }

[[ -x /bin/busybox ]] || die "/bin/busybox missing (Debian's busybox-static; scripts/setup.sh installs it)"
[[ -x /bin/bash-static ]] || die "/bin/bash-static missing (Debian's bash-static; scripts/setup.sh installs it)"

# make_rootfs DIR: a one-file userland (busybox applets as symlinks), bash, a CNB user.
make_rootfs() {
  local dir="$1" applet
  rm -rf "${dir}"
  mkdir -p "${dir}"/{bin,sbin,usr/bin,usr/sbin,etc,tmp,home/cnb,root,proc,sys,dev,workspace,layers}
  cp /bin/busybox "${dir}/bin/busybox"
  for applet in $(/bin/busybox --list-full); do
    [[ -e "${dir}/${applet}" ]] || ln -s /bin/busybox "${dir}/${applet}"
  done
  cp /bin/bash-static "${dir}/bin/bash"
  cat >"${dir}/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
cnb:x:1000:1000:cnb:/home/cnb:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
  cat >"${dir}/etc/group" <<'EOF'
root:x:0:
cnb:x:1000:
nogroup:x:65534:
EOF
  chmod 1777 "${dir}/tmp"
  chown 1000:1000 "${dir}/home/cnb" "${dir}/workspace" "${dir}/layers"
}

# import_image NAME HASH: imports the root file system as NAME unless NAME already carries HASH.
import_image() {
  local name="$1" hash="$2" have
  have="$(docker image inspect --format '{{index .Config.Labels "io.pid1-buildpacks.inputs"}}' "${name}" 2>/dev/null || true)"
  if [[ "${have}" == "${hash}" ]]; then
    log "${name}: up to date"
    return
  fi
  log "${name}: importing"
  local old
  old="$(docker image inspect --format '{{.Id}}' "${name}" 2>/dev/null || true)"
  local distro_version
  # sed reads all of busybox's output: `| head -1` would end the pipe early, and under pipefail
  # busybox's SIGPIPE would end this script without a word.
  distro_version="$(/bin/busybox | sed -n '1s/^BusyBox v\([0-9.]*\).*/\1/p')"
  tar -C "${WORK}/rootfs" --numeric-owner -cf - . |
    docker import \
      --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin' \
      --change 'ENV CNB_USER_ID=1000' \
      --change 'ENV CNB_GROUP_ID=1000' \
      --change "ENV CNB_STACK_ID=${STACK_ID}" \
      --change "LABEL io.buildpacks.stack.id=${STACK_ID}" \
      --change "LABEL io.buildpacks.base.distro.name=busybox" \
      --change "LABEL io.buildpacks.base.distro.version=${distro_version}" \
      --change "LABEL io.pid1-buildpacks.inputs=${hash}" \
      --change 'USER 1000:1000' \
      --change 'WORKDIR /' \
      - "${name}" >/dev/null || die "docker import ${name} failed"
  # The previous version, now untagged, goes unless something still uses it.
  [[ -z "${old}" ]] || docker rmi "${old}" >/dev/null 2>&1 || true
}

# lifecycle_apis MODULE_DIR KIND: the deprecated and supported KIND (Platform or Buildpack) APIs
# of the lifecycle that MODULE_DIR's go.mod pins, as lifecycle.toml lines, read from its
# api/apis.go.
lifecycle_apis() {
  local module="$1" kind="$2" dir line supported deprecated
  dir="$(cd "${module}" && go list -m -f '{{.Dir}}' github.com/buildpacks/lifecycle)" ||
    die "cannot find the lifecycle module of ${module}/go.mod (run scripts/setup.sh)"
  line="$(sed -n "s/^[[:space:]]*${kind} = newApisMustParse(\(.*\))\$/\1/p" "${dir}/api/apis.go")"
  [[ -n "${line}" ]] || die "cannot read the ${kind} APIs from ${dir}/api/apis.go"
  supported="$(sed 's/^\[\]string{\(.*\)}, \[\]string{.*}$/\1/' <<<"${line}")"
  deprecated="$(sed 's/^\[\]string{.*}, \[\]string{\(.*\)}$/\1/' <<<"${line}")"
  printf '  deprecated = [%s]\n  supported = [%s]\n' "${deprecated}" "${supported}"
}

# lifecycle_tarball VERSION BIN_DIR MODULE_DIR: writes .tools/lifecycle-v<version>-<hash>.tgz from
# the lifecycle and launcher in BIN_DIR, with a lifecycle.toml listing the APIs that version
# supports, and links .tools/lifecycle-v<version>.tgz to it.
lifecycle_tarball() {
  local version="$1" bin="$2" module="$3" hash out stage
  hash="$(cat "${bin}/lifecycle" "${bin}/launcher" "${BASH_SOURCE[0]}" | sha256sum | cut -c1-12)"
  out="${PID1_TOOLS}/lifecycle-v${version}-${hash}.tgz"
  if [[ -s "${out}" ]]; then
    log "lifecycle ${version} tarball: up to date"
  else
    log "lifecycle ${version} tarball: writing ${out}"
    stage="$(mktemp -d)"
    mkdir -p "${stage}/lifecycle"
    cp "${bin}/lifecycle" "${bin}/launcher" "${stage}/lifecycle/"
    local phase
    for phase in detector restorer analyzer builder exporter creator rebaser extender; do
      ln -s lifecycle "${stage}/lifecycle/${phase}"
    done
    cat >"${stage}/lifecycle.toml" <<EOF
[apis]
[apis.buildpack]
$(lifecycle_apis "${module}" Buildpack)
[apis.platform]
$(lifecycle_apis "${module}" Platform)

[api]
  platform = "0.7"
  buildpack = "0.7"

[lifecycle]
  version = "${version}"
  sbom-formats = ["application/vnd.cyclonedx+json", "application/spdx+json", "application/vnd.syft+json"]
EOF
    tar -C "${stage}" --owner=0 --group=0 --numeric-owner -czf "${out}.tmp" lifecycle.toml lifecycle
    mv "${out}.tmp" "${out}"
    rm -rf "${stage}"
  fi
  ln -sf "$(basename "${out}")" "${PID1_TOOLS}/lifecycle-v${version}.tgz"
}

mkdir -p "${WORK}"
inputs="$(cat /bin/busybox /bin/bash-static "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16)"
if [[ "$(docker image inspect --format '{{index .Config.Labels "io.pid1-buildpacks.inputs"}}' "${BUILD_IMAGE}" 2>/dev/null)" != "${inputs}" ||
  "$(docker image inspect --format '{{index .Config.Labels "io.pid1-buildpacks.inputs"}}' "${RUN_IMAGE}" 2>/dev/null)" != "${inputs}" ]]; then
  make_rootfs "${WORK}/rootfs"
fi
import_image "${BUILD_IMAGE}" "${inputs}"
import_image "${RUN_IMAGE}" "${inputs}"
lifecycle_tarball "${LIFECYCLE_VERSION}" "${PID1_TOOLS}/bin" "${ROOT}/integration"
ln -sf "lifecycle-v${LIFECYCLE_VERSION}.tgz" "${PID1_TOOLS}/lifecycle.tgz"
# The older lifecycles of the lifecycle matrix (scripts/setup.sh builds them).
for module in "${ROOT}"/integration/lifecycles/v*/; do
  module="${module%/}"
  version="${module##*/v}"
  lifecycle_tarball "${version}" "${PID1_TOOLS}/lifecycles/v${version}" "${module}"
done
