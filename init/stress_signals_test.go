package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
	"golang.org/x/sys/unix"
)

// sigqueue sends sig with value to pid as sigqueue(3) does (code SI_QUEUE),
// retrying while the queue of pending signals is full.
func sigqueue(t *testing.T, pid int, sig syscall.Signal, value int64) {
	t.Helper()
	var info unix.Siginfo
	info.Signo, info.Code = int32(sig), -1
	p := unsafe.Pointer(&info)
	*(*int32)(unsafe.Add(p, 16)) = int32(unix.Getpid())
	*(*int64)(unsafe.Add(p, 24)) = value
	for {
		_, _, errno := unix.RawSyscall(unix.SYS_RT_SIGQUEUEINFO, uintptr(pid), uintptr(sig), uintptr(p))
		if errno != unix.EAGAIN {
			NewWithT(t).Expect(errno).To(BeZero(), "sigqueue %d to %d", sig, pid)
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// received is what the siginfo helper recorded: "SIGNO CODE VALUE" lines.
type received []string

// count returns how many of the lines are for sig, and how many of those
// carry code SI_QUEUE and one of the values 0 to n-1, each once.
func (r received) count(sig syscall.Signal, n int) (all, withValue int) {
	seen := make(map[int]bool)
	for _, line := range r {
		var signo, code, value int
		if _, err := fmt.Sscanf(line, "%d %d %d", &signo, &code, &value); err != nil || signo != int(sig) {
			continue
		}
		all++
		if code == -1 && value >= 0 && value < n && !seen[value] {
			seen[value] = true
			withValue++
		}
	}
	return all, withValue
}

func testStressSignals(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	it.Before(func() { stressPrerequisites(t) })

	// under runs the siginfo helper as PID 1 under argv (nothing: the helper
	// is PID 1), calls send with the pid to signal, waits until the helper
	// has recorded want lines or 10 s have passed, then ends it with
	// SIGTERM. It returns what the helper recorded and whether PID 1 was
	// still there to take the SIGTERM.
	under := func(argv []string, want int, send func(pid int)) (received, bool) {
		dir := t.TempDir()
		file := filepath.Join(dir, "siginfo")
		// Writable by the helper when it runs as another user.
		for _, d := range []string{filepath.Dir(dir), dir} {
			NewWithT(t).Expect(os.Chmod(d, 0o755)).To(Succeed())
		}
		NewWithT(t).Expect(os.WriteFile(file, nil, 0o666)).To(Succeed())
		NewWithT(t).Expect(os.Chmod(file, 0o666)).To(Succeed())
		p := startAsPID1(t, nil, nil, append(append([]string{}, argv...), helperBin, "siginfo", file)...)
		NewWithT(t).Eventually(func() string { return readFile(file) }, 5*time.Second, 5*time.Millisecond).Should(HavePrefix("ready"), p.stderr.String())
		send(p.hostPID)
		lines := func() received {
			got := strings.Split(strings.TrimSpace(readFile(file)), "\n")
			return received(got[1:])
		}
		deadline := time.Now().Add(10 * time.Second)
		for len(lines()) < want && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond) // any more than wanted
		got := lines()
		alive := syscall.Kill(p.hostPID, syscall.SIGTERM) == nil
		code, _ := waitAtMost(t, p.cmd, 10*time.Second)
		return got, alive && code == 0
	}
	peers := []struct {
		name string
		argv []string
	}{{"ours", initArgv()}, {"tini-static", []string{tiniStatic, "-s", "--"}}, {"no init", nil}}

	it("passes on every one of 1,000 sigqueue()d SIGRTMIN+1 (35), each with its value, side by side with tini-static and no init", func() {
		const n = 1000
		figures := map[string][2]int{}
		for _, peer := range peers {
			got, alive := under(peer.argv, n, func(pid int) {
				for i := range n {
					sigqueue(t, pid, 35, int64(i))
				}
			})
			all, withValue := got.count(35, n)
			figures[peer.name] = [2]int{all, withValue}
			Expect(alive).To(BeTrue(), "%s: PID 1 ended by SIGTERM with 0", peer.name)
		}
		t.Logf("1,000 sigqueue()d signal 35: received (with their value): ours %v, tini-static %v, no init %v",
			figures["ours"], figures["tini-static"], figures["no init"])
		Expect(figures["no init"]).To(Equal([2]int{n, n}), "the helper alone receives them all")
		Expect(figures["ours"]).To(Equal([2]int{n, n}))
	})

	// Stopped, PID 1 takes no signal; continued, it takes every queued one
	// before it runs on: more than the init's pipe holds (8,192) arrive at
	// once. The helper (package trap too) counts what its own pipe could not
	// hold, without values.
	it("passes on every one of 10,000 signals 35 sigqueue()d while PID 1 was stopped, side by side with tini-static and no init", func() {
		const n = 10000
		figures := map[string]int{}
		for _, peer := range peers {
			got, alive := under(peer.argv, n, func(pid int) {
				Expect(syscall.Kill(pid, syscall.SIGSTOP)).To(Succeed())
				for i := range n {
					sigqueue(t, pid, 35, int64(i))
				}
				Expect(syscall.Kill(pid, syscall.SIGCONT)).To(Succeed())
			})
			figures[peer.name], _ = got.count(35, n)
			Expect(alive).To(BeTrue(), "%s: PID 1 ended by SIGTERM with 0", peer.name)
		}
		t.Logf("10,000 signal 35 queued while PID 1 was stopped: received: ours %d, tini-static %d, no init %d",
			figures["ours"], figures["tini-static"], figures["no init"])
		Expect(figures["ours"]).To(Equal(n))
		Expect(figures["no init"]).To(Equal(n), "the helper alone receives them all")
	})

	// The program's queue is full at 50: the kernel refuses sigqueue(3)
	// past it with EAGAIN and merges kill(2)s; without an init the sender
	// would get the EAGAIN (docs/limits.md). The limit counts the signals
	// pending for every process of the receiver's user: the program runs as
	// a user of its own (sigpendingUID), so that root's other processes on
	// the machine take none of its 50.
	it("passes on as many of 200 sigqueue()d signals 35 as tini-static does to a program whose RLIMIT_SIGPENDING is 50", func() {
		const n = 200
		figures := map[string][2]int{}
		for _, peer := range peers[:2] { // the program alone would refuse the sender past 50
			prefix := append(append([]string{}, peer.argv...), "prlimit", "--sigpending=50:50", "--",
				"setpriv", "--reuid", sigpendingUID, "--regid", sigpendingUID, "--clear-groups", "--",
				"env", "GODEBUG=asyncpreemptoff=1") // no preemption signal of the helper's runtime takes a slot
			got, alive := under(prefix, n, func(pid int) {
				program := childOf(pid)
				for childOf(program) != 0 || comm(program) == "prlimit" || comm(program) == "setpriv" || comm(program) == "env" {
					time.Sleep(time.Millisecond) // prlimit has exec'd the helper
					program = childOf(pid)
				}
				Expect(syscall.Kill(program, syscall.SIGSTOP)).To(Succeed())
				for i := range n {
					sigqueue(t, pid, 35, int64(i))
				}
				time.Sleep(200 * time.Millisecond) // the init has forwarded them all
				Expect(syscall.Kill(program, syscall.SIGCONT)).To(Succeed())
			})
			all, withValue := got.count(35, n)
			figures[peer.name] = [2]int{all, withValue}
			Expect(alive).To(BeTrue(), "%s: PID 1 ended by SIGTERM with 0", peer.name)
		}
		t.Logf("200 sigqueue()d signal 35, the program's RLIMIT_SIGPENDING 50, the program stopped meanwhile: received (with their value): ours %v, tini-static %v",
			figures["ours"], figures["tini-static"])
		Expect(figures["ours"][0]).To(BeNumerically(">=", figures["tini-static"][0]), "instances that reach the program")
		Expect(figures["ours"][1]).To(Equal(figures["ours"][0]), "each with its value")
	})

	it("passes on sigqueue()d SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSTKFLT and SIGSYS with their values, and lives on", func() {
		faults := []syscall.Signal{syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGILL, syscall.SIGTRAP, syscall.SIGSTKFLT, syscall.SIGSYS}
		report := map[string]string{}
		for _, peer := range peers {
			got, alive := under(peer.argv, len(faults), func(pid int) {
				for _, sig := range faults {
					sigqueue(t, pid, sig, 42)
					time.Sleep(20 * time.Millisecond) // standard signals are not queued: one at a time
				}
			})
			report[peer.name] = fmt.Sprintf("%q, alive %v", got, alive)
			if peer.name == "tini-static" {
				continue
			}
			var want received
			for _, sig := range faults {
				want = append(want, strconv.Itoa(int(sig))+" -1 42")
			}
			Expect(got).To(Equal(want), peer.name)
			Expect(alive).To(BeTrue(), "%s: PID 1 ended by SIGTERM with 0", peer.name)
		}
		t.Logf("sigqueue()d faults (SIGNO CODE VALUE): ours %s; tini-static %s; no init %s", report["ours"], report["tini-static"], report["no init"])
	})

	it("forwards SIGRTMIN (34, docker kill -s RTMIN) as PID 1 and as a child subreaper, and lives on", func() {
		got, alive := under(initArgv(), 1, func(pid int) { Expect(syscall.Kill(pid, 34)).To(Succeed()) })
		Expect(got).To(HaveLen(1))
		Expect(got[0]).To(HavePrefix("34 0 "), "as PID 1")
		Expect(alive).To(BeTrue(), "as PID 1: the init ended by SIGTERM with 0")

		file := filepath.Join(t.TempDir(), "siginfo")
		cmd := exec.Command(initArgv()[0], append(initArgv()[1:], helperBin, "siginfo", file)...)
		var stderr syncBuffer
		cmd.Stderr = &stderr
		Expect(cmd.Start()).To(Succeed())
		defer cmd.Process.Kill()
		Eventually := NewWithT(t).Eventually
		Eventually(func() string { return readFile(file) }, 5*time.Second, 5*time.Millisecond).Should(HavePrefix("ready"))
		Expect(syscall.Kill(cmd.Process.Pid, 34)).To(Succeed())
		Eventually(func() string { return readFile(file) }, 5*time.Second, 5*time.Millisecond).Should(ContainSubstring("\n34 0 "), "as a child subreaper")
		Expect(syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)).To(Succeed())
		code, _ := waitAtMost(t, cmd, 5*time.Second)
		Expect(code).To(Equal(0), stderr.String())
	})
}

// sigpendingUID is the user the RLIMIT_SIGPENDING spec runs its program as:
// one that no other process uses.
const sigpendingUID = "64123"
