package integration_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// criConfig is the crictl configuration scripts/pods.sh writes for its containerd: the CRI
// endpoint unix:///run/pid1-pods/containerd.sock.
const criConfig = "/run/pid1-pods/crictl.yaml"

// The CRI's NamespaceMode (k8s.io/cri-api): POD shares the pod's namespace, CONTAINER gives
// each container its own, NODE is the host's.
const (
	namespacePod       = 0
	namespaceContainer = 1
	namespaceNode      = 2
)

// crictlArgv is the command line of crictl against the containerd of scripts/pods.sh.
func crictlArgv(args ...string) []string {
	return append([]string{filepath.Join(settings.Root, ".tools", "bin", "crictl"), "--config", criConfig}, args...)
}

// crictlResult runs crictl with args and returns the result, whatever the exit code.
func crictlResult(t *testing.T, args ...string) result {
	t.Helper()
	argv := crictlArgv(args...)
	return run(t, 2*time.Minute, nil, argv[0], argv[1:]...)
}

// crictl runs crictl with args; it must exit 0. It returns stdout without surrounding space.
func crictl(t *testing.T, args ...string) string {
	t.Helper()
	r := crictlResult(t, args...)
	if r.ExitCode != 0 {
		t.Fatalf("crictl %s: exit %d\n%s", strings.Join(args, " "), r.ExitCode, r.Output)
	}
	return strings.TrimSpace(r.Stdout)
}

// requireCRI fails the test unless the CRI of scripts/pods.sh answers and is RuntimeReady.
func requireCRI(t *testing.T) {
	t.Helper()
	argv := crictlArgv("info", "-o", "go-template", "--template",
		`{{range .status.conditions}}{{if eq .type "RuntimeReady"}}{{.status}}{{end}}{{end}}`)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "true") {
		t.Fatalf("containerd's CRI (%s) is not RuntimeReady: %v\n%s\n(scripts/test.sh starts it with scripts/pods.sh start; scripts/setup.sh builds crictl)",
			criConfig, err, out)
	}
}

// pod is a pod sandbox run through the CRI, and the configuration it was made from (crictl
// create needs it again for each container).
type pod struct {
	ID, Config, Dir string
	pidMode         int
}

// runPod runs a pod sandbox named name on the host's network, its containers each in a PID
// namespace of their own (pidMode namespaceContainer, Kubernetes' default) or all in the pod's
// (namespacePod, shareProcessNamespace: true). It stops and removes the pod when the test ends.
func runPod(t *testing.T, name string, pidMode int) *pod {
	t.Helper()
	dir := t.TempDir()
	p := &pod{Config: filepath.Join(dir, "pod.json"), Dir: dir, pidMode: pidMode}
	writeJSON(t, p.Config, map[string]any{
		"metadata":      map[string]any{"name": name, "namespace": "pid1-pods", "uid": name},
		"log_directory": filepath.Join(dir, "logs"),
		"linux": map[string]any{
			"cgroup_parent":    "/pid1-pods",
			"security_context": map[string]any{"namespace_options": p.namespaces()},
		},
	})
	p.ID = crictl(t, "runp", p.Config)
	t.Cleanup(func() {
		argv := crictlArgv("rmp", "--force", p.ID)
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Errorf("crictl rmp --force %s: %v\n%s", p.ID, err, out)
		}
	})
	return p
}

// namespaces is the CRI's namespace_options for the pod and each of its containers: the kubelet
// gives both the same.
func (p *pod) namespaces() map[string]any {
	return map[string]any{"network": namespaceNode, "pid": p.pidMode}
}

// start creates and starts a container named name of image in the pod: command replaces the
// image's entrypoint when given, env is added to the image's.
func (p *pod) start(t *testing.T, name, image string, command []string, env ...string) string {
	t.Helper()
	var envs []map[string]string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		envs = append(envs, map[string]string{"key": k, "value": v})
	}
	config := filepath.Join(p.Dir, name+".json")
	writeJSON(t, config, map[string]any{
		"metadata": map[string]any{"name": name},
		"image":    map[string]any{"image": image},
		"command":  command,
		"envs":     envs,
		"log_path": name + ".log",
		"linux": map[string]any{
			"security_context": map[string]any{"namespace_options": p.namespaces()},
		},
	})
	id := crictl(t, "create", p.ID, config, p.Config)
	crictl(t, "start", id)
	return id
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("unable to encode %s: %v", path, err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatalf("unable to write %s: %v", path, err)
	}
}

// criProcesses lists the processes of a running CRI container from its /proc, leaving out the
// ones this listing itself runs.
func criProcesses(t *testing.T, id string) []proc {
	t.Helper()
	return processesVia(t, crictlArgv("exec", id)...)
}

// criState is a CRI container's state (CONTAINER_RUNNING, CONTAINER_EXITED, ...) and exit code.
func criState(t *testing.T, id string) (string, string) {
	t.Helper()
	out := crictl(t, "inspect", "-o", "go-template", "--template", "{{.status.state}} {{.status.exitCode}}", id)
	state, code, _ := strings.Cut(out, " ")
	return state, code
}

// criKill sends SIGKILL to pid inside the CRI container id (as the container's user, who owns
// every process the tests kill). It names /bin/kill: a bare `kill` would find the image's
// `kill` process type in /cnb/process first on PATH.
func criKill(t *testing.T, id string, pid int) {
	t.Helper()
	crictl(t, "exec", id, "/bin/kill", "-9", strconv.Itoa(pid))
}
