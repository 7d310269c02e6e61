#!/usr/bin/env bash
# Runs every test of the project, and sets up what they need first (scripts/setup.sh, which also
# starts the local registry, scripts/registry.sh):
#   1. unit tests of the root module, `go test ./...` (this includes the init's black-box tests
#      that run it as PID 1 under `unshare --pid`: they need root), the documented kpack
#      manifests decoded into kpack's own types (integration/kpack, a module of its own), 10 s of
#      fuzzing of each of the image label and launch.toml parsers, then the init's black-box
#      tests again against the arm64 init under qemu-user;
#   2. the buildpack, packaged (scripts/package.sh), the local platform (scripts/images.sh) and
#      the builders (scripts/builders.sh);
#   3. the integration tests in integration/ (real pack, real lifecycle, real Docker); their
#      Release suite publishes with scripts/publish.sh to the local registry and builds from it,
#      their Pods suite runs the images through the CRI of a containerd of its own, which
#      scripts/pods.sh starts before them and stops after (also when this script is interrupted).
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

# stop_pods stops the containerd of the Pods specs once, if this script started it.
pods_started=false
stop_pods() {
  ${pods_started} || return 0
  pods_started=false
  scripts/pods.sh stop || failed+=("stopping the Pods specs' containerd (scripts/pods.sh stop)")
}
trap stop_pods EXIT
trap 'stop_pods; exit 130' INT
trap 'stop_pods; exit 143' TERM

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

step "kpack manifests against kpack's API types: go test ./... in integration/kpack (no cluster)"
t=$(date +%s)
if (cd integration/kpack && go test -count=1 ./...); then
  echo "kpack manifest tests passed in $(elapsed "$t")"
else
  failed+=("kpack manifest tests (integration/kpack)")
fi

# A short bounded fuzz run of the parsers of what other buildpacks and images give (the seed
# corpora in testdata/fuzz run with the unit tests above); long runs are for hand (docs/audit.md).
# The budget is a count of inputs, not a duration: with a duration, go1.26's fuzz coordinator can
# fail a target at its deadline with "context deadline exceeded" and no failing input
# (go.dev/issue/75804, fixed in go1.27). 15,000 inputs take about 10 s on a loaded 2-CPU machine.
step "Fuzzing the image label, metadata.toml and launch.toml parsers: 15,000 inputs each"
for target in "FuzzImage ./internal/audit" "FuzzReadLaunchTOML ./internal/launch"; do
  read -r name pkg <<<"${target}"
  if ! go test -run '^$' -fuzz "^${name}\$" -fuzztime 15000x -fuzzminimizetime 100x "${pkg}"; then
    failed+=("fuzzing ${name} (${pkg})")
  fi
done

# The init's black-box specs that do not apply under qemu-user, with why (docs/tests.md):
qemu_skip=(
  forwards_each_forwardable_real-time_signal            # qemu does not deliver signals 35 and 36
  does_not_lose_a_signal_that_arrives_before            # strace sees qemu's syscalls, not the init's
  makes_itself_a_child_subreaper_when_it_is_not_PID_1   # PR_SET_CHILD_SUBREAPER: EINVAL under qemu
  sends_stragglers_SIGTERM,_then_SIGKILL_after_the_grace_period,_as_a_child_subreaper
  exits_at_once_when_all_that_remains_is_a_root_process_it_may_not_signal,_as_a_child_subreaper
  signals_its_descendants_with_kill.2._when_a_seccomp_profile_refuses  # the init is no subreaper under qemu
  ends_the_program.s_process_group_when_no_proc_file_system            # the init is no subreaper under qemu
  does_not_forward_the_SIGXFSZ_its_own_log_write_past_RLIMIT_FSIZE_raises,_as_a_child  # no subreaper: no orphans to log
  passes_argv,_env,_cwd_and_fd_3_through_unchanged      # qemu reverses the environment's order
  passes_the_environment_block_through_exactly          # qemu reverses the environment's order
  passes_ignored_signals_and_the_signal_mask_through_unchanged  # qemu drops SIG_IGN of SIGHUP, SIGINT
  gives_the_terminal_back_to_its_own_group_when_its_program_cannot_be_executed  # a failed execve hangs
)
step "The init's black-box tests against the arm64 init under qemu-user (qemu-aarch64-static)"
t=$(date +%s)
skip="TestInit/init/.*/($(IFS='|'; echo "${qemu_skip[*]}"))"
skip+="|TestInit/init/BadInput/when_the_program_cannot_be_run/(is_not_a_valid_executable|has_a_missing_interpreter)"
if INIT_TEST_GOARCH=arm64 INIT_TEST_RUNNER=qemu-aarch64-static go test -count=1 -run TestInit -skip "$skip" ./init; then
  echo "arm64 init tests under qemu passed in $(elapsed "$t")"
else
  failed+=("arm64 init tests under qemu (go test ./init with INIT_TEST_GOARCH=arm64)")
fi
# The signal handler is assembly of its own for each architecture: its specs run on arm64 too.
trap_test=$(mktemp -d)
if GOARCH=arm64 go test -c -o "$trap_test/trap.test" ./init/internal/trap &&
  qemu-aarch64-static "$trap_test/trap.test" -test.count=1; then
  echo "arm64 signal handler specs under qemu passed"
else
  failed+=("arm64 signal handler specs under qemu (init/internal/trap)")
fi
rm -rf "$trap_test"

step "Buildpack: scripts/package.sh, then the build/run images and the builders"
t=$(date +%s)
if scripts/package.sh && scripts/images.sh && scripts/builders.sh all; then
  echo "buildpack and platform ready in $(elapsed "$t")"
  step "Integration tests: go test ./... in integration/"
  t=$(date +%s)
  # The Pods specs fail, saying why, when this containerd did not start; the others still run.
  pods_started=true
  scripts/pods.sh start || failed+=("starting containerd for the Pods specs (scripts/pods.sh start)")
  if (cd integration && go test -count=1 -v -timeout 25m "$@" ./...); then
    echo "integration tests passed in $(elapsed "$t")"
  else
    failed+=("integration tests")
  fi
  stop_pods
else
  failed+=("packaging the buildpack or making the builders (the integration tests could not run)")
fi

step "Summary ($(elapsed "$started") in all)"
if ((${#failed[@]})); then
  printf '\033[31mFAILED:\033[0m %s\n' "${failed[@]}"
  exit 1
fi
echo "all tests passed"
