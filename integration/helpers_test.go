package integration_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// result is what a finished command left behind.
type result struct {
	Output   string // stdout and stderr, interleaved
	Stdout   string
	ExitCode int
	Duration time.Duration
}

// run runs name with args, giving up after timeout. A command that cannot start or that times
// out fails the test; a non-zero exit code is reported in the result.
func run(t *testing.T, timeout time.Duration, env []string, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var combined, stdout bytes.Buffer
	var mu sync.Mutex
	cmd.Stdout = &locked{mu: &mu, w: []*bytes.Buffer{&combined, &stdout}}
	cmd.Stderr = &locked{mu: &mu, w: []*bytes.Buffer{&combined}}
	start := time.Now()
	err := cmd.Run()
	r := result{Output: combined.String(), Stdout: stdout.String(), Duration: time.Since(start)}
	if ctx.Err() != nil {
		t.Fatalf("%s %s: timed out after %v\n%s", name, strings.Join(args, " "), timeout, r.Output)
	}
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		r.ExitCode = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("%s %s: unable to run: %v", name, strings.Join(args, " "), err)
	}
	return r
}

// locked writes to every buffer in w, holding mu: os/exec copies stdout and stderr from two
// goroutines.
type locked struct {
	mu *sync.Mutex
	w  []*bytes.Buffer
}

func (l *locked) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range l.w {
		b.Write(p)
	}
	return len(p), nil
}

// docker runs the docker client; it must exit 0.
func docker(t *testing.T, args ...string) string {
	t.Helper()
	r := run(t, 2*time.Minute, nil, "docker", args...)
	if r.ExitCode != 0 {
		t.Fatalf("docker %s: exit %d\n%s", strings.Join(args, " "), r.ExitCode, r.Output)
	}
	return strings.TrimSpace(r.Stdout)
}

// dockerRun runs `docker run --rm ARGS...` to completion and returns the result, whatever the
// exit code.
func dockerRun(t *testing.T, args ...string) result {
	t.Helper()
	return run(t, 2*time.Minute, nil, "docker", append([]string{"run", "--rm"}, args...)...)
}

// startContainer runs `docker run -d ARGS...` and removes the container when the test ends.
func startContainer(t *testing.T, args ...string) string {
	t.Helper()
	id := docker(t, append([]string{"run", "-d"}, args...)...)
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", id).Run() })
	return id
}

// packBuild builds the sample app into image with pack; extra goes after the common flags.
func packBuild(t *testing.T, image, builder string, extra ...string) result {
	t.Helper()
	args := append([]string{"build", image,
		"--builder", builder,
		"--path", settings.App,
		"--pull-policy", "never",
		"--trust-builder",
	}, extra...)
	r := run(t, 5*time.Minute, nil, settings.Pack, args...)
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", image).Run() })
	return r
}

// mustPackBuild is packBuild that fails the test when the build fails.
func mustPackBuild(t *testing.T, image, builder string, extra ...string) result {
	t.Helper()
	r := packBuild(t, image, builder, extra...)
	if r.ExitCode != 0 {
		t.Fatalf("pack build %s with %s: exit %d\n%s", image, builder, r.ExitCode, r.Output)
	}
	return r
}

// process is one process type as the lifecycle records it in the image's
// io.buildpacks.build.metadata label (what `pack inspect` shows).
type process struct {
	Type        string   `json:"type"`
	Command     []string `json:"command"`
	Args        []string `json:"args"`
	Direct      bool     `json:"direct"`
	Default     bool     `json:"default"`
	BuildpackID string   `json:"buildpackID"`
	WorkingDir  string   `json:"working-dir"`
}

type buildMetadata struct {
	Processes  []process `json:"processes"`
	Buildpacks []struct {
		ID string `json:"id"`
	} `json:"buildpacks"`
	DefaultProcess string `json:"buildpack-default-process-type"`
}

// imageBuildMetadata decodes image's io.buildpacks.build.metadata label. Below Platform API
// 0.10 the lifecycle records a process's command as a string (the rest is in args); it is
// returned as a one-element command.
func imageBuildMetadata(t *testing.T, image string) buildMetadata {
	t.Helper()
	label := docker(t, "image", "inspect", "--format", `{{index .Config.Labels "io.buildpacks.build.metadata"}}`, image)
	var m buildMetadata
	if err := json.Unmarshal(commandsAsArrays([]byte(label)), &m); err != nil {
		t.Fatalf("unable to decode io.buildpacks.build.metadata of %s: %v\n%s", image, err, label)
	}
	return m
}

// commandsAsArrays returns the build metadata label with each process's string command made a
// one-element array, or the label as it is when it cannot be read that way.
func commandsAsArrays(label []byte) []byte {
	var top map[string]json.RawMessage
	var processes []map[string]json.RawMessage
	if json.Unmarshal(label, &top) != nil || json.Unmarshal(top["processes"], &processes) != nil {
		return label
	}
	for _, p := range processes {
		var one string
		if json.Unmarshal(p["command"], &one) == nil {
			p["command"], _ = json.Marshal([]string{one})
		}
	}
	top["processes"], _ = json.Marshal(processes)
	fixed, err := json.Marshal(top)
	if err != nil {
		return label
	}
	return fixed
}

func processesByType(t *testing.T, image string) map[string]process {
	t.Helper()
	m := imageBuildMetadata(t, image)
	byType := map[string]process{}
	for _, p := range m.Processes {
		p.Default = p.Type == m.DefaultProcess
		byType[p.Type] = p
	}
	return byType
}

func buildpackIDs(t *testing.T, image string) []string {
	t.Helper()
	var ids []string
	for _, bp := range imageBuildMetadata(t, image).Buildpacks {
		ids = append(ids, bp.ID)
	}
	return ids
}

// initLayerSHA is the digest the lifecycle recorded for the init buildpack's init layer.
func initLayerSHA(t *testing.T, image string) string {
	t.Helper()
	label := docker(t, "image", "inspect", "--format", `{{index .Config.Labels "io.buildpacks.lifecycle.metadata"}}`, image)
	var m struct {
		Buildpacks []struct {
			Key    string `json:"key"`
			Layers map[string]struct {
				SHA string `json:"sha"`
			} `json:"layers"`
		} `json:"buildpacks"`
	}
	if err := json.Unmarshal([]byte(label), &m); err != nil {
		t.Fatalf("unable to decode io.buildpacks.lifecycle.metadata of %s: %v", image, err)
	}
	for _, bp := range m.Buildpacks {
		if bp.Key == initBuildpackID {
			if l, ok := bp.Layers["init"]; ok {
				return l.SHA
			}
		}
	}
	t.Fatalf("%s has no layer %s:init in io.buildpacks.lifecycle.metadata:\n%s", image, initBuildpackID, label)
	return ""
}

// expectWrapped checks that the init buildpack ran last in image's build, that every process
// type starts through the init, and that the default process runs with the init as PID 1.
func expectWrapped(t *testing.T, image string) {
	t.Helper()
	Expect := NewWithT(t).Expect
	ids := buildpackIDs(t, image)
	Expect(ids).NotTo(BeEmpty())
	Expect(ids[len(ids)-1]).To(Equal(initBuildpackID), "the init buildpack ran last: %v", ids)
	types := processesByType(t, image)
	Expect(types).To(HaveLen(8), "the sample app's process types")
	for typ, p := range types {
		Expect(p.Command[0]).To(Equal(initPath), "%s in %s", typ, image)
	}
	Expect(pid1Cmdline(t, image)).To(HavePrefix(initPath + " -- /workspace/bin/sample-app serve"))
}

// proc is one process seen in a container's /proc.
type proc struct {
	PID, PPID int
	State     string
	Comm      string
	Cmdline   string
}

func (p proc) String() string {
	return fmt.Sprintf("pid=%d ppid=%d state=%s %s", p.PID, p.PPID, p.State, p.Cmdline)
}

// containerProcesses lists the processes of a running container from its /proc, leaving out
// the ones this listing itself runs.
func containerProcesses(t *testing.T, id string) []proc {
	t.Helper()
	return engineProcesses(t, "docker", id)
}

// engineProcesses is containerProcesses for a container of engine (docker or podman).
func engineProcesses(t *testing.T, engine, id string) []proc {
	t.Helper()
	return processesVia(t, engine, "exec", id)
}

// processesVia lists the processes a container's /proc shows through execArgv, a command line
// that runs its arguments in the container (`docker exec ID`, `crictl exec ID`).
func processesVia(t *testing.T, execArgv ...string) []proc {
	t.Helper()
	const script = `for d in /proc/[0-9]*; do s=$(cat $d/stat 2>/dev/null) || continue; ` +
		`c=$(tr '\0' ' ' < $d/cmdline 2>/dev/null); echo "$s|$c"; done`
	r := run(t, 2*time.Minute, nil, execArgv[0], append(execArgv[1:], "sh", "-c", "echo self=$$; "+script)...)
	if r.ExitCode != 0 {
		t.Fatalf("%s: exit %d\n%s", strings.Join(execArgv, " "), r.ExitCode, r.Output)
	}
	out := strings.TrimSpace(r.Stdout)
	var self int
	var procs []proc
	statLine := regexp.MustCompile(`^(\d+) \((.*)\) (\S) (\d+) `)
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "self="); ok {
			self, _ = strconv.Atoi(v)
			continue
		}
		stat, cmdline, _ := strings.Cut(line, "|")
		m := statLine.FindStringSubmatch(stat)
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		ppid, _ := strconv.Atoi(m[4])
		procs = append(procs, proc{PID: pid, PPID: ppid, State: m[3], Comm: m[2], Cmdline: strings.TrimSpace(cmdline)})
	}
	// Drop the listing shell and its children (cat, tr and the $(...) subshells).
	var kept []proc
	for _, p := range procs {
		if p.PID == self || p.PPID == self || isDescendant(procs, p, self) {
			continue
		}
		kept = append(kept, p)
	}
	return kept
}

func isDescendant(procs []proc, p proc, ancestor int) bool {
	byPID := map[int]proc{}
	for _, q := range procs {
		byPID[q.PID] = q
	}
	for i := 0; i < 10; i++ {
		parent, ok := byPID[p.PPID]
		if !ok {
			return false
		}
		if parent.PID == ancestor {
			return true
		}
		p = parent
	}
	return false
}

func zombies(procs []proc) []proc {
	var z []proc
	for _, p := range procs {
		if p.State == "Z" {
			z = append(z, p)
		}
	}
	return z
}

func pid1(t *testing.T, procs []proc) proc {
	t.Helper()
	for _, p := range procs {
		if p.PID == 1 {
			return p
		}
	}
	t.Fatalf("no PID 1 among %v", procs)
	return proc{}
}

// waitForLog waits until the container's log matches re and returns the log.
func waitForLog(t *testing.T, id string, re *regexp.Regexp, timeout time.Duration) string {
	t.Helper()
	return waitForEngineLog(t, "docker", id, re, timeout)
}

// waitForEngineLog is waitForLog for a container of engine (docker or podman).
func waitForEngineLog(t *testing.T, engine, id string, re *regexp.Regexp, timeout time.Duration) string {
	t.Helper()
	return waitForLogVia(t, []string{engine, "logs", id}, re, timeout)
}

// waitForLogVia waits until the log that logsArgv prints (`docker logs ID`, `crictl logs ID`)
// matches re and returns the log.
func waitForLogVia(t *testing.T, logsArgv []string, re *regexp.Regexp, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		logs := run(t, time.Minute, nil, logsArgv[0], logsArgv[1:]...).Output
		if re.MatchString(logs) {
			return logs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no log line matching %q within %v; log:\n%s", strings.Join(logsArgv, " "), re, timeout, logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// leakStatus is one "leak: spawned=N failed=M zombies=Z" status line of the sample app.
type leakStatus struct {
	Spawned, Failed, Zombies int
	LastError                string
}

var leakLine = regexp.MustCompile(`leak: spawned=(\d+) failed=(\d+) zombies=(\d+)(?: last-error="([^"]*)")?`)

// leakStatuses returns every status line of the leaking sample app in log order.
func leakStatuses(log string) []leakStatus {
	var statuses []leakStatus
	for _, m := range leakLine.FindAllStringSubmatch(log, -1) {
		s := leakStatus{LastError: m[4]}
		s.Spawned, _ = strconv.Atoi(m[1])
		s.Failed, _ = strconv.Atoi(m[2])
		s.Zombies, _ = strconv.Atoi(m[3])
		statuses = append(statuses, s)
	}
	return statuses
}

func repoRoot() string {
	wd, _ := os.Getwd()
	return filepath.Dir(wd)
}
