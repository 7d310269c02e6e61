#!/usr/bin/env bash
# The local registry: Debian's docker-registry (the CNCF distribution registry 2.8, the same
# software as the registry:2 image) on 127.0.0.1, for scripts/publish.sh and the tests that
# consume the published buildpack image.
#
#   scripts/registry.sh start    writes the configuration, starts `docker-registry serve` unless
#                                a registry already answers on the address, waits for /v2/
#   scripts/registry.sh stop     stops the registry this script started (by the pid it recorded),
#                                never another process
#   scripts/registry.sh status   says whether the registry answers; exit 1 when it does not
#
# The address is 127.0.0.1:5311 (PID1_REGISTRY overrides it: HOST:PORT, HOST a loopback
# address). Storage, configuration and pid live in /var/lib/pid1-buildpacks/registry, the log in
# /var/log/pid1-registry.log. Docker and pack use plain HTTP for 127.0.0.1 without extra flags.
set -Eeuo pipefail
trap 'echo "registry.sh: line ${LINENO}: \`${BASH_COMMAND}\` failed" >&2' ERR

ADDR="${PID1_REGISTRY:-127.0.0.1:5311}"
STATE="${PID1_REGISTRY_STATE:-/var/lib/pid1-buildpacks/registry}"
CONFIG="${STATE}/config.yml"
PIDFILE="${STATE}/registry.pid"
LOG="${PID1_REGISTRY_LOG:-/var/log/pid1-registry.log}"

log() { printf '\033[1m[registry]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[31m[registry] ERROR:\033[0m %s\n' "$*" >&2; exit 1; }

case "${ADDR}" in
  127.*:[0-9]* | localhost:[0-9]*) ;;
  *) die "PID1_REGISTRY=${ADDR}: expected 127.x.x.x:PORT or localhost:PORT (the registry binds to the loopback only)" ;;
esac

answers() { curl -fsS -o /dev/null --max-time 2 "http://${ADDR}/v2/" 2>/dev/null; }

# ours prints the pid recorded by start when that process is still our docker-registry.
ours() {
  local pid
  pid="$(cat "${PIDFILE}" 2>/dev/null)" || return 1
  [[ "${pid}" =~ ^[0-9]+$ ]] || return 1
  tr '\0' ' ' <"/proc/${pid}/cmdline" 2>/dev/null | grep -F -- "docker-registry serve ${CONFIG}" >/dev/null || return 1
  echo "${pid}"
}

write_config() {
  mkdir -p "${STATE}/data"
  cat >"${CONFIG}" <<EOF
# Written by scripts/registry.sh.
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: ${STATE}/data
  delete:
    enabled: true
http:
  addr: ${ADDR}
  secret: pid1-buildpacks-local  # one instance: a fixed secret, no warning at each start
EOF
}

start() {
  command -v docker-registry >/dev/null || die "docker-registry is not installed (Debian's docker-registry; scripts/setup.sh installs it)"
  command -v curl >/dev/null || die "curl is not installed"
  if answers; then
    log "a registry answers on http://${ADDR}/v2/"
    return
  fi
  if ss -ltn "sport = :${ADDR##*:}" 2>/dev/null | grep -q LISTEN; then
    die "port ${ADDR##*:} is taken by something that is not a registry: set PID1_REGISTRY=127.0.0.1:OTHERPORT"
  fi
  write_config
  log "starting docker-registry on ${ADDR} (storage ${STATE}/data, log ${LOG})"
  setsid docker-registry serve "${CONFIG}" >>"${LOG}" 2>&1 </dev/null &
  echo $! >"${PIDFILE}"
  local i
  for i in $(seq 1 50); do
    if answers; then
      log "registry up on http://${ADDR}/v2/ (pid $(cat "${PIDFILE}"))"
      return
    fi
    kill -0 "$(cat "${PIDFILE}")" 2>/dev/null || { tail -5 "${LOG}" >&2; die "docker-registry exited at start (log: ${LOG})"; }
    sleep 0.2
  done
  tail -5 "${LOG}" >&2
  die "docker-registry did not answer on http://${ADDR}/v2/ within 10s (log: ${LOG})"
}

stop() {
  local pid
  if ! pid="$(ours)"; then
    if answers; then
      die "the registry on ${ADDR} was not started by scripts/registry.sh (no live pid in ${PIDFILE}): not stopping it"
    fi
    log "no registry of ours is running"
    rm -f "${PIDFILE}"
    return
  fi
  kill -TERM "${pid}"
  local i
  for i in $(seq 1 50); do
    kill -0 "${pid}" 2>/dev/null || { rm -f "${PIDFILE}"; log "stopped (pid ${pid})"; return; }
    sleep 0.2
  done
  die "docker-registry (pid ${pid}) did not exit within 10s of SIGTERM"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status)
    if answers; then echo "a registry answers on http://${ADDR}/v2/"; else echo "no registry answers on http://${ADDR}/v2/"; exit 1; fi ;;
  *) die "usage: scripts/registry.sh start|stop|status" ;;
esac
