// Command bench measures our init side by side with the Go floor (bench/gofloor, a Go
// program that only fork/execs and waits), tini, tini-static, dumb-init and catatonit and
// prints the figures as Markdown tables: binary size, resident memory and threads as PID 1,
// idle wake-ups, start-up overhead, orphan reaping and signal forwarding latency. It needs
// root (PID namespaces). scripts/bench.sh installs the peers, builds the init and the Go
// floor and runs it.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// config is what one run measures and how much; see the flags in benchMain.
type config struct {
	ourPath, ourVersion                   string
	goFloor, goFloorVersion               string
	tini, tiniStatic, dumbInit, catatonit string
	runs, warmup, orphans, batch, signals int
	forkOrphans                           int
	idle, settle, signalPause             time.Duration
	workDir                               string
	tolerance                             float64
	extra                                 []string
	phases                                map[string]bool
}

// main runs the benchmark, or one of the modes the benchmark runs this binary in under an
// init: the orphan forker and the signal receiver.
func main() {
	args := os.Args[1:]
	var err error
	switch {
	case len(args) > 0 && args[0] == "__forker":
		err = forkerMain(args[1:])
	case len(args) > 0 && args[0] == "__stream":
		err = streamMain(args[1:])
	case len(args) > 0 && args[0] == "__receiver":
		err = receiverMain(args[1:])
	default:
		err = benchMain(args)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

// debugf prints a progress detail on stderr when BENCH_DEBUG=1.
func debugf(format string, args ...any) {
	if os.Getenv("BENCH_DEBUG") == "1" {
		fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	}
}

func envInt(name string, def int) int {
	if v, ok := os.LookupEnv(name); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "bench: %s=%q is not a positive integer\n", name, v)
			os.Exit(2)
		}
		return n
	}
	return def
}

func benchMain(args []string) error {
	quick := os.Getenv("BENCH_QUICK") == "1"
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	c := config{}
	fs.StringVar(&c.ourPath, "init", "", "path to our init binary (empty: peers only)")
	fs.StringVar(&c.ourVersion, "init-version", "", "version string of our init for the report")
	fs.StringVar(&c.goFloor, "gofloor", "", "path to the Go floor binary built from bench/gofloor (empty: not measured)")
	fs.StringVar(&c.goFloorVersion, "gofloor-version", "", "version string of the Go floor for the report")
	fs.StringVar(&c.tini, "tini", "/usr/bin/tini", "tini binary")
	fs.StringVar(&c.tiniStatic, "tini-static", "/usr/bin/tini-static", "tini-static binary")
	fs.StringVar(&c.dumbInit, "dumb-init", "/usr/bin/dumb-init", "dumb-init binary")
	fs.StringVar(&c.catatonit, "catatonit", "/usr/bin/catatonit", "catatonit binary")
	fs.BoolVar(&quick, "quick", quick, "smoke run with few iterations (also BENCH_QUICK=1)")
	fs.IntVar(&c.runs, "runs", 0, "start-up runs per init and mode (default 400, quick 40; also BENCH_RUNS)")
	fs.IntVar(&c.orphans, "orphans", 0, "orphans to reap per init (default 20000, quick 2000)")
	fs.IntVar(&c.batch, "batch", 1000, "orphans released at once")
	fs.IntVar(&c.forkOrphans, "fork-orphans", 0, "orphans made one after the other with fork() per init (default 30000, quick 3000)")
	fs.IntVar(&c.signals, "signals", 0, "signals per init (default 1000, quick 100)")
	fs.DurationVar(&c.idle, "idle", 0, "idle window (default 10s, quick 2s)")
	fs.DurationVar(&c.settle, "settle", time.Second, "wait after start before the idle window")
	fs.DurationVar(&c.signalPause, "signal-pause", time.Millisecond, "pause between signals")
	fs.StringVar(&c.workDir, "work", "", "scratch directory (default: a new one under /tmp)")
	fs.Float64Var(&c.tolerance, "tolerance", 0.10, "noise band for the 'no worse than tini' targets")
	fs.Func("also", "also measure `NAME=PATH`, another init build run as PATH -- PROG (repeatable; for comparing builds)", func(v string) error {
		name, path, ok := strings.Cut(v, "=")
		if !ok || name == "" || path == "" {
			return fmt.Errorf("expected NAME=PATH, got %q", v)
		}
		c.extra = append(c.extra, v)
		return nil
	})
	phaseList := fs.String("phases", "idle,startup,reap,forkload,signals", "phases to run, comma-separated (targets are checked only after all)")
	if err := fs.Parse(args); err == flag.ErrHelp {
		os.Exit(0)
	} else if err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	c.phases = map[string]bool{}
	for _, p := range strings.Split(*phaseList, ",") {
		switch p {
		case "idle", "startup", "reap", "forkload", "signals":
			c.phases[p] = true
		default:
			return fmt.Errorf("-phases: unknown phase %q, expected a comma-separated subset of idle,startup,reap,forkload,signals", p)
		}
	}
	pick := func(v *int, normal, small int) {
		if *v == 0 {
			*v = normal
			if quick {
				*v = small
			}
		}
	}
	pick(&c.runs, envInt("BENCH_RUNS", 400), envInt("BENCH_RUNS", 40))
	pick(&c.orphans, 20000, 2000)
	pick(&c.forkOrphans, 30000, 3000)
	pick(&c.signals, 1000, 100)
	if c.idle == 0 {
		c.idle = 10 * time.Second
		if quick {
			c.idle = 2 * time.Second
		}
	}
	c.warmup = max(5, c.runs/20)
	if c.batch < 1 || c.orphans%c.batch != 0 {
		return fmt.Errorf("-orphans %d must be a multiple of -batch %d", c.orphans, c.batch)
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("the benchmark needs root for PID namespaces (unshare --pid); running as uid %d", os.Geteuid())
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		return fmt.Errorf("unshare (util-linux) is required: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("unable to find the harness binary: %w", err)
	}
	if c.workDir == "" {
		if c.workDir, err = os.MkdirTemp("", "init-bench-"); err != nil {
			return fmt.Errorf("unable to make a scratch directory: %w", err)
		}
		defer os.RemoveAll(c.workDir)
	} else if err := os.MkdirAll(c.workDir, 0o755); err != nil {
		return fmt.Errorf("unable to make %s: %w", c.workDir, err)
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		return fmt.Errorf("unable to find true: %w", err)
	}
	if truePath, err = filepath.Abs(truePath); err != nil {
		return err
	}

	began := time.Now()
	inits, err := newInits(c.ourPath, c.ourVersion, c.goFloor, c.goFloorVersion, c.tini, c.tiniStatic, c.dumbInit, c.catatonit, c.extra)
	if err != nil {
		return err
	}
	rep := &report{cfg: c, inits: inits, began: began.UTC(), truePath: truePath, loadStart: loadAverage()}
	if rep.warnings, err = preflight(inits, truePath); err != nil {
		return err
	}

	phases := []struct {
		name, title string
		run         func() error
	}{
		{"idle", fmt.Sprintf("RSS, threads and idle wake-ups over %s", c.idle), func() (err error) {
			rep.idle, err = measureIdle(inits, c.settle, c.idle)
			return err
		}},
		{"startup", fmt.Sprintf("start-up, as a child, %d runs each", c.runs), func() (err error) {
			rep.startChild, err = measureStartup(inits, truePath, c.runs, c.warmup, false)
			return err
		}},
		{"startup", fmt.Sprintf("start-up, as PID 1, %d runs each", c.runs), func() (err error) {
			rep.startPID1, err = measureStartup(inits, truePath, c.runs, c.warmup, true)
			return err
		}},
		{"reap", fmt.Sprintf("reaping %d orphans per init, %d at a time, interleaved", c.orphans, c.batch), func() (err error) {
			rep.reap, err = measureReaping(supervisors(inits), self, c.orphans, c.batch)
			return err
		}},
		{"forkload", fmt.Sprintf("%d fork() orphans one after the other per init", c.forkOrphans), func() (err error) {
			rep.forkLoad, err = measureForkLoad(supervisors(inits), self, c.forkOrphans)
			return err
		}},
		{"signals", fmt.Sprintf("signal latency, %d signals per init, interleaved", c.signals), func() (err error) {
			rep.signals, err = measureSignals(supervisors(inits), self, c.workDir, c.signals, c.signalPause)
			return err
		}},
	}
	for _, p := range phases {
		if !c.phases[p.name] {
			continue
		}
		start := time.Now()
		fmt.Fprintf(os.Stderr, "bench: %s ...\n", p.title)
		if err := p.run(); err != nil {
			return fmt.Errorf("%s: %w", p.title, err)
		}
		fmt.Fprintf(os.Stderr, "bench: %s done in %s\n", p.title, time.Since(start).Round(time.Millisecond))
	}
	rep.elapsed = time.Since(began)
	rep.print(os.Stdout)
	return nil
}

// preflight runs each init once as a child with /bin/true and returns what it printed on
// stderr, so warnings are reported rather than hidden by the timed runs.
func preflight(inits []*initProgram, truePath string) (map[string]string, error) {
	warnings := map[string]string{}
	for _, in := range inits {
		argv := in.childArgs(truePath)
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("%s cannot run %s: %w (output %q)", in.name, truePath, err, out)
		}
		if s := strings.TrimSpace(string(out)); s != "" {
			warnings[in.name] = s
		}
	}
	return warnings, nil
}
