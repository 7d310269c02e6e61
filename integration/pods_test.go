package integration_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

// probes is how many exec probes time out in a row in the probe spec.
const probes = 5

// podStopTimeout is the grace period of `crictl stop`, the kubelet's terminationGracePeriodSeconds.
const podStopTimeout = 30

// podImages is what scripts/pods.sh imported into its containerd, so that it is done once.
var podImages []string

// testPods runs the images the way a Kubernetes node does, through containerd's CRI (issue 14):
// the containerd of scripts/pods.sh, crictl making the CRI calls the kubelet makes.
func testPods(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	it.Before(func() {
		requireCRI(t)
		images := []string{settings.Without, settings.With}
		if strings.Join(podImages, " ") != strings.Join(images, " ") {
			r := run(t, 5*time.Minute, nil, "bash", append([]string{settings.Root + "/scripts/pods.sh", "import"}, images...)...)
			Expect(r.ExitCode).To(Equal(0), r.Output)
			podImages = images
		}
	})

	// startApp runs a pod of its own holding one container of image, and waits until the app
	// serves.
	startApp := func(image string, pidMode int, command ...string) (*pod, string) {
		p := runPod(t, podName(image), pidMode)
		id := p.start(t, "app", image, command)
		waitForLogVia(t, crictlArgv("logs", id), serving, 30*time.Second)
		return p, id
	}

	it("runs the init as PID 1 of a pod's container, the app its child", func() {
		for _, image := range []string{settings.Without, settings.With} {
			_, id := startApp(image, namespaceContainer)
			procs := criProcesses(t, id)
			t.Logf("%s in a pod: %v", image, procs)
			one := pid1(t, procs)
			if image == settings.Without {
				Expect(one.Cmdline).To(Equal("/workspace/bin/sample-app serve --name web"))
				continue
			}
			Expect(one.Cmdline).To(HavePrefix(initPath + " -- /workspace/bin/sample-app serve --name web"))
			Expect(procs).To(ContainElement(And(
				HaveField("Cmdline", "/workspace/bin/sample-app serve --name web"), HaveField("PPID", 1))))
		}
	})

	it("reaps what crictl exec sessions leave behind, also when the client of an interactive one is killed", func() {
		counts := map[string][2]int{}
		for _, image := range []string{settings.Without, settings.With} {
			_, id := startApp(image, namespaceContainer)

			// A shell that backgrounds a child and exits: the child is reparented to PID 1.
			crictl(t, "exec", id, "sh", "-c", "sleep 1 & exit 0")
			time.Sleep(2500 * time.Millisecond)
			afterExit := zombies(criProcesses(t, id))

			// `crictl exec -it` (kubectl exec -ti) whose client dies mid-session: the session
			// stays (the kata-containers leak), its orphans go to PID 1 when it is ended.
			client := startInteractiveExec(t, id, "sh", "-c", "sleep 1 & sleep 300; echo never")
			session := findProcess(t, id, "sh -c sleep 1 & sleep 300")
			Expect(client.Kill()).To(Succeed())
			time.Sleep(2 * time.Second)
			Expect(criProcesses(t, id)).To(ContainElement(HaveField("PID", session.PID)),
				"the session outlives its killed client (containerd 1.6 does not end it)")
			criKill(t, id, session.PID)
			time.Sleep(time.Second)
			// The session's shell led a session on the terminal: its death hangs the terminal
			// up, and SIGHUP ends its sleep 300 too. What remains is reparented to PID 1.
			endOrphans(t, criProcesses(t, id), "sleep 300", func(pid int) { criKill(t, id, pid) })
			time.Sleep(time.Second)
			afterKill := zombies(criProcesses(t, id))
			counts[image] = [2]int{len(afterExit), len(afterKill)}
			t.Logf("%s: zombies after the exec'd shell exited: %v; after the session of a killed client: %v", image, afterExit, afterKill)
		}
		expectSessionZombies(t, "crictl exec, the session's client killed", counts)
		Expect(counts[settings.Without][1]).To(BeNumerically(">", counts[settings.Without][0]), "without the buildpack the session's orphans too")
	})

	it("reaps the orphans of exec probes that time out", func() {
		left := map[string]int{}
		took := map[string][]time.Duration{}
		for _, image := range []string{settings.Without, settings.With} {
			_, id := startApp(image, namespaceContainer)
			// An exec liveness probe with timeoutSeconds: 1: the kubelet's ExecSync, whose
			// timeout makes containerd SIGKILL the probe's shell and orphan its sleep.
			for i := 0; i < probes; i++ {
				r := crictlResult(t, "exec", "--sync", "--timeout", "1", id, "sh", "-c", "sleep 2; echo ok")
				Expect(r.ExitCode).NotTo(Equal(0), r.Output)
				Expect(r.Output).To(ContainSubstring("timeout 1s exceeded"))
				took[image] = append(took[image], r.Duration.Round(10*time.Millisecond))
			}
			time.Sleep(500 * time.Millisecond)
			z := zombies(criProcesses(t, id))
			left[image] = len(z)
			t.Logf("%s: zombies after %d timed-out exec probes: %v", image, probes, z)
		}
		t.Logf("ExecSync with a 1 s timeout of `sh -c 'sleep 2; echo ok'`, %d times: zombies without the buildpack %d (probe calls took %v), with %d (%v)",
			probes, left[settings.Without], took[settings.Without], left[settings.With], took[settings.With])
		Expect(left[settings.Without]).To(Equal(probes), "without the buildpack each probe leaves a zombie")
		Expect(left[settings.With]).To(Equal(0), "with the buildpack none")
	})

	it("stops a shell-wrapped app at once with crictl stop; without the buildpack it waits the full grace period", func() {
		images := []string{settings.Without, settings.With}
		ids := map[string]string{}
		for _, image := range images {
			_, ids[image] = startApp(image, namespaceContainer, "/cnb/process/shell-wrapped")
		}
		took := stopAll(t, ids)
		exit, logs := map[string]string{}, map[string]string{}
		for _, image := range images {
			_, exit[image] = criState(t, ids[image])
			logs[image] = crictlResult(t, "logs", ids[image]).Output
		}
		t.Logf("crictl stop --timeout %d of a shell-wrapped app: without the buildpack %v (exit %s), with %v (exit %s)",
			podStopTimeout, took[settings.Without].Round(time.Millisecond), exit[settings.Without],
			took[settings.With].Round(time.Millisecond), exit[settings.With])
		Expect(took[settings.Without]).To(BeNumerically(">=", (podStopTimeout-1)*time.Second), "without: the shell as PID 1 ignores SIGTERM")
		Expect(exit[settings.Without]).To(Equal("137"), "without: killed by SIGKILL")
		Expect(logs[settings.Without]).NotTo(ContainSubstring("serve: got"))
		Expect(took[settings.With]).To(BeNumerically("<", 5*time.Second), "with: SIGTERM reaches the app")
		Expect(logs[settings.With]).To(ContainSubstring("serve: got terminated, exiting"))
		Expect(exit[settings.With]).To(Equal("143"), "the shell's death by SIGTERM")
	})

	context("in a pod whose containers share its PID namespace (shareProcessNamespace: true)", func() {
		it("leaves PID 1 and the exec orphans to the pause process; the init is a subreaper, signals only its own subtree, and the pod stops cleanly", func() {
			for _, image := range []string{settings.Without, settings.With} {
				p := runPod(t, podName(image), namespacePod)
				app := p.start(t, "app", image, nil, "BPL_INIT_LOG_LEVEL=info")
				sidecar := p.start(t, "sidecar", settings.Without, []string{"/cnb/process/web", "--name", "sidecar"})
				for _, id := range []string{app, sidecar} {
					waitForLogVia(t, crictlArgv("logs", id), serving, 30*time.Second)
				}
				procs := criProcesses(t, app)
				t.Logf("%s in a pod that shares its PID namespace: %v", image, procs)
				Expect(pid1(t, procs).Cmdline).To(Equal("/pause"))
				Expect(procs).To(ContainElement(HaveField("Cmdline", "/workspace/bin/sample-app serve --name sidecar")))
				appLog := crictlResult(t, "logs", app).Output
				if image == settings.With {
					Expect(procs).To(ContainElement(And(HaveField("Cmdline", HavePrefix(initPath+" -- ")), HaveField("PPID", 0))))
					Expect(appLog).To(ContainSubstring("(init is a child subreaper)"))
				}

				// An exec session's orphan goes to the pause process, which reaps it. (Its output
				// goes elsewhere: the CRI's exec returns only when the session's output closes.)
				crictl(t, "exec", app, "sh", "-c", "sleep 2 >/dev/null 2>&1 & exit 0")
				Expect(findProcess(t, app, "sleep 2").PPID).To(Equal(1))
				time.Sleep(2500 * time.Millisecond)
				Expect(zombies(criProcesses(t, app))).To(BeEmpty(), "the pause process reaps")

				// The kubelet's stop of the app container: the sidecar, outside its subtree, is
				// left alone.
				took := stopAll(t, map[string]string{image: app})[image]
				state, code := criState(t, app)
				Expect(state).To(Equal("CONTAINER_EXITED"))
				Expect(code).To(Equal("0"), "the app exits 0 on SIGTERM")
				Expect(took).To(BeNumerically("<", 5*time.Second))
				state, _ = criState(t, sidecar)
				Expect(state).To(Equal("CONTAINER_RUNNING"))
				Expect(crictlResult(t, "logs", sidecar).Output).NotTo(ContainSubstring("serve: got"), "the sidecar got no signal")
				Expect(pid1(t, criProcesses(t, sidecar)).Cmdline).To(Equal("/pause"))

				// Then the rest of the pod, as the kubelet does: the containers, then the sandbox.
				start := time.Now()
				stopAll(t, map[string]string{"sidecar": sidecar})
				crictl(t, "stopp", p.ID)
				podTook := time.Since(start)
				_, sidecarCode := criState(t, sidecar)
				Expect(sidecarCode).To(Equal("0"))
				t.Logf("%s: app stopped in %v (exit %s), then the sidecar and the pod in %v", image,
					took.Round(time.Millisecond), code, podTook.Round(time.Millisecond))
				Expect(podTook).To(BeNumerically("<", 5*time.Second))
			}
		})
	})

	context("in a pod whose containers share its PID namespace, when the shell of a shell-wrapped app is killed", func() {
		it("ends the orphaned app with SIGTERM as its subreaper, and nothing outside its subtree; without the buildpack the app dies of the runtime's SIGKILL", func() {
			for _, image := range []string{settings.Without, settings.With} {
				p := runPod(t, podName(image), namespacePod)
				app := p.start(t, "app", image, []string{"/cnb/process/shell-wrapped"})
				sidecar := p.start(t, "sidecar", settings.Without, []string{"/cnb/process/web", "--name", "sidecar"})
				for _, id := range []string{app, sidecar} {
					waitForLogVia(t, crictlArgv("logs", id), serving, 30*time.Second)
				}
				shell := findProcess(t, app, "sh -c /workspace/bin/sample-app serve")
				start := time.Now()
				criKill(t, app, shell.PID)
				state, code := criState(t, app)
				for state != "CONTAINER_EXITED" && time.Since(start) < 20*time.Second {
					time.Sleep(50 * time.Millisecond)
					state, code = criState(t, app)
				}
				took := time.Since(start)
				appLog := crictlResult(t, "logs", app).Output
				t.Logf("%s: the shell-wrapped app's shell SIGKILLed in a shared PID namespace: the container exited %s after %v; its log:\n%s",
					image, code, took.Round(time.Millisecond), appLog)
				Expect(state).To(Equal("CONTAINER_EXITED"))
				Expect(code).To(Equal("137"), "the shell's death by SIGKILL")
				if image == settings.With {
					Expect(appLog).To(ContainSubstring("serve: got terminated, exiting"), "the init adopted the orphaned app and sent it SIGTERM")
				} else {
					Expect(appLog).NotTo(ContainSubstring("serve: got"), "the orphan went to the pause process; the runtime SIGKILLs it")
				}
				Expect(criProcesses(t, sidecar)).NotTo(ContainElement(HaveField("Cmdline", HaveSuffix("--name shell-wrapped"))))
				state, _ = criState(t, sidecar)
				Expect(state).To(Equal("CONTAINER_RUNNING"))
				Expect(crictlResult(t, "logs", sidecar).Output).NotTo(ContainSubstring("serve: got"), "the sidecar got no signal")
			}
		})
	})

	it("removes, when scripts/pods.sh start reuses its containerd, the pods a killed run left in it", func() {
		id, pause := abandonedPod(t, "pid1-pods-abandoned")
		start := run(t, 2*time.Minute, nil, "bash", settings.Root+"/scripts/pods.sh", "start")
		Expect(start.ExitCode).To(Equal(0), start.Output)
		Expect(start.Output).To(ContainSubstring("already running"))
		Expect(crictl(t, "pods", "-q")).NotTo(ContainSubstring(id), "the pod of the killed run is removed")
		NewWithT(t).Eventually(func() error { return syscall.Kill(pause, 0) }, 10*time.Second).Should(MatchError(syscall.ESRCH),
			"its pause process (pid %d) is ended", pause)
	})

	it("ends the pods, their shims and sockets with scripts/pods.sh stop after its containerd was killed, and starts again", func() {
		id, pause := abandonedPod(t, "pid1-pods-crash")
		address, err := os.ReadFile("/run/pid1-pods/state/io.containerd.runtime.v2.task/k8s.io/" + id + "/address")
		Expect(err).NotTo(HaveOccurred())
		shimSocket := strings.TrimPrefix(strings.TrimSpace(string(address)), "unix://")
		containerd, err := os.ReadFile("/run/pid1-pods/containerd.pid")
		Expect(err).NotTo(HaveOccurred())
		pid, err := strconv.Atoi(strings.TrimSpace(string(containerd)))
		Expect(err).NotTo(HaveOccurred())

		Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
		Eventually := NewWithT(t).Eventually
		Eventually(func() error { return syscall.Kill(pid, 0) }, 10*time.Second).Should(MatchError(syscall.ESRCH))
		stop := run(t, 2*time.Minute, nil, "bash", settings.Root+"/scripts/pods.sh", "stop")
		podImages = nil // a new containerd: the next spec imports the images again
		start := run(t, 2*time.Minute, nil, "bash", settings.Root+"/scripts/pods.sh", "start")
		t.Logf("scripts/pods.sh stop after containerd was killed (exit %d):\n%s", stop.ExitCode, stop.Output)
		Expect(start.ExitCode).To(Equal(0), start.Output)
		Expect(stop.ExitCode).To(Equal(0), stop.Output)
		Eventually(func() error { return syscall.Kill(pause, 0) }, 10*time.Second).Should(MatchError(syscall.ESRCH),
			"the pod's pause process (pid %d) is ended", pause)
		Expect(shimSocket).NotTo(BeAnExistingFile(), "the shim's socket is removed")
	})

	it("leaves no pod, container or mount behind", func() {
		Expect(crictl(t, "pods", "-q")).To(BeEmpty())
		Expect(crictl(t, "ps", "-a", "-q")).To(BeEmpty())
		mounts, err := os.ReadFile("/proc/self/mounts")
		Expect(err).NotTo(HaveOccurred())
		Expect(string(mounts)).NotTo(MatchRegexp(`/run/pid1-pods/state/\S+/(rootfs|shm) `))
	})
}

// abandonedPod runs a pod sandbox named name as a test run killed with it running leaves it:
// nothing removes it. It returns the pod's id and the host pid of its pause process.
func abandonedPod(t *testing.T, name string) (string, int) {
	t.Helper()
	dir := t.TempDir()
	config := filepath.Join(dir, "pod.json")
	writeJSON(t, config, map[string]any{
		"metadata":      map[string]any{"name": name, "namespace": "pid1-pods", "uid": name},
		"log_directory": dir,
		"linux": map[string]any{
			"cgroup_parent":    "/pid1-pods",
			"security_context": map[string]any{"namespace_options": map[string]any{"network": namespaceNode, "pid": namespaceContainer}},
		},
	})
	id := crictl(t, "runp", config)
	pause, err := strconv.Atoi(crictl(t, "inspectp", "-o", "go-template", "--template", "{{.info.pid}}", id))
	if err != nil {
		t.Fatalf("pod %s: no pid of its pause process: %v", id, err)
	}
	return id, pause
}

// podName is a pod name for image, unique within the suite's run of a spec.
func podName(image string) string {
	return "pid1-pods-" + regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(image, "-")
}

// findProcess waits until a process of the CRI container id has cmdline and returns it.
func findProcess(t *testing.T, id, cmdline string) proc {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		procs := criProcesses(t, id)
		for _, p := range procs {
			if strings.HasPrefix(p.Cmdline, cmdline) {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no process %q in container %s within 10s: %v", cmdline, id, procs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startInteractiveExec runs `crictl exec -it ID COMMAND...` on a terminal of its own (script
// makes one), as `kubectl exec -ti` does, and returns the client process.
func startInteractiveExec(t *testing.T, id string, command ...string) *os.Process {
	t.Helper()
	var quoted []string
	for _, arg := range append(crictlArgv("exec", "-it", id), command...) {
		quoted = append(quoted, "'"+strings.ReplaceAll(arg, "'", `'\''`)+"'")
	}
	// script runs the line through a shell, which execs the client: its pid is the client's.
	cmd := exec.Command("script", "-qfec", "exec "+strings.Join(quoted, " "), "/dev/null")
	stdin, err := cmd.StdinPipe() // held open: the session keeps a live input
	if err != nil {
		t.Fatalf("unable to make the client's input: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("unable to start crictl exec -it under script: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = stdin.Close()
	})
	return clientOf(t, cmd)
}

// clientOf is the child script started, the crictl client: the process a killed caller is.
func clientOf(t *testing.T, script *exec.Cmd) *os.Process {
	t.Helper()
	pid := script.Process.Pid
	children := "/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children"
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(children)
		if fields := strings.Fields(string(b)); len(fields) > 0 {
			child, _ := strconv.Atoi(fields[0])
			p, err := os.FindProcess(child)
			if err != nil {
				t.Fatalf("unable to find the crictl client %d: %v", child, err)
			}
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("script (pid %d) started no crictl client within 10s", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stopAll runs `crictl stop --timeout podStopTimeout` for every container of ids at once (the
// kubelet stops a pod's containers in parallel) and returns how long each took by key.
func stopAll(t *testing.T, ids map[string]string) map[string]time.Duration {
	t.Helper()
	type stopped struct {
		key  string
		took time.Duration
		err  error
		out  []byte
	}
	done := make(chan stopped)
	for key, id := range ids {
		go func() {
			argv := crictlArgv("stop", "--timeout", strconv.Itoa(podStopTimeout), id)
			start := time.Now()
			out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
			done <- stopped{key, time.Since(start), err, out}
		}()
	}
	took := map[string]time.Duration{}
	for range ids {
		s := <-done
		if s.err != nil {
			t.Errorf("crictl stop %s: %v\n%s", ids[s.key], s.err, s.out)
		}
		took[s.key] = s.took
	}
	return took
}
