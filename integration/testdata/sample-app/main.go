// Command sample-app is the application the integration tests and the demo build into
// images. Like many real servers it is a poor PID 1: it never waits for processes it did not
// start, so orphans reparented to it stay zombies, and it only knows how to stop on SIGTERM.
//
//	sample-app serve [ARG...]    print who it is, then print each SIGHUP, SIGQUIT, SIGUSR1 and
//	                             SIGUSR2 it receives; exit 0 on SIGTERM, 130 on SIGINT (Ctrl-C)
//	sample-app echo [ARG...]     print its arguments and working directory, exit 0
//	sample-app leak [INTERVAL]   every INTERVAL (default 20ms) start `sh -c 'sleep 0 &'`,
//	                             whose sleep is orphaned; print a status line every second
//	sample-app exit CODE         exit with CODE
//	sample-app kill SIGNAL       kill itself with SIGNAL (a number)
//	sample-app zombies           print the number of zombie processes in the PID namespace
//
// It is built statically (CGO_ENABLED=0) by scripts/apps.sh, so it runs on the busybox run image.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: sample-app serve|echo|leak|exit|kill|zombies [ARG...]")
		os.Exit(2)
	}
	args := os.Args[2:]
	switch os.Args[1] {
	case "serve":
		serve(args)
	case "echo":
		wd, _ := os.Getwd()
		fmt.Printf("args=%q cwd=%s\n", args, wd)
	case "leak":
		leak(args)
	case "exit":
		code, err := strconv.Atoi(first(args))
		if err != nil {
			fmt.Fprintf(os.Stderr, "sample-app exit: want a number, got %q\n", first(args))
			os.Exit(2)
		}
		os.Exit(code)
	case "kill":
		n, err := strconv.Atoi(first(args))
		if err != nil {
			fmt.Fprintf(os.Stderr, "sample-app kill: want a signal number, got %q\n", first(args))
			os.Exit(2)
		}
		signal.Reset()
		_ = syscall.Kill(os.Getpid(), syscall.Signal(n))
		time.Sleep(5 * time.Second)
		fmt.Fprintln(os.Stderr, "sample-app kill: still alive")
		os.Exit(1)
	case "zombies":
		fmt.Println(countZombies())
	default:
		fmt.Fprintf(os.Stderr, "sample-app: unknown mode %q\n", os.Args[1])
		os.Exit(2)
	}
}

func first(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

func serve(args []string) {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	wd, _ := os.Getwd()
	fmt.Printf("serve: pid=%d ppid=%d args=%q cwd=%s\n", os.Getpid(), os.Getppid(), args, wd)
	for s := range signals {
		switch s {
		case syscall.SIGTERM:
			fmt.Printf("serve: got %v, exiting\n", s)
			return
		case syscall.SIGINT:
			fmt.Printf("serve: got %v, exiting 130\n", s)
			os.Exit(130)
		default:
			fmt.Printf("serve: got %v\n", s)
		}
	}
}

func leak(args []string) {
	interval := 20 * time.Millisecond
	if len(args) > 0 {
		d, err := time.ParseDuration(args[0])
		if err != nil {
			fmt.Fprintf(os.Stderr, "sample-app leak: bad interval %q: %v\n", args[0], err)
			os.Exit(2)
		}
		interval = d
	}
	terminated := make(chan os.Signal, 1)
	signal.Notify(terminated, syscall.SIGTERM, syscall.SIGINT)
	fmt.Printf("leak: pid=%d, starting `sh -c 'sleep 0 &'` every %v\n", os.Getpid(), interval)

	spawned, failed := 0, 0
	var lastErr error
	tick := time.NewTicker(interval)
	report := time.NewTicker(time.Second)
	for {
		select {
		case <-tick.C:
			// The shell exits at once; its sleep is orphaned and reparented to PID 1.
			if out, err := exec.Command("sh", "-c", "sleep 0 &").CombinedOutput(); err != nil {
				failed++
				lastErr = err
				if msg := strings.TrimSpace(string(out)); msg != "" {
					lastErr = fmt.Errorf("%w: %s", err, msg)
				}
			} else {
				spawned++
			}
		case <-report.C:
			line := fmt.Sprintf("leak: spawned=%d failed=%d zombies=%d", spawned, failed, countZombies())
			if lastErr != nil {
				line += fmt.Sprintf(" last-error=%q", lastErr.Error())
				lastErr = nil
			}
			fmt.Println(line)
		case s := <-terminated:
			fmt.Printf("leak: got %v, exiting: spawned=%d failed=%d zombies=%d\n", s, spawned, failed, countZombies())
			return
		}
	}
}

// countZombies counts the processes in state Z in /proc.
func countZombies() int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	n := 0
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// The state follows the command name, which is in parentheses and may contain spaces.
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) && s[i+2] == 'Z' {
			n++
		}
	}
	return n
}
