package integration_test

import (
	"bytes"
	"io"
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
	"github.com/sclevine/spec"
)

// runImage is the local run image; a container of it running sleep stands in for a pod's pause
// container.
const runImage = "pid1-buildpacks/run:busybox"

// testRunModes runs the wrapped image in every way Docker runs a container that the init must
// not make worse than no init (issue 9).
func testRunModes(t *testing.T, context spec.G, it spec.S) {
	var (
		Expect     = NewWithT(t).Expect
		Eventually = NewWithT(t).Eventually
	)

	it("under docker run --init: Docker's tini is PID 1, ours its child and the subreaper of the app's orphans", func() {
		id := startContainer(t, "--init", "-e", "BPL_INIT_LOG_LEVEL=debug", "--entrypoint", "worker", settings.With)
		waitForLog(t, id, leakLine, 30*time.Second)
		procs := containerProcesses(t, id)
		t.Logf("docker run --init: %v", procs)

		Expect(pid1(t, procs).Cmdline).To(HavePrefix("/sbin/docker-init -- "), "Docker's tini is PID 1")
		ours := findProc(t, procs, initPath+" -- /workspace/bin/sample-app leak")
		Expect(ours.PPID).To(Equal(1), "our init is docker-init's child")
		app := findProc(t, procs, "/workspace/bin/sample-app leak")
		Expect(app.PPID).To(Equal(ours.PID), "the app is our init's child")

		// The app orphans a sleep every 20 ms; as the nearest subreaper our init gets and reaps them.
		time.Sleep(2 * time.Second)
		logs := containerLogs(t, id)
		reaped := regexp.MustCompile(`\[init\] reaped pid \d+`).FindAllString(logs, -1)
		statuses := leakStatuses(logs)
		t.Logf("our init reaped %d processes in ~3 s; last status %+v", len(reaped), statuses[len(statuses)-1])
		Expect(len(reaped)).To(BeNumerically(">", 20), "our init reaps the app's orphans")
		Expect(logs).To(ContainSubstring("(init is a child subreaper)"))
		Expect(statuses[len(statuses)-1].Zombies).To(BeNumerically("<=", 2))

		took, code := stopContainer(t, "docker", id)
		t.Logf("docker stop under --init: %v, exit %d", took.Round(time.Millisecond), code)
		Expect(code).To(Equal(0), "the app's code through both inits")
		Expect(took).To(BeNumerically("<", 5*time.Second))
	})

	it("in a shared PID namespace (a pod with shareProcessNamespace): never signals the pause container's processes, stops in under 2 s", func() {
		pause := startContainer(t, "--entrypoint", "sleep", runImage, "3600")
		// A process of the pause container that records every signal it gets.
		docker(t, "exec", "-d", pause, "sh", "-c",
			`for s in TERM HUP INT QUIT USR1 USR2 CONT ALRM; do trap "echo $s >>/tmp/signals" $s; done; `+
				`echo started >/tmp/signals; while :; do sleep 1; done`)
		Eventually(func() string { return dockerExec(t, pause, "cat", "/tmp/signals").Output }, 10*time.Second, 100*time.Millisecond).
			Should(Equal("started\n"))
		watcher := findProc(t, containerProcesses(t, pause), "sh -c for s in TERM")

		id := startContainer(t, "--pid", "container:"+pause, "-e", "BPL_INIT_LOG_LEVEL=info", settings.With)
		waitForLog(t, id, serving, 30*time.Second)
		procs := containerProcesses(t, id)
		t.Logf("shared PID namespace: %v", procs)
		Expect(pid1(t, procs).Cmdline).To(Equal("sleep 3600"), "the pause container's process is PID 1")
		ours := findProc(t, procs, initPath+" -- /workspace/bin/sample-app serve")
		Expect(ours.PPID).To(Equal(0), "our init's parent is outside the namespace")
		Expect(findProc(t, procs, "/workspace/bin/sample-app serve").PPID).To(Equal(ours.PID))

		// A docker exec session's orphan goes to the namespace's PID 1, the pause container's
		// sleep, not to us (docs/limits.md).
		orphan := strings.TrimSpace(dockerExec(t, id, "sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!").Stdout)
		Eventually(func() int { return procByPID(containerProcesses(t, id), orphan).PPID }, 5*time.Second, 100*time.Millisecond).Should(Equal(1))

		took, code := stopContainer(t, "docker", id)
		logs := containerLogs(t, id)
		t.Logf("docker stop in a shared PID namespace: %v, exit %d; log:\n%s", took.Round(time.Millisecond), code, logs)
		Expect(code).To(Equal(0))
		Expect(logs).To(ContainSubstring("serve: got terminated, exiting"))
		Expect(took).To(BeNumerically("<", 2*time.Second))
		Expect(logs).To(ContainSubstring("(init is a child subreaper)"))

		Expect(procByPID(containerProcesses(t, pause), strconv.Itoa(watcher.PID)).Cmdline).To(HavePrefix("sh -c for s in TERM"), "the pause container's process lives")
		Expect(dockerExec(t, pause, "cat", "/tmp/signals").Output).To(Equal("started\n"), "and got no signal")
	})

	for _, mode := range []struct {
		name string
		args []string
		// check looks at the running container further.
		check func(id string, init proc)
	}{
		{name: "as a random uid (--user 12345:0)", args: []string{"--user", "12345:0"}, check: func(id string, init proc) {
			Expect(dockerExec(t, id, "grep", "^Uid:", "/proc/1/status").Stdout).To(MatchRegexp(`^Uid:\s+12345\s+12345\s`))
			app := findProc(t, containerProcesses(t, id), "/workspace/bin/sample-app serve")
			Expect(dockerExec(t, id, "grep", "^Uid:", "/proc/"+strconv.Itoa(app.PID)+"/status").Stdout).To(MatchRegexp(`^Uid:\s+12345\s`))
		}},
		{name: "with a read-only root file system (--read-only --tmpfs /tmp)", args: []string{"--read-only", "--tmpfs", "/tmp"}, check: func(id string, init proc) {
			r := dockerExec(t, id, "touch", "/workspace/x")
			Expect(r.ExitCode).NotTo(Equal(0), "the root file system is read-only: %s", r.Output)
		}},
		{name: "without capabilities (--cap-drop ALL --security-opt no-new-privileges)", args: []string{"--cap-drop", "ALL", "--security-opt", "no-new-privileges"}, check: func(id string, init proc) {
			status := dockerExec(t, id, "cat", "/proc/1/status").Stdout
			Expect(status).To(MatchRegexp(`(?m)^CapEff:\s+0+$`))
			Expect(status).To(MatchRegexp(`(?m)^NoNewPrivs:\s+1$`))
		}},
	} {
		mode := mode
		it("runs "+mode.name+": PID 1, orphans reaped, docker stop with the app's code", func() {
			id := startContainer(t, append(mode.args, settings.With)...)
			waitForLog(t, id, serving, 30*time.Second)
			procs := containerProcesses(t, id)
			t.Logf("%s: %v", mode.name, procs)
			init := pid1(t, procs)
			Expect(init.Cmdline).To(HavePrefix(initPath + " -- /workspace/bin/sample-app serve"))
			Expect(findProc(t, procs, "/workspace/bin/sample-app serve").PPID).To(Equal(1))
			mode.check(id, init)
			expectOrphanReaped(t, "docker", id)

			took, code := stopContainer(t, "docker", id)
			t.Logf("%s: docker stop %v, exit %d", mode.name, took.Round(time.Millisecond), code)
			Expect(code).To(Equal(0))
			Expect(containerLogs(t, id)).To(ContainSubstring("serve: got terminated, exiting"))
			Expect(took).To(BeNumerically("<", 5*time.Second))
		})
	}

	it("on a terminal (docker run -it): Ctrl-C reaches the app, the container exits with its code", func() {
		dir, err := os.MkdirTemp("", "pid1-it-tty")
		Expect(err).NotTo(HaveOccurred())
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		cidfile := filepath.Join(dir, "cid")
		t.Cleanup(func() {
			if id, err := os.ReadFile(cidfile); err == nil {
				_ = exec.Command("docker", "rm", "-f", string(id)).Run()
			}
		})
		// script(1) gives docker run a pseudo-terminal whose input is what the test writes; -e
		// makes it exit with docker run's code.
		cmd := exec.Command("script", "-qfec", "docker run -it --rm --cidfile "+cidfile+" "+settings.With, "/dev/null")
		stdin, err := cmd.StdinPipe()
		Expect(err).NotTo(HaveOccurred())
		var mu sync.Mutex
		var buf bytes.Buffer
		cmd.Stdout = &locked{mu: &mu, w: []*bytes.Buffer{&buf}}
		cmd.Stderr = cmd.Stdout
		output := func() string {
			mu.Lock()
			defer mu.Unlock()
			return buf.String()
		}
		Expect(cmd.Start()).To(Succeed())
		defer func() { _ = cmd.Process.Kill() }()
		Eventually(output, 30*time.Second, 50*time.Millisecond).Should(MatchRegexp(serving.String()))

		start := time.Now()
		_, err = io.WriteString(stdin, "\x03")
		Expect(err).NotTo(HaveOccurred())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("docker run -it did not exit within 20 s of Ctrl-C; output:\n%s", output())
		}
		took := time.Since(start)
		t.Logf("docker run -it, Ctrl-C: exit %d after %v; output: %q", cmd.ProcessState.ExitCode(), took.Round(time.Millisecond), output())
		Expect(output()).To(ContainSubstring("serve: got interrupt, exiting 130"))
		Expect(cmd.ProcessState.ExitCode()).To(Equal(130), "the app's code")
		Expect(took).To(BeNumerically("<", 5*time.Second))
	})

	it("forwards docker kill -s HUP, QUIT and USR1 to the app, which keeps running", func() {
		id := startContainer(t, settings.With)
		waitForLog(t, id, serving, 30*time.Second)
		for _, s := range []struct{ signal, logged string }{
			{"HUP", "serve: got hangup"},
			{"QUIT", "serve: got quit"},
			{"USR1", "serve: got user defined signal 1"},
		} {
			start := time.Now()
			docker(t, "kill", "-s", s.signal, id)
			waitForLog(t, id, regexp.MustCompile(regexp.QuoteMeta(s.logged)), 10*time.Second)
			t.Logf("docker kill -s %s: the app logged %q within %v", s.signal, s.logged, time.Since(start).Round(time.Millisecond))
		}
		Expect(docker(t, "inspect", "--format", "{{.State.Running}}", id)).To(Equal("true"))
		took, code := stopContainer(t, "docker", id)
		Expect(code).To(Equal(0))
		Expect(took).To(BeNumerically("<", 5*time.Second))
	})
}

// findProc returns the one process whose command line starts with prefix.
func findProc(t *testing.T, procs []proc, prefix string) proc {
	t.Helper()
	var found []proc
	for _, p := range procs {
		if strings.HasPrefix(p.Cmdline, prefix) {
			found = append(found, p)
		}
	}
	if len(found) != 1 {
		t.Fatalf("expected one process %q, found %d among %v", prefix, len(found), procs)
	}
	return found[0]
}

// procByPID returns the process pid among procs, or a zero proc when there is none.
func procByPID(procs []proc, pid string) proc {
	for _, p := range procs {
		if strconv.Itoa(p.PID) == pid {
			return p
		}
	}
	return proc{}
}

// containerLogs returns the container's log, stdout and stderr (where the init logs) interleaved.
func containerLogs(t *testing.T, id string) string {
	t.Helper()
	return run(t, time.Minute, nil, "docker", "logs", id).Output
}

// dockerExec runs `docker exec id ARGS...` and returns the result, whatever the exit code.
func dockerExec(t *testing.T, id string, args ...string) result {
	t.Helper()
	return run(t, time.Minute, nil, "docker", append([]string{"exec", id}, args...)...)
}

// stopContainer runs `ENGINE stop -t 10` (engine is docker or podman) and returns how long it
// took and the container's exit code.
func stopContainer(t *testing.T, engine, id string) (time.Duration, int) {
	t.Helper()
	r := run(t, time.Minute, nil, engine, "stop", "-t", strconv.Itoa(stopTimeout), id)
	if r.ExitCode != 0 {
		t.Fatalf("%s stop %s: exit %d: %s", engine, id, r.ExitCode, r.Output)
	}
	inspect := run(t, time.Minute, nil, engine, "inspect", "--format", "{{.State.ExitCode}}", id)
	code, err := strconv.Atoi(strings.TrimSpace(inspect.Stdout))
	if err != nil {
		t.Fatalf("%s inspect %s: no exit code: %s", engine, id, inspect.Output)
	}
	return r.Duration, code
}

// expectOrphanReaped has an exec session of engine (docker or podman) orphan a short sleep and
// checks that it disappears from the process table after it exits: reparented to PID 1 and
// reaped.
func expectOrphanReaped(t *testing.T, engine, id string) {
	t.Helper()
	Expect := NewWithT(t).Expect
	r := run(t, time.Minute, nil, engine, "exec", id, "sh", "-c", "sleep 1 >/dev/null 2>&1 & echo $!")
	pid := strings.TrimSpace(r.Stdout)
	Expect(pid).To(MatchRegexp(`^\d+$`), "%s exec: %s", engine, r.Output)
	Expect(procByPID(engineProcesses(t, engine, id), pid).PPID).To(Equal(1), "the orphan is reparented to PID 1")
	deadline := time.Now().Add(5 * time.Second)
	for {
		p := procByPID(engineProcesses(t, engine, id), pid)
		if p.PID == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the orphan %s is still in the process table 5 s later: %v", pid, p)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
