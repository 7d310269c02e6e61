#!/usr/bin/env bash
# Benchmarks our init side by side with the Go floor (bench/gofloor: a Go program that only
# fork/execs and waits, built like our init) and tini, tini-static, dumb-init and catatonit
# (Debian's packages) and prints Markdown tables on stdout: binary size, RSS and threads as
# PID 1, idle wake-ups, start-up overhead, time to reap 20,000 orphans, the cost (CPU, context
# switches, RSS) of 30,000 fork() orphans one after the other, signal forwarding latency.
#
# Usage: scripts/bench.sh [harness flags]     (as root: it uses PID namespaces)
#   BENCH_QUICK=1  smoke run (few iterations, about 20 s)
#   BENCH_RUNS=N   start-up runs per init and mode (default 400)
#   BENCH_PROFILE=1  also print `strace -c -f` of our init starting /bin/true
#   --init PATH    benchmark this init binary instead of building ./init
#   --also NAME=PATH  also measure another build side by side (repeatable)
#   --phases idle,startup,reap,forkload,signals  run only some phases (targets need all)
# All harness flags: go run ./bench -h
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
work="$root/bench/.work"

if [[ $(id -u) -ne 0 ]]; then
  echo "scripts/bench.sh: needs root (unshare --pid for PID namespaces)" >&2
  exit 1
fi
for tool in go unshare; do
  if ! command -v "$tool" >/dev/null; then
    echo "scripts/bench.sh: $tool is required but not on PATH" >&2
    exit 1
  fi
done

# Debian packages: tini gives /usr/bin/tini and /usr/bin/tini-static.
missing=()
[[ -x /usr/bin/tini && -x /usr/bin/tini-static ]] || missing+=(tini)
[[ -x /usr/bin/dumb-init ]] || missing+=(dumb-init)
[[ -x /usr/bin/catatonit ]] || missing+=(catatonit)
if [[ ${BENCH_PROFILE:-0} == 1 ]] && ! command -v strace >/dev/null; then missing+=(strace); fi
if ((${#missing[@]})); then
  echo "scripts/bench.sh: installing ${missing[*]} with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# The signal benchmark also times forwarding in the kernel through tracefs when it is there.
if [[ -d /sys/kernel/tracing && ! -e /sys/kernel/tracing/instances ]]; then
  mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null ||
    echo "scripts/bench.sh: tracefs not available: the kernel signal columns will say n/a" >&2
fi

mkdir -p "$work"

# build_static OUT PKG builds PKG as our init is shipped: static, stripped, no build paths.
build_static() {
  CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$1" "$2"
}

init_bin=""
args=()
while (($#)); do
  case $1 in
    --init) init_bin=$2; shift 2 ;;
    --init=*) init_bin=${1#--init=}; shift ;;
    *) args+=("$1"); shift ;;
  esac
done

if [[ -z $init_bin ]]; then
  init_bin="$work/init"
  echo "scripts/bench.sh: building ./init (static, stripped)" >&2
  build_static "$init_bin" ./init
  version="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  if [[ -n $(git -C "$root" status --porcelain -- init go.mod go.sum 2>/dev/null) ]]; then
    version+="+uncommitted"
  fi
  version="git $version, $(go env GOVERSION)"
else
  version="$init_bin"
fi

echo "scripts/bench.sh: building the Go floor ./bench/gofloor (static, stripped, like ./init)" >&2
build_static "$work/gofloor" ./bench/gofloor
gofloor_version="$(go env GOVERSION)"

echo "scripts/bench.sh: building the harness" >&2
CGO_ENABLED=0 go build -o "$work/bench" ./bench

if [[ ${BENCH_PROFILE:-0} == 1 ]]; then
  echo "scripts/bench.sh: strace -c -f of our init starting /bin/true" >&2
  strace -c -f -o "$work/strace-c.txt" "$init_bin" -- /bin/true
  cat "$work/strace-c.txt" >&2
fi

exec "$work/bench" --init "$init_bin" --init-version "$version" \
  --gofloor "$work/gofloor" --gofloor-version "$gofloor_version" --work "$work/tmp" "${args[@]}"
