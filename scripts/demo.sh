#!/usr/bin/env bash
# The demo: builds the sample app twice with pack, once with the sample app buildpacks only
# and once with the PID 1 init buildpack last in the group, runs both images with Docker and
# shows side by side:
#   - who is PID 1;
#   - zombies left in the container by a `docker exec` shell that backgrounds a child and exits;
#   - how long `docker stop` takes on an app behind a shell that does not forward SIGTERM;
#   - a zombie-leaking app under `docker run --pids-limit 64`.
# It sets up everything it needs first (scripts/setup.sh). Run as root.
set -Eeuo pipefail
trap 'echo "demo.sh: line ${LINENO}: \`${BASH_COMMAND}\` failed" >&2' ERR

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"

WITHOUT="pid1-demo/sample:without"
WITH="pid1-demo/sample:with"
LEAK_SECONDS="${DEMO_LEAK_SECONDS:-8}"

title() { printf '\n\033[1m%s\033[0m\n' "$*"; }
die() { printf '\033[31mscripts/demo.sh: %s\033[0m\n' "$*" >&2; exit 1; }

[[ "$(id -u)" == 0 ]] || die "must run as root (it installs packages and starts dockerd when missing)"

title "Setting up (packages, Docker, pack, lifecycle, images, buildpack, builders)"
scripts/setup.sh
# shellcheck source=/dev/null
source .tools/env
scripts/images.sh
title "Packaging the buildpack for linux/amd64 and linux/arm64 (about a minute the first time)"
# Each step on one line; the whole output in the log.
scripts/package.sh 2>&1 | tee /tmp/pid1-demo-package.log |
  sed -un -e 's/^Building \(.*\) into.*/  building \1/p' -e "s/^Successfully created package '\(.*\)' and saved to file/  packaged \1/p" ||
  { cat /tmp/pid1-demo-package.log; die "scripts/package.sh failed"; }
scripts/builders.sh all

# Every container the demo starts carries this label, and is removed on exit.
LABEL="io.pid1-buildpacks.demo=$$"
cleanup() {
  local ids
  ids="$(docker ps -aq --filter "label=${LABEL}")"
  [[ -z "${ids}" ]] || docker rm -f ${ids} >/dev/null 2>&1 || true
}
trap cleanup EXIT

start() { # start ARGS... : docker run -d, labelled for clean-up; prints the container id
  docker run -d --label "${LABEL}" "$@"
}

wait_for_log() { # wait_for_log ID PATTERN
  local i
  for i in $(seq 1 100); do
    docker logs "$1" 2>&1 | grep -- "$2" >/dev/null && return 0  # grep -q could SIGPIPE docker logs (pipefail)
    sleep 0.1
  done
  die "container $1: no log line matching '$2'"
}

title "Building the sample app with pack"
# From scratch: a previous demo image built on an older run image can make the lifecycle's
# layer reuse fail ("invalid diffID") the first time after scripts/images.sh remade the images.
docker rmi -f "${WITHOUT}" "${WITH}" >/dev/null 2>&1 || true
for variant in without with; do
  image="pid1-demo/sample:${variant}"
  s=$(date +%s.%N)
  "${PACK}" build "${image}" --builder "pid1-buildpacks/builder:${variant}" --path integration/.work/app \
    --pull-policy never --trust-builder >"/tmp/pid1-demo-build-${variant}.log" 2>&1 ||
    { cat "/tmp/pid1-demo-build-${variant}.log"; die "pack build ${image} failed"; }
  printf '  %-26s built in %.1fs with pid1-buildpacks/builder:%s (log: /tmp/pid1-demo-build-%s.log)\n' \
    "${image}" "$(echo "$(date +%s.%N) - ${s}" | bc)" "${variant}" "${variant}"
done
echo
echo "  Process types of ${WITH} (pack inspect):"
"${PACK}" inspect "${WITH}" 2>/dev/null | sed -n '/^Processes:/,$p' | sed 's/^/    /' | cut -c1-150

declare -A pid1 zombies stop_time stop_exit leak

for variant in without with; do
  image="pid1-demo/sample:${variant}"

  # PID 1, and zombies left behind by a docker exec session.
  id="$(start "${image}")"
  wait_for_log "${id}" "serve: pid="
  pid1[${variant}]="$(docker exec "${id}" sh -c "tr '\0' ' ' </proc/1/cmdline" | sed 's/ $//')"
  docker exec "${id}" sh -c 'sleep 1 & exit 0'
  sleep 2
  zombies[${variant}]="$(docker exec "${id}" /workspace/bin/sample-app zombies)"

  # docker stop on an app behind `sh -c 'app; echo ...'`.
  id="$(start --entrypoint shell-wrapped "${image}")"
  wait_for_log "${id}" "serve: pid="
  s=$(date +%s.%N)
  docker stop -t 10 "${id}" >/dev/null
  stop_time[${variant}]="$(printf '%.2fs' "$(echo "$(date +%s.%N) - ${s}" | bc)")"
  stop_exit[${variant}]="$(docker inspect --format '{{.State.ExitCode}}' "${id}")"

  # A zombie-leaking app under --pids-limit 64.
  id="$(start --pids-limit 64 --entrypoint worker "${image}")"
  sleep "${LEAK_SECONDS}"
  leak[${variant}]="$(docker logs "${id}" 2>/dev/null | grep '^leak: spawned' | tail -1 | sed 's/^leak: //')"
done

title "Side by side"
row() { printf '  %-36s | %-44s | %s\n' "$1" "$2" "$3"; }
row "" "without the buildpack" "with the buildpack"
row "------------------------------------" "--------------------------------------------" "--------------------------------------------"
row "PID 1" "${pid1[without]}" "${pid1[with]}"
row "zombies after 'docker exec" "${zombies[without]}" "${zombies[with]}"
row "  sh -c \"sleep 1 & exit 0\"'" "" ""
row "docker stop -t 10, app behind sh -c" "${stop_time[without]} (exit ${stop_exit[without]})" "${stop_time[with]} (exit ${stop_exit[with]})"
row "--pids-limit 64, a zombie every" "${leak[without]%% last-error*}" "${leak[with]%% last-error*}"
last_error() { [[ "$1" == *last-error=* ]] && echo "last error: ${1##*last-error=}"; true; }
row "  20ms, after ${LEAK_SECONDS}s" "$(last_error "${leak[without]}")" "$(last_error "${leak[with]}")"
echo
echo "  Without the buildpack the app is PID 1: it never waits for orphans, so they stay zombies"
echo "  until fork fails, and a shell as PID 1 ignores SIGTERM, so docker stop waits 10s and kills."
echo "  With it the init is PID 1: it reaps every orphan and forwards SIGTERM to the app's group"
echo "  (a zombie count of 1 or 2 there is an orphan caught between its exit and its reaping)."
