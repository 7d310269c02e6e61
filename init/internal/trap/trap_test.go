package trap_test

import (
	"math/bits"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
	"github.com/sclevine/spec/report"
	"golang.org/x/sys/unix"

	"github.com/pid1-buildpacks/init/init/internal/trap"
)

// The specs catch signals in the test process itself, for good: trap has no
// way back to the runtime's handlers.
func TestTrap(t *testing.T) {
	NewWithT(t).Expect(trap.Open()).To(Succeed())
	for _, sig := range []unix.Signal{unix.SIGUSR1, unix.SIGCHLD, unix.SIGSEGV, unix.SIGBUS, unix.SIGFPE,
		unix.SIGILL, unix.SIGTRAP, unix.SIGSYS, unix.SIGSTKFLT, 34, 35} {
		NewWithT(t).Expect(trap.Catch(sig)).To(Succeed(), "catch %d", sig)
	}
	received := make(chan unix.Siginfo, 4096)
	go func() {
		var infos [64]unix.Siginfo
		for {
			n, err := trap.Wait(infos[:])
			if err != nil {
				panic(err)
			}
			for _, info := range infos[:n] {
				received <- info
			}
		}
	}()
	spec.Run(t, "Trap", func(t *testing.T, context spec.G, it spec.S) { testTrap(t, it, received) },
		spec.Report(report.Terminal{}), spec.Sequential())
}

// sender is what a siginfo says about who sent it: pid, uid and value.
type sender struct {
	pid, uid int32
	value    int64
}

func from(info *unix.Siginfo) sender {
	p := unsafe.Pointer(info)
	return sender{*(*int32)(unsafe.Add(p, 16)), *(*int32)(unsafe.Add(p, 20)), *(*int64)(unsafe.Add(p, 24))}
}

// sigqueue sends sig with value to the test process, as sigqueue(3) does.
func sigqueue(sig unix.Signal, value int64) error {
	var info unix.Siginfo
	info.Signo, info.Code = int32(sig), -1 // SI_QUEUE
	p := unsafe.Pointer(&info)
	*(*int32)(unsafe.Add(p, 16)) = int32(unix.Getpid())
	*(*int32)(unsafe.Add(p, 20)) = int32(unix.Getuid())
	*(*int64)(unsafe.Add(p, 24)) = value
	_, _, errno := unix.RawSyscall(unix.SYS_RT_SIGQUEUEINFO, uintptr(unix.Getpid()), uintptr(sig), uintptr(p))
	if errno != 0 {
		return errno
	}
	return nil
}

// pending returns how many signals wait to be handled in the test process
// or one of its threads (bits of ShdPnd and SigPnd in /proc).
func pending() int {
	n := 0
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, task := range tasks {
		status, _ := os.ReadFile("/proc/self/task/" + task.Name() + "/status")
		for _, line := range strings.Split(string(status), "\n") {
			key, value, _ := strings.Cut(line, ":")
			if key == "ShdPnd" || key == "SigPnd" {
				mask, _ := strconv.ParseUint(strings.TrimSpace(value), 16, 64)
				n += bits.OnesCount64(mask)
			}
		}
	}
	return n
}

func testTrap(t *testing.T, it spec.S, received chan unix.Siginfo) {
	var (
		Expect     = NewWithT(t).Expect
		Eventually = NewWithT(t).Eventually
	)

	next := func() unix.Siginfo {
		select {
		case info := <-received:
			return info
		case <-time.After(5 * time.Second):
			t.Fatal("no signal arrived within 5 s")
			return unix.Siginfo{}
		}
	}
	it.After(func() {
		select {
		case info := <-received:
			t.Fatalf("a signal more than expected: %d", info.Signo)
		case <-time.After(50 * time.Millisecond):
		}
	})

	it("delivers every one of 5,000 queued real-time signals, each with its value", func() {
		const n = 5000
		for i := range n {
			for sigqueue(35, int64(i)) == unix.EAGAIN {
				time.Sleep(time.Millisecond) // the queue of pending signals is full
			}
		}
		seen := make(map[int64]int)
		for range n {
			info := next()
			Expect(info.Signo).To(Equal(int32(35)))
			Expect(info.Code).To(Equal(int32(-1)))
			seen[from(&info).value]++
		}
		Expect(seen).To(HaveLen(n))
	})

	it("delivers signal 34, which the C libraries reserve and the Go runtime leaves alone", func() {
		Expect(unix.Kill(unix.Getpid(), 34)).To(Succeed())
		Expect(next().Signo).To(Equal(int32(34)))
	})

	it("delivers a kill(2)ed signal with SI_USER and its sender's pid and uid", func() {
		Expect(unix.Kill(unix.Getpid(), unix.SIGUSR1)).To(Succeed())
		info := next()
		Expect(info.Signo).To(Equal(int32(unix.SIGUSR1)))
		Expect(info.Code).To(Equal(int32(0)))
		got := from(&info)
		Expect([]int32{got.pid, got.uid}).To(Equal([]int32{int32(unix.Getpid()), int32(unix.Getuid())}))
	})

	for _, sig := range []unix.Signal{unix.SIGSEGV, unix.SIGBUS, unix.SIGFPE, unix.SIGILL, unix.SIGTRAP, unix.SIGSYS, unix.SIGSTKFLT} {
		it("delivers a sigqueue(3)d "+unix.SignalName(sig)+" with its value, which the runtime would take for a fault", func() {
			Expect(sigqueue(sig, 42)).To(Succeed())
			info := next()
			Expect(info.Signo).To(Equal(int32(sig)))
			Expect(from(&info).value).To(Equal(int64(42)))
		})
	}

	it("leaves a real fault to the runtime: a nil dereference panics", func() {
		var recovered any
		func() {
			defer func() { recovered = recover() }()
			var p *int
			*p = 1
		}()
		Expect(recovered).To(MatchError(ContainSubstring("nil pointer dereference")))
	})

	// The reader above stops taking signals from the pipe while received is
	// full: it holds at most cap(received)+64 of them, and the pipe 8,192.
	it("loses no signal and no SIGCHLD when the pipe is full", func() {
		n := cap(received) + 64 + 8192 + 1000
		for i := range n {
			for sigqueue(35, int64(i)) == unix.EAGAIN {
				time.Sleep(time.Millisecond)
			}
		}
		Eventually(pending, 5*time.Second, time.Millisecond).Should(BeZero()) // all handled: the pipe is full
		Expect(unix.Kill(unix.Getpid(), unix.SIGCHLD)).To(Succeed())
		Eventually(pending, 5*time.Second, time.Millisecond).Should(BeZero())
		rt, chld := 0, 0
		for rt < n || chld == 0 {
			select {
			case info := <-received:
				switch info.Signo {
				case 35:
					rt++
				case int32(unix.SIGCHLD):
					chld++
				default:
					t.Fatalf("signal %d, not sent", info.Signo)
				}
			case <-time.After(2 * time.Second):
				t.Fatalf("%d of %d signals 35 and %d SIGCHLD arrived", rt, n, chld)
			}
		}
		Expect([]int{rt, chld}).To(Equal([]int{n, 1}))
		trap.Reaped()
	})

	it("folds SIGCHLDs into one until Reaped", func() {
		for range 3 {
			Expect(unix.Kill(unix.Getpid(), unix.SIGCHLD)).To(Succeed())
		}
		Expect(next().Signo).To(Equal(int32(unix.SIGCHLD)))
		select {
		case info := <-received:
			t.Fatalf("a second SIGCHLD before Reaped: %d", info.Signo)
		case <-time.After(50 * time.Millisecond):
		}
		trap.Reaped()
		Expect(unix.Kill(unix.Getpid(), unix.SIGCHLD)).To(Succeed())
		Expect(next().Signo).To(Equal(int32(unix.SIGCHLD)))
		trap.Reaped()
	})
}
