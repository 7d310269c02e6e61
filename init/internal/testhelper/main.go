// Command testhelper is the program the init's black-box tests run under the
// init. It reports what it received and how it was started.
//
//	testhelper record FILE     append "ready" and then the number of every
//	                           signal received to FILE; exit 0 after SIGTERM
//	testhelper siginfo FILE    as record, one "SIGNO CODE VALUE" line a
//	                           signal (its siginfo: code and sigqueue value)
//	testhelper dump            print argv, env, cwd, fd 3, signal masks and
//	                           whether it is a child subreaper
//	testhelper wrap IGN BLK -- PROG ARG...
//	                           ignore the signals in IGN and block those in
//	                           BLK (comma-separated numbers, or -), then exec
//	testhelper tty             report the terminal's foreground group, say
//	                           when SIGINT arrives, exit 5 on a "q" line
//	testhelper leavegroup      move to a process group of its own, report
//	                           it and read a line (SIGTTIN stops it when the
//	                           terminal's foreground group is another)
//	testhelper orphans N       start N short-lived processes and exit
//	                           without waiting for them
//	testhelper zombies TIMEOUT wait until /proc shows no zombie, exit 1 if
//	                           some remain after TIMEOUT
//	testhelper root PROG ARG...
//	                           become root in every uid and gid (installed
//	                           setuid root), then exec
//	testhelper nosubreaper PROG ARG...
//	                           make prctl(PR_SET_CHILD_SUBREAPER) fail with
//	                           EINVAL, as qemu-user does, then exec
//	testhelper nopidfdsignal PROG ARG...
//	                           make pidfd_send_signal(2) fail with EPERM,
//	                           as some seccomp profiles do, then exec
//	testhelper forkbomb        ignore SIGTERM and fork in a loop, as every
//	                           child does too; run it only in a pids cgroup
//	testhelper exactenv ENTRY... -- PROG ARG...
//	                           exec PROG (a path) with exactly these
//	                           environment entries, duplicates and empty ones
//	                           included
package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/pid1-buildpacks/init/init/internal/signals"
	"github.com/pid1-buildpacks/init/init/internal/trap"
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: testhelper MODE ...")
	}
	switch os.Args[1] {
	case "record":
		record(os.Args[2])
	case "siginfo":
		siginfo(os.Args[2])
	case "terms":
		terms(os.Args[2])
	case "dump":
		dump()
	case "wrap":
		wrap(os.Args[2], os.Args[3], os.Args[5:])
	case "tty":
		tty()
	case "leavegroup":
		leavegroup()
	case "zombies":
		zombies(os.Args[2])
	case "orphans":
		orphans(os.Args[2])
	case "root":
		root(os.Args[2:])
	case "nosubreaper":
		nosubreaper(os.Args[2:])
	case "nopidfdsignal":
		nopidfdsignal(os.Args[2:])
	case "forkbomb":
		forkbomb()
	case "exactenv":
		exactenv(os.Args[2:])
	default:
		fail("unknown mode " + os.Args[1])
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "testhelper:", msg)
	os.Exit(100)
}

// record catches every signal the init forwards and appends its number to
// file, one line each, in the order they arrive.
func record(file string) {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fail(err.Error())
	}
	ch := make(chan os.Signal, 1024)
	var sigs []os.Signal
	for sig := unix.Signal(1); sig <= signals.Max; sig++ {
		if signals.Forwardable(sig) {
			sigs = append(sigs, sig)
		}
	}
	signal.Notify(ch, sigs...)
	fmt.Fprintf(f, "ready %d\n", os.Getpid())
	for sig := range ch {
		fmt.Fprintf(f, "%d\n", int(sig.(syscall.Signal)))
		if sig == unix.SIGTERM {
			os.Exit(0)
		}
	}
}

// siginfo is record through package trap, which sees every queued instance
// of a signal and its siginfo: each line has the signal's number, code and
// value.
func siginfo(file string) {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fail(err.Error())
	}
	if err := trap.Open(); err != nil {
		fail(err.Error())
	}
	for sig := unix.Signal(1); sig <= signals.Max; sig++ {
		if signals.Forwardable(sig) {
			if err := trap.Catch(sig); err != nil {
				fail(err.Error())
			}
		}
	}
	fmt.Fprintf(f, "ready %d\n", os.Getpid())
	var infos [64]unix.Siginfo
	for {
		n, err := trap.Wait(infos[:])
		if err != nil {
			fail(err.Error())
		}
		var lines []byte
		for i := range infos[:n] {
			info := &infos[i]
			value := *(*int64)(unsafe.Add(unsafe.Pointer(info), 24))
			lines = fmt.Appendf(lines, "%d %d %d\n", info.Signo, info.Code, value)
		}
		f.Write(lines)
		for i := range infos[:n] {
			if infos[i].Signo == int32(unix.SIGTERM) {
				os.Exit(0)
			}
		}
	}
}

// terms notes in file every SIGTERM instance it receives, one line each
// ("15"), through package trap (each delivery, not one per pending signal),
// and exits 0 half a second after the first.
func terms(file string) {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fail(err.Error())
	}
	if err := trap.Open(); err != nil {
		fail(err.Error())
	}
	if err := trap.Catch(unix.SIGTERM); err != nil {
		fail(err.Error())
	}
	fmt.Fprintf(f, "ready %d\n", os.Getpid())
	var infos [64]unix.Siginfo
	for {
		n, err := trap.Wait(infos[:])
		if err != nil {
			fail(err.Error())
		}
		for i := range infos[:n] {
			if infos[i].Signo == int32(unix.SIGTERM) {
				fmt.Fprintln(f, 15)
				time.AfterFunc(500*time.Millisecond, func() { os.Exit(0) })
			}
		}
	}
}

// dump prints how the process was started, one "key=value" line each.
func dump() {
	for i, arg := range os.Args {
		fmt.Printf("arg%d=%q\n", i, arg)
	}
	for _, kv := range os.Environ() {
		fmt.Printf("env=%q\n", kv)
	}
	wd, _ := os.Getwd()
	fmt.Printf("cwd=%s\n", wd)
	fd3, err := os.Readlink("/proc/self/fd/3")
	if err != nil {
		fd3 = "closed"
	}
	fmt.Printf("fd3=%s\n", fd3)
	var subreaper int32
	unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&subreaper)), 0, 0, 0)
	fmt.Printf("subreaper=%d\n", subreaper)
	status, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "SigIgn:") || strings.HasPrefix(line, "SigBlk:") {
			fmt.Println(strings.ReplaceAll(line, "\t", ""))
		}
	}
}

// wrap sets the dispositions and mask the next program starts with. The
// mask is per thread, so the goroutine stays on the thread that execs.
func wrap(ignore, block string, argv []string) {
	runtime.LockOSThread()
	for _, sig := range numbers(ignore) {
		signal.Ignore(sig)
	}
	var set unix.Sigset_t
	for _, sig := range numbers(block) {
		set.Val[(sig-1)/64] |= 1 << ((uint(sig) - 1) % 64)
	}
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, nil); err != nil {
		fail(err.Error())
	}
	execute(argv)
}

func numbers(list string) []syscall.Signal {
	var out []syscall.Signal
	if list == "-" {
		return out
	}
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			fail(err.Error())
		}
		out = append(out, syscall.Signal(n))
	}
	return out
}

// tty reports whether it owns the terminal and waits for Ctrl-C and "q".
func tty() {
	fg, err := unix.IoctlGetInt(0, unix.TIOCGPGRP)
	if err != nil {
		fail(err.Error())
	}
	ints := make(chan os.Signal, 8)
	signal.Notify(ints, unix.SIGINT)
	fmt.Printf("tty pid=%d ppid=%d pgrp=%d fg=%d\r\n", os.Getpid(), os.Getppid(), unix.Getpgrp(), fg)
	go func() {
		for range ints {
			fmt.Printf("got SIGINT\r\n")
		}
	}()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if strings.TrimSpace(in.Text()) == "q" {
			fmt.Printf("bye\r\n")
			os.Exit(5)
		}
	}
	os.Exit(6)
}

// leavegroup moves to a process group of its own (setpgid), as a program
// that does its own job control does, reports it, and reads a line from
// standard input, which the terminal answers with SIGTTIN: the new group is
// not its foreground group.
func leavegroup() {
	if err := unix.Setpgid(0, 0); err != nil {
		fail("setpgid: " + err.Error())
	}
	fmt.Printf("leavegroup pid=%d pgrp=%d\r\n", os.Getpid(), unix.Getpgrp())
	bufio.NewScanner(os.Stdin).Scan()
	os.Exit(4)
}

// zombies waits until no process in /proc is a zombie.
func zombies(timeout string) {
	d, err := time.ParseDuration(timeout)
	if err != nil {
		fail(err.Error())
	}
	deadline := time.Now().Add(d)
	for {
		n := countZombies()
		if n == 0 {
			fmt.Println("zombies=0")
			return
		}
		if time.Now().After(deadline) {
			fmt.Printf("zombies=%d\n", n)
			os.Exit(1)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func countZombies() int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) && s[i+2] == 'Z' {
			n++
		}
	}
	return n
}

// orphans starts n processes that sleep a little or not at all and exits
// without waiting: they become the init's, running or as zombies.
func orphans(count string) {
	n, err := strconv.Atoi(count)
	if err != nil {
		fail(err.Error())
	}
	attr := &syscall.ProcAttr{Files: []uintptr{0, 1, 2}}
	for i := range n {
		argv := []string{"true"}
		path := "/bin/true"
		if i%2 == 0 {
			argv, path = []string{"sleep", "0.2"}, "/bin/sleep"
		}
		if _, err := syscall.ForkExec(path, argv, attr); err != nil {
			fail(err.Error())
		}
	}
}

// root makes a setuid-root copy of the helper a process of root: real,
// effective and saved ids all 0, so that no other user may signal it.
func root(argv []string) {
	runtime.LockOSThread()
	if err := unix.Setresgid(0, 0, 0); err != nil {
		fail("unable to set the group ids to 0: " + err.Error())
	}
	if err := unix.Setresuid(0, 0, 0); err != nil {
		fail("unable to set the user ids to 0 (is the helper setuid root?): " + err.Error())
	}
	execute(argv)
}

// nosubreaper makes prctl(PR_SET_CHILD_SUBREAPER, ...) fail with EINVAL.
func nosubreaper(argv []string) {
	deny(unix.SYS_PRCTL, unix.PR_SET_CHILD_SUBREAPER, unix.EINVAL)
	execute(argv)
}

// nopidfdsignal makes pidfd_send_signal(2) fail with EPERM, as a seccomp
// profile that does not allow it does.
func nopidfdsignal(argv []string) {
	deny(unix.SYS_PIDFD_SEND_SIGNAL, anyArgument, unix.EPERM)
	execute(argv)
}

// anyArgument makes deny refuse a system call whatever its arguments.
const anyArgument = -1

// deny installs a seccomp filter, kept across exec and inherited by
// children, that fails the system call nr with errno when its first argument
// is arg0 (or whatever it is, with anyArgument).
func deny(nr uint32, arg0 int64, errno unix.Errno) {
	const (
		load  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		equal = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
	)
	// struct seccomp_data: the syscall number at 0, the low half of the
	// first argument at 16 (little endian).
	filter := []unix.SockFilter{
		{Code: load, K: 0},
		{Code: equal, Jt: 0, Jf: 3, K: nr},
		{Code: load, K: 16},
		{Code: equal, Jt: 0, Jf: 1, K: uint32(arg0)},
	}
	if arg0 == anyArgument {
		filter = []unix.SockFilter{
			{Code: load, K: 0},
			{Code: equal, Jt: 0, Jf: 1, K: nr},
		}
	}
	filter = append(filter,
		unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(errno)},
		unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW})
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog))); errno != 0 {
		fail("unable to install the seccomp filter: " + errno.Error())
	}
}

// execute execs argv, found on PATH.
func execute(argv []string) {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fail(err.Error())
	}
	if err := unix.Exec(path, argv, os.Environ()); err != nil {
		fail(err.Error())
	}
}

// exactenv execs the program after "--" with the entries before it as its
// whole environment (os/exec would drop duplicate names).
func exactenv(args []string) {
	for i, arg := range args {
		if arg == "--" && i+1 < len(args) {
			argv := args[i+1:]
			fail(unix.Exec(argv[0], argv, args[:i]).Error())
		}
	}
	fail("usage: testhelper exactenv ENTRY... -- PROG ARG...")
}

// forkbomb ignores SIGTERM and forks in a loop, retrying at once when fork
// fails, and so does every child: each is a copy of this thread alone,
// running this loop, which makes raw system calls only and never enters the
// Go runtime again. Like an application's, each copy has memory of its own
// (32 MiB, shared until written), which makes every fork, also a refused
// one, copy its page tables.
func forkbomb() {
	signal.Ignore(unix.SIGTERM)
	ballast := make([]byte, 32<<20)
	for i := 0; i < len(ballast); i += os.Getpagesize() {
		ballast[i] = 1
	}
	for {
		unix.RawSyscall(unix.SYS_CLONE, uintptr(unix.SIGCHLD), 0, 0)
	}
}
