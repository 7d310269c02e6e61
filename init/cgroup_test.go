package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pidsCgroup is a pids cgroup of a test's own, under cgroup v1's pids
// hierarchy or under the cgroup v2 root, whichever the machine has. The
// processes a test starts through it (Prefix) and their descendants may
// number at most the limit; t.Cleanup kills what is left in it and removes
// it.
type pidsCgroup struct {
	Dir string
}

// newPidsCgroup makes a pids cgroup limited to max processes. A machine with
// neither hierarchy (or a v2 root that cannot delegate pids) fails the test,
// saying which.
func newPidsCgroup(t *testing.T, max int) *pidsCgroup {
	t.Helper()
	parent, err := pidsParent()
	if err != nil {
		t.Fatalf("a pids cgroup is needed: %s", err)
	}
	dir := filepath.Join(parent, fmt.Sprintf("pid1-init-test-%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("unable to make the pids cgroup %s: %s", dir, err)
	}
	c := &pidsCgroup{Dir: dir}
	t.Cleanup(func() {
		if err := c.remove(); err != nil {
			t.Errorf("unable to remove the pids cgroup: %s", err)
		}
	})
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(max)), 0o644); err != nil {
		t.Fatalf("unable to set pids.max of %s: %s", dir, err)
	}
	return c
}

// newNestedPidsCgroup makes a pids cgroup limited to max processes and, in
// it, one without a limit of its own ("max"), which it returns: the limit is
// the parent's, as a Kubernetes pod's pids limit is set on the pod's cgroup,
// not on its containers'.
func newNestedPidsCgroup(t *testing.T, max int) *pidsCgroup {
	t.Helper()
	parent := newPidsCgroup(t, max)
	c := &pidsCgroup{Dir: filepath.Join(parent.Dir, "container")}
	if err := os.Mkdir(c.Dir, 0o755); err != nil {
		t.Fatalf("unable to make the pids cgroup %s: %s", c.Dir, err)
	}
	t.Cleanup(func() { // before the parent's
		if err := c.remove(); err != nil {
			t.Errorf("unable to remove the pids cgroup: %s", err)
		}
	})
	return c
}

// pidsParent returns the directory new pids cgroups go in: cgroup v1's pids
// hierarchy, or the v2 root with the pids controller enabled for its
// children.
func pidsParent() (string, error) {
	if _, err := os.Stat("/sys/fs/cgroup/pids/cgroup.procs"); err == nil {
		return "/sys/fs/cgroup/pids", nil // v1
	}
	controllers, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers")
	if err != nil {
		return "", fmt.Errorf("neither /sys/fs/cgroup/pids (cgroup v1) nor /sys/fs/cgroup/cgroup.controllers (v2) exists: %w", err)
	}
	if !strings.Contains(" "+string(controllers)+" ", " pids ") {
		return "", fmt.Errorf("the cgroup v2 root offers no pids controller (cgroup.controllers: %q)", strings.TrimSpace(string(controllers)))
	}
	control := "/sys/fs/cgroup/cgroup.subtree_control"
	if err := os.WriteFile(control, []byte("+pids"), 0o644); err != nil {
		return "", fmt.Errorf("unable to enable the pids controller in %s: %w", control, err)
	}
	return "/sys/fs/cgroup", nil
}

// Prefix is a command that moves itself into the cgroup and then execs its
// arguments: everything it starts counts against the limit.
func (c *pidsCgroup) Prefix() []string {
	return []string{"sh", "-c", `echo $$ > "$0" && exec "$@"`, filepath.Join(c.Dir, "cgroup.procs")}
}

// MountedPrefix is Prefix, then a mount namespace in which the cgroup's
// directory is mounted on /sys/fs/cgroup/pids (or /sys/fs/cgroup, v2) while
// /proc/self/cgroup still names its full path: what a container of Docker on
// cgroup v1 (host cgroup namespace) sees.
func (c *pidsCgroup) MountedPrefix() []string {
	return append(c.Prefix(), "unshare", "--mount", "--propagation", "private", "sh", "-c",
		`mount --bind "$0" "$(dirname "$0")" && exec "$@"`, c.Dir)
}

// Current returns how many processes the cgroup holds now.
func (c *pidsCgroup) Current() int {
	n, _ := strconv.Atoi(strings.TrimSpace(readFile(filepath.Join(c.Dir, "pids.current"))))
	return n
}

// Refused returns how many forks the limit has refused so far (pids.events).
func (c *pidsCgroup) Refused() int {
	for _, line := range strings.Split(readFile(filepath.Join(c.Dir, "pids.events")), "\n") {
		if v, ok := strings.CutPrefix(line, "max "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// remove kills every process left in the cgroup, waits for them to be gone
// and removes it.
func (c *pidsCgroup) remove() error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		procs := strings.Fields(readFile(filepath.Join(c.Dir, "cgroup.procs")))
		if len(procs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s still holds processes %v after 10 s of SIGKILL", c.Dir, procs)
		}
		for _, p := range procs {
			if pid, err := strconv.Atoi(p); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	for {
		err := os.Remove(c.Dir)
		if err == nil || os.IsNotExist(err) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("unable to remove %s: %w", c.Dir, err)
		}
		time.Sleep(20 * time.Millisecond) // zombies not yet released
	}
}
