#!/usr/bin/env bash
# Runs every test of the project, and sets up what they need first (scripts/setup.sh, which also
# starts the local registry, scripts/registry.sh):
#   1. unit tests of the root module, `go test ./...` (this includes the init's black-box tests
#      that run it as PID 1 under `unshare --pid`: they need root);
#   2. the buildpack, packaged (scripts/package.sh), the local platform (scripts/images.sh) and
#      the builders (scripts/builders.sh);
#   3. the integration tests in integration/ (real pack, real lifecycle, real Docker); their
#      Release suite publishes with scripts/publish.sh to the local registry and builds from it.
# A missing prerequisite (root, Docker, ...) is a failure with a message saying which; nothing
# is skipped. Exits non-zero when any step fails, after running every step it can.
#
# Usage: scripts/test.sh [go test flags for the integration tests, e.g. -run 'TestIntegration/Stop']
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"

failed=()
started=$(date +%s)
step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
fatal() { printf '\033[31mscripts/test.sh: %s\033[0m\n' "$*" >&2; exit 1; }
elapsed() { echo "$(($(date +%s) - $1))s"; }

[[ "$(id -u)" == 0 ]] || fatal "must run as root: the init's tests need PID namespaces (unshare) and the integration tests start dockerd"

step "Set-up: packages, Docker, the local registry, pack and the lifecycle"
t=$(date +%s)
scripts/setup.sh || fatal "set-up failed (see above): the tests cannot run without it"
# shellcheck source=/dev/null
source .tools/env
echo "set-up took $(elapsed "$t")"

step "Unit and PID-namespace tests: go test ./... (root module)"
t=$(date +%s)
if go test -count=1 ./...; then
  echo "unit tests passed in $(elapsed "$t")"
else
  failed+=("unit tests (go test ./...)")
fi

step "Buildpack: scripts/package.sh, then the build/run images and the builders"
t=$(date +%s)
if scripts/package.sh && scripts/images.sh && scripts/builders.sh all; then
  echo "buildpack and platform ready in $(elapsed "$t")"
  step "Integration tests: go test ./... in integration/"
  t=$(date +%s)
  if (cd integration && go test -count=1 -v -timeout 25m "$@" ./...); then
    echo "integration tests passed in $(elapsed "$t")"
  else
    failed+=("integration tests")
  fi
else
  failed+=("packaging the buildpack or making the builders (the integration tests could not run)")
fi

step "Summary ($(elapsed "$started") in all)"
if ((${#failed[@]})); then
  printf '\033[31mFAILED:\033[0m %s\n' "${failed[@]}"
  exit 1
fi
echo "all tests passed"
