#!/usr/bin/env bash
# A Kubernetes node's runtime for the Pods integration tests: a containerd of its own (Debian's
# containerd 1.6 and its CRI plugin), started beside Docker's and never touching it.
#
#   scripts/pods.sh start          writes the configuration (`containerd config default` with its
#                                  own root, state directory, socket and an empty CNI directory),
#                                  starts containerd, waits until its CRI reports RuntimeReady, and
#                                  imports the sandbox image pid1-pods/pause:local, built here from
#                                  integration/testdata/pause. Reuses a containerd it started,
#                                  removing the pods a killed run left in it.
#   scripts/pods.sh import IMAGE...
#                                  copies Docker images into it (docker save | ctr images import,
#                                  in the CRI's namespace k8s.io)
#   scripts/pods.sh stop           removes every pod of it, stops the containerd it started (by the
#                                  pid it recorded), the shims of its socket (and their sockets)
#                                  and, after a crash of it, what remains in the pods' cgroups;
#                                  unmounts and removes its root and state directory and the
#                                  pods' cgroups (/pid1-pods), and fails if any
#                                  process, mount or cgroup of it remains
#   scripts/pods.sh status         says whether it runs, and its CRI endpoint
#
# Everything it makes has pid1-pods in its path: root /var/lib/pid1-pods, state and socket under
# /run/pid1-pods (crictl's configuration: /run/pid1-pods/crictl.yaml), log
# /var/log/pid1-pods-containerd.log. Pods run on the host network (see
# docs/pods.md), so no network namespace is made; streaming (exec) listens on 127.0.0.1 only.
# Needs root, containerd, runc and crictl (scripts/setup.sh installs and builds them).
set -Eeuo pipefail
trap 'echo "pods.sh: line ${LINENO}: \`${BASH_COMMAND}\` failed" >&2' ERR

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA=/var/lib/pid1-pods
RUN=/run/pid1-pods
SOCKET="${RUN}/containerd.sock"
CONFIG="${RUN}/containerd.toml"
# crictl's configuration: the tests run `crictl --config` with it.
CRICTL_CONFIG="${RUN}/crictl.yaml"
PIDFILE="${RUN}/containerd.pid"
LOG=/var/log/pid1-pods-containerd.log
PAUSE_IMAGE=docker.io/pid1-pods/pause:local

log() { printf '\033[1m[pods]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[31m[pods] ERROR:\033[0m %s\n' "$*" >&2; exit 1; }

[[ "$(id -u)" == 0 ]] || die "must run as root (starts containerd, mounts its snapshots)"

crictl() {
  local bin="${ROOT}/.tools/bin/crictl"
  [[ -x "${bin}" ]] || die "${bin} missing: run scripts/setup.sh (it builds crictl)"
  "${bin}" --config "${CRICTL_CONFIG}" "$@"
}

ctr_k8s() { ctr --address "${SOCKET}" --namespace k8s.io "$@"; }

# our_pid: the pid of the containerd this script started, if it still runs.
our_pid() {
  local pid
  pid="$(cat "${PIDFILE}" 2>/dev/null)" || return 1
  [[ "${pid}" =~ ^[0-9]+$ ]] || return 1
  tr '\0' ' ' 2>/dev/null <"/proc/${pid}/cmdline" | grep -qF -- "containerd --config ${CONFIG}" || return 1
  echo "${pid}"
}

# write_config: containerd's defaults, with every path of its own; each change is checked.
# restrict_oom_score_adj: the CRI gives a sandbox oom_score_adj -998, and a machine that is
# itself a container may not lower it (runc then fails with "can't get final child's PID from
# pipe: EOF"); restricted, the CRI keeps it at or above containerd's own. Root: runc's state,
# by default under /run/containerd/runc.
write_config() {
  local default
  default="$(containerd config default)" || die "containerd config default failed"
  mkdir -p "${RUN}/cni" "${DATA}"
  sed -e "s|^root = .*|root = \"${DATA}/root\"|" \
    -e "s|^state = .*|state = \"${RUN}/state\"|" \
    -e "s|^  address = \"/run/containerd/containerd.sock\"|  address = \"${SOCKET}\"|" \
    -e "s|^\( *sandbox_image = \).*|\1\"${PAUSE_IMAGE}\"|" \
    -e "s|^\( *bin_dir = \)\"/opt/cni/bin\"|\1\"/usr/lib/cni\"|" \
    -e "s|^\( *conf_dir = \)\"/etc/cni/net.d\"|\1\"${RUN}/cni\"|" \
    -e "s|^\( *path = \)\"/opt/containerd\"|\1\"${DATA}/opt\"|" \
    -e "s|^\( *restrict_oom_score_adj = \).*|\1true|" \
    -e "s|^\( *Root = \)\"\"|\1\"${RUN}/runc\"|" \
    <<<"${default}" >"${CONFIG}.tmp"
  local want
  for want in "root = \"${DATA}/root\"" "state = \"${RUN}/state\"" "address = \"${SOCKET}\"" \
    "sandbox_image = \"${PAUSE_IMAGE}\"" "restrict_oom_score_adj = true" "conf_dir = \"${RUN}/cni\"" "path = \"${DATA}/opt\"" "Root = \"${RUN}/runc\""; do
    grep -qF -- "${want}" "${CONFIG}.tmp" || die "containerd config default has changed: could not set ${want} in ${CONFIG}"
  done
  if grep -E '^ *disabled_plugins = .*cri' "${CONFIG}.tmp"; then
    die "${CONFIG}: the CRI plugin is disabled"
  fi
  mv "${CONFIG}.tmp" "${CONFIG}"
}

# pause_archive FILE: the sandbox image as an OCI image layout archive, one uncompressed layer
# holding /pause (a static Go program).
pause_archive() {
  local out="$1" dir
  dir="$(mktemp -d)"
  mkdir -p "${dir}/rootfs" "${dir}/oci/blobs/sha256"
  (cd "${ROOT}/integration" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -ldflags '-s -w' \
    -o "${dir}/rootfs/pause" ./testdata/pause) || die "unable to build integration/testdata/pause"
  tar --owner=0 --group=0 --numeric-owner --mtime=@0 -C "${dir}/rootfs" -cf "${dir}/layer.tar" pause
  local layer config manifest arch
  arch="$(go env GOARCH)"
  layer="$(blob "${dir}" "${dir}/layer.tar")"
  printf '{"architecture":"%s","os":"linux","config":{"Entrypoint":["/pause"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "${arch}" "${layer%% *}" >"${dir}/config.json"
  config="$(blob "${dir}" "${dir}/config.json")"
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
    "${config%% *}" "${config##* }" "${layer%% *}" "${layer##* }" >"${dir}/manifest.json"
  manifest="$(blob "${dir}" "${dir}/manifest.json")"
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s"}}]}' \
    "${manifest%% *}" "${manifest##* }" "${PAUSE_IMAGE}" >"${dir}/oci/index.json"
  echo '{"imageLayoutVersion":"1.0.0"}' >"${dir}/oci/oci-layout"
  tar -C "${dir}/oci" -cf "${out}" oci-layout index.json blobs
  rm -rf "${dir}"
}

# blob DIR FILE: puts FILE into DIR's image layout by digest; prints "DIGEST SIZE".
blob() {
  local digest
  digest="$(sha256sum "$2" | cut -d' ' -f1)"
  cp "$2" "$1/oci/blobs/sha256/${digest}"
  echo "${digest} $(stat -c %s "$2")"
}

start() {
  command -v containerd >/dev/null || die "containerd missing: run scripts/setup.sh (it installs Debian's containerd)"
  command -v runc >/dev/null || die "runc missing: run scripts/setup.sh"
  mkdir -p "${RUN}"
  local pid
  if pid="$(our_pid)"; then
    log "containerd: already running (pid ${pid}, unix://${SOCKET}); removing the pods a run left in it"
    crictl rmp --all --force >/dev/null || die "unable to remove the pods left in containerd (crictl rmp --all --force)"
  else
    write_config
    log "containerd: starting with ${CONFIG} (log: ${LOG})"
    setsid containerd --config "${CONFIG}" >"${LOG}" 2>&1 </dev/null &
    echo $! >"${PIDFILE}"
  fi
  printf 'runtime-endpoint: unix://%s\nimage-endpoint: unix://%s\ntimeout: 30\npull-image-on-create: false\n' \
    "${SOCKET}" "${SOCKET}" >"${CRICTL_CONFIG}"
  local i ready='{{range .status.conditions}}{{if eq .type "RuntimeReady"}}{{.status}}{{end}}{{end}}'
  for i in $(seq 1 60); do
    if [[ "$(crictl info -o go-template --template "${ready}" 2>/dev/null)" == true ]]; then
      log "containerd: CRI RuntimeReady after ${i}s"
      break
    fi
    our_pid >/dev/null || { tail -20 "${LOG}" >&2; die "containerd exited at start (log above, ${LOG})"; }
    ((i < 60)) || { tail -20 "${LOG}" >&2; die "containerd's CRI at unix://${SOCKET} did not report RuntimeReady within 60s"; }
    sleep 1
  done
  local archive="${RUN}/pause.tar"
  pause_archive "${archive}"
  ctr_k8s images import "${archive}" >/dev/null || die "unable to import ${archive} into containerd"
  rm -f "${archive}"
  crictl inspecti "${PAUSE_IMAGE}" >/dev/null || die "the CRI does not see ${PAUSE_IMAGE} after the import"
  log "sandbox image ${PAUSE_IMAGE} imported; CRI endpoint unix://${SOCKET}"
}

import_images() {
  (($# > 0)) || die "import: name at least one Docker image"
  our_pid >/dev/null || die "no containerd of scripts/pods.sh runs: run scripts/pods.sh start first"
  log "importing $* from Docker"
  docker save "$@" | ctr_k8s images import - >/dev/null ||
    die "unable to import $* (docker save | ctr images import)"
}

stop() {
  local pid
  if pid="$(our_pid)"; then
    crictl rmp --all --force >/dev/null 2>&1 || log "warning: crictl rmp --all --force failed; stopping containerd anyway"
    log "containerd: stopping pid ${pid}"
    kill -TERM "${pid}"
    local i
    for i in $(seq 1 100); do
      kill -0 "${pid}" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 "${pid}" 2>/dev/null && { log "containerd: still running after 10s, SIGKILL"; kill -KILL "${pid}"; }
  else
    log "containerd: none of ours runs"
  fi
  end_leftovers
  local mnt
  for mnt in $(awk -v data="${DATA}/" -v run="${RUN}/" 'index($2, data) == 1 || index($2, run) == 1 { print $2 }' /proc/self/mounts | sort -r); do
    umount "${mnt}" || umount -l "${mnt}"
  done
  rm -rf --one-file-system "${RUN}" "${DATA}"
  local cgroup
  for cgroup in /sys/fs/cgroup/*/pid1-pods /sys/fs/cgroup/pid1-pods; do
    [[ -d "${cgroup}" ]] || continue # cpu and cpuacct may be one hierarchy, already done
    find "${cgroup}" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  check_nothing_left
  log "containerd: stopped; ${RUN}, ${DATA} and the pods' cgroups removed"
}

# our_processes prints "PID ARGS..." for each process of our containerd: it or a shim (their
# command lines name our socket or configuration).
our_processes() {
  local file pid args
  for file in /proc/[0-9]*/cmdline; do
    pid="${file#/proc/}"
    pid="${pid%/cmdline}"
    mapfile -d '' args 2>/dev/null <"${file}" || continue
    if [[ " ${args[*]} " == *" ${SOCKET} "* || " ${args[*]} " == *" ${CONFIG} "* ]]; then
      echo "${pid} ${args[*]}"
    fi
  done
}

# end_leftovers SIGKILLs what outlives our containerd: its shims (always) and, when it was
# killed before it removed its pods, the pods' processes (in the pods' cgroups). It removes the
# shims' sockets, which containerd 1.6 names /run/containerd/s/<sha256 of "SOCKET/NAMESPACE/ID">,
# and waits up to 10 s until they are gone.
end_leftovers() {
  local pid args namespace id pids=()
  while read -r pid args; do
    [[ " ${args} " == *" -address ${SOCKET} "* ]] || continue
    namespace="$(sed -n 's/.* -namespace \([^ ]*\).*/\1/p' <<<"${args}")"
    id="$(sed -n 's/.* -id \([^ ]*\).*/\1/p' <<<"${args}")"
    log "shim: stopping pid ${pid} (${namespace}/${id})"
    kill -KILL "${pid}" 2>/dev/null || true
    pids+=("${pid}")
    rm -f "/run/containerd/s/$(printf '%s' "${SOCKET}/${namespace}/${id}" | sha256sum | cut -d' ' -f1)"
  done < <(our_processes)
  local cgroup cgroups=() procs=()
  for cgroup in /sys/fs/cgroup/*/pid1-pods /sys/fs/cgroup/pid1-pods; do
    [[ -d "${cgroup}" ]] && cgroups+=("${cgroup}")
  done
  if ((${#cgroups[@]} > 0)); then
    mapfile -t procs < <(find "${cgroups[@]}" -name cgroup.procs -exec cat {} + | sort -u)
  fi
  if ((${#procs[@]} > 0)); then
    log "pods: SIGKILL to the ${#procs[@]} processes left in the pods' cgroups: ${procs[*]}"
    kill -KILL "${procs[@]}" 2>/dev/null || true
    pids+=("${procs[@]}")
  fi
  local i
  for i in $(seq 1 100); do
    for pid in "${pids[@]}"; do
      [[ -e "/proc/${pid}" ]] && { sleep 0.1; continue 2; }
    done
    return 0
  done
}

# check_nothing_left fails when a process of our containerd, a mount or a cgroup of ours remains.
check_nothing_left() {
  local left=()
  mapfile -t left < <(our_processes)
  ((${#left[@]} == 0)) || die "left behind: processes of our containerd: ${left[*]}"
  if awk -v data="${DATA}/" -v run="${RUN}/" 'index($2, data) == 1 || index($2, run) == 1 { found = 1 } END { exit !found }' /proc/self/mounts; then
    die "left behind: mounts under ${DATA} or ${RUN}"
  fi
  if compgen -G "/sys/fs/cgroup/*/pid1-pods" >/dev/null || [[ -d /sys/fs/cgroup/pid1-pods ]]; then
    die "left behind: cgroups /sys/fs/cgroup/*/pid1-pods"
  fi
}

status() {
  local pid
  if pid="$(our_pid)"; then
    echo "running: pid ${pid}, CRI endpoint unix://${SOCKET}"
  else
    echo "not running"
    exit 1
  fi
}

case "${1:-}" in
  start) start ;;
  import) shift; import_images "$@" ;;
  stop) stop ;;
  status) status ;;
  *) die "unknown argument ${1:-(none)}: want start, import IMAGE..., stop or status" ;;
esac
