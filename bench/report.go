package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// report gathers every measurement of one run and prints it as Markdown.
type report struct {
	cfg        config
	inits      []*initProgram
	began      time.Time
	elapsed    time.Duration
	truePath   string
	loadStart  string
	warnings   map[string]string
	idle       map[string]idleResult
	startChild *startupResult
	startPID1  *startupResult
	reap       map[string]reapResult
	forkLoad   map[string]forkLoadResult
	signals    map[string]signalResult
}

func us(d time.Duration) string  { return fmt.Sprintf("%.0f µs", float64(d)/1e3) }
func us1(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d)/1e3) }
func ms(d time.Duration) string  { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }

func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func machine() string {
	var parts []string
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				parts = append(parts, strings.TrimSpace(v))
				break
			}
		}
	}
	parts = append(parts, fmt.Sprintf("%d CPUs", runtime.NumCPU()))
	var info unix.Sysinfo_t
	if unix.Sysinfo(&info) == nil {
		parts = append(parts, fmt.Sprintf("%.1f GiB RAM", float64(info.Totalram)*float64(info.Unit)/(1<<30)))
	}
	var uts unix.Utsname
	if unix.Uname(&uts) == nil {
		parts = append(parts, "Linux "+unix.ByteSliceToString(uts.Release[:]))
	}
	if data, err := os.ReadFile("/etc/os-release"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
				parts = append(parts, strings.Trim(v, `"`))
			}
		}
	}
	return strings.Join(parts, ", ")
}

// overhead is the init's time at percentile p minus bare /bin/true's.
func (r *startupResult) overhead(name string, p float64) time.Duration {
	return r.times[name].percentile(p) - r.times["bare"].percentile(p)
}

// mode says how the inits ran: "as child" or "as PID 1".
func (r *startupResult) mode() string {
	if r.asPID1 {
		return "as PID 1"
	}
	return "as child"
}

// ratio is the init's median overhead over ref's, or 0 when ref was not measured or has
// no overhead.
func (r *startupResult) ratio(name, ref string) float64 {
	if _, ok := r.times[ref]; !ok {
		return 0
	}
	d := r.overhead(ref, 50)
	if d <= 0 {
		return 0
	}
	return float64(r.overhead(name, 50)) / float64(d)
}

// times formats a ratio, or "–" when there is no reference to divide by.
func times(ratio float64) string {
	if ratio == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", ratio)
}

// goFloor returns the Go floor when it was measured.
func (rep *report) goFloor() *initProgram {
	for _, in := range rep.inits {
		if in.name == goFloorName {
			return in
		}
	}
	return nil
}

// rssRatio is the init's RSS as PID 1 over the Go floor's, or 0 when the floor was not
// measured.
func (rep *report) rssRatio(name string) float64 {
	floor, ok := rep.idle[goFloorName]
	if !ok || floor.rssKiB == 0 {
		return 0
	}
	return float64(rep.idle[name].rssKiB) / float64(floor.rssKiB)
}

func (rep *report) print(w io.Writer) {
	c := rep.cfg
	fmt.Fprintf(w, "### Init benchmark, %s\n\n", rep.began.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "Machine: %s. Harness run time: %s. Load average (1/5/15 min) at start %s, at end %s.", machine(), rep.elapsed.Round(time.Second), rep.loadStart, loadAverage())
	if rep.idle != nil {
		fmt.Fprintf(w, " CPU busy with other work during the idle window: %.0f%% of all CPUs.", backgroundLoad*100)
	}
	fmt.Fprint(w, "\n\n")

	fmt.Fprintf(w, "**Footprint** (each init as PID 1 of its own PID namespace with `sleep` as its child; RSS (VmRSS; split into RssAnon and RssFile, the latter being page-cache pages of the binary and shared libraries, shared with other processes) and threads from /proc/PID/status after %s settle + %s idle; wake-ups = voluntary+involuntary context switches summed over all threads during the %s window)\n\n", c.settle, c.idle, c.idle)
	fmt.Fprintln(w, "| init | version | binary size | linkage | RSS as PID 1 | × Go floor | of which anon / file | threads | idle wake-ups / "+c.idle.String()+" |")
	fmt.Fprintln(w, "|---|---|---:|---|---:|---:|---:|---:|---:|")
	for _, in := range rep.inits {
		link := "static"
		if !in.static {
			link = "dynamic (" + strings.Join(in.needed, ", ") + ")"
		}
		rss, ratio, split, threads, wakeups := "not run", "not run", "not run", "not run", "not run"
		if id, ok := rep.idle[in.name]; ok {
			rss, threads, wakeups = fmt.Sprintf("%d KiB", id.rssKiB), fmt.Sprint(id.threads), fmt.Sprint(id.wakeups)
			ratio = times(rep.rssRatio(in.name))
			split = fmt.Sprintf("%d / %d KiB", id.anonKiB, id.fileKiB)
		}
		fmt.Fprintf(w, "| %s | %s | %d B (%.2f MB) | %s | %s | %s | %s | %s | %s |\n",
			in.name, in.version, in.size, float64(in.size)/1e6, link, rss, ratio, split, threads, wakeups)
	}
	if rep.startChild != nil {
		rep.printStartup(w)
	}
	if len(rep.reap) > 0 || len(rep.forkLoad) > 0 || len(rep.signals) > 0 {
		rep.printReapSignals(w)
	}
	if rep.idle != nil && rep.startChild != nil && len(rep.reap) > 0 && len(rep.signals) > 0 {
		rep.printTargets(w)
	} else {
		fmt.Fprintln(w, "\n**Targets: not checked -- not every phase ran.**")
	}
	rep.printInvocations(w)
}

func (rep *report) printStartup(w io.Writer) {
	c := rep.cfg

	fmt.Fprintf(w, "\n**Start-up** (`INIT -- %s`, wall time fork to wait4, %d runs per row after %d warm-up runs, round-robin interleaved; overhead = init minus bare `%s` at the same percentile; ratios = median overhead / the Go floor's and / tini-static's)\n\n", rep.truePath, c.runs, c.warmup, rep.truePath)
	fmt.Fprintln(w, "| init | as child: median / p90 | overhead median / p90 | × Go floor | × tini-static | as PID 1 (new PID ns): median / p90 | overhead median / p90 | × Go floor | × tini-static |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, name := range rep.startChild.order {
		a, b := rep.startChild, rep.startPID1
		if name == "bare" {
			fmt.Fprintf(w, "| bare `true` | %s / %s | – | – | – | %s / %s | – | – | – |\n",
				us(a.times[name].median()), us(a.times[name].percentile(90)),
				us(b.times[name].median()), us(b.times[name].percentile(90)))
			continue
		}
		fmt.Fprintf(w, "| %s | %s / %s | %s / %s | %s | %s | %s / %s | %s / %s | %s | %s |\n", name,
			us(a.times[name].median()), us(a.times[name].percentile(90)),
			us(a.overhead(name, 50)), us(a.overhead(name, 90)), times(a.ratio(name, goFloorName)), times(a.ratio(name, "tini-static")),
			us(b.times[name].median()), us(b.times[name].percentile(90)),
			us(b.overhead(name, 50)), us(b.overhead(name, 90)), times(b.ratio(name, goFloorName)), times(b.ratio(name, "tini-static")))
	}
}

func (rep *report) printReapSignals(w io.Writer) {
	c := rep.cfg
	if len(rep.reap) > 0 {
		fmt.Fprintf(w, "\n**Reaping %d orphans** (each init as PID 1 of a PID namespace; the orphans are reparented to PID 1 and released %d at a time, batches interleaved round-robin across inits; reap time = sum over batches of the time from release until the last orphan of the batch is gone from the process table; forking, the same work under every init, is not included; init CPU = run time of all the init's threads (schedstat) during the batches)\n\n", c.orphans, c.batch)
		fmt.Fprintln(w, "| init | reap time | batch median / slowest | init CPU while reaping |")
		fmt.Fprintln(w, "|---|---:|---:|---:|")
		for _, in := range rep.inits {
			if in.waitsOnly {
				fmt.Fprintf(w, "| %s | n/a (does not reap orphans) | – | – |\n", in.name)
				continue
			}
			r := rep.reap[in.name]
			fmt.Fprintf(w, "| %s | %s | %s / %s | %s |\n", in.name,
				ms(r.batches.sum()), ms(r.batches.median()), ms(r.batches.percentile(100)), ms(r.initCPU))
		}
	}
	if len(rep.forkLoad) > 0 {
		fmt.Fprintf(w, "\n**%d fork() orphans one after the other** (each init as PID 1; a middle child forks the orphan and both exit at once, so the init is woken for each; init CPU = run time of all its threads (schedstat), context switches summed over its threads, RSS before and after the stream)\n\n", c.forkOrphans)
		fmt.Fprintln(w, "| init | init CPU | × tini-static's | context switches | RSS before → after |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
		base := rep.forkLoad["tini-static"].cpu
		for _, in := range rep.inits {
			r, ok := rep.forkLoad[in.name]
			if !ok {
				continue
			}
			ratio := "–"
			if base > 0 {
				ratio = fmt.Sprintf("%.2f×", float64(r.cpu)/float64(base))
			}
			fmt.Fprintf(w, "| %s | %s | %s | %d | %d → %d KiB (%.2f×) |\n", in.name, ms(r.cpu), ratio, r.switches,
				r.rssBefore, r.rssAfter, float64(r.rssAfter)/float64(max(1, r.rssBefore)))
		}
	}
	if len(rep.signals) == 0 {
		return
	}
	fmt.Fprintf(w, "\n**Signal forwarding** (%d × SIGUSR1 per init, sent to the init's host pid from outside its PID namespace, one at a time %s apart, round-robin over all inits. Receipt = the child's Go handler reading CLOCK_MONOTONIC; the no-init row sends straight to the child and is the floor of that path. Kernel columns, from a tracefs instance (signal:signal_generate and signal:signal_deliver, mono clock): from the harness's kill(2) queuing the signal for the init to the kernel delivering it to the child's handler, and from that kill(2) to the init's own kill(2) queuing it for the child = the time spent inside the init)\n\n", c.signals, c.signalPause)
	fmt.Fprintln(w, "| init | send→receipt p50 / p99 | p50 over no-init | max | lost | kernel: kill→child delivery p50 / p99 | kernel: inside the init p50 / p99 |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	d := rep.signals["direct"]
	kernel := func(s signalResult) (string, string) {
		if s.traceNote != "" {
			return "n/a", "n/a"
		}
		in := "–"
		if len(s.inInit) > 0 {
			in = us1(s.inInit.median()) + " / " + us1(s.inInit.percentile(99))
		}
		return us1(s.kernel.median()) + " / " + us1(s.kernel.percentile(99)), in
	}
	k, _ := kernel(d)
	fmt.Fprintf(w, "| no init (signal straight to the child) | %s / %s | – | %s | %d | %s | – |\n",
		us1(d.latencies.median()), us1(d.latencies.percentile(99)), us1(d.latencies.percentile(100)), d.lost, k)
	var notes []string
	if d.traceNote != "" {
		notes = append(notes, "no init: "+d.traceNote)
	}
	for _, in := range rep.inits {
		if in.waitsOnly {
			fmt.Fprintf(w, "| %s | n/a (does not forward signals) | – | – | – | – | – |\n", in.name)
			continue
		}
		s := rep.signals[in.name]
		k, i := kernel(s)
		fmt.Fprintf(w, "| %s | %s / %s | %s | %s | %d | %s | %s |\n", in.name,
			us1(s.latencies.median()), us1(s.latencies.percentile(99)), us1(s.latencies.median()-d.latencies.median()),
			us1(s.latencies.percentile(100)), s.lost, k, i)
		if s.traceNote != "" {
			notes = append(notes, in.name+": "+s.traceNote)
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\nKernel columns n/a: %s\n", strings.Join(notes, "; "))
	}
}

func (rep *report) printInvocations(w io.Writer) {
	fmt.Fprintln(w, "\nInvocations:")
	for _, in := range rep.inits {
		fmt.Fprintf(w, "- %s: `%s` %s, sha256 %s\n", in.name, in.realPth, in.invocation, in.sha256[:16])
	}
	for _, in := range rep.inits {
		if msg, ok := rep.warnings[in.name]; ok {
			fmt.Fprintf(w, "- stderr of `%s` as a child (once, before timing): %q\n", strings.Join(in.childArgs(rep.truePath), " "), msg)
		}
	}
}

// rssLineKiB is the line held for our init's RSS as PID 1: about 2.3 MiB.
const rssLineKiB = 2.3 * 1024

// startupLine is the line held for our init's median start-up overhead: about 1.5× the Go
// floor's.
const startupLine = 1.5

// printTargets checks our init against the line the project holds, allowing the run-to-run
// noise band where the line is "about" or "on par", and prints the figures beside the line
// without a verdict.
func (rep *report) printTargets(w io.Writer) {
	var ours *initProgram
	for _, in := range rep.inits {
		if in.name == "ours" {
			ours = in
		}
	}
	fmt.Fprintln(w)
	if ours == nil {
		fmt.Fprintln(w, "**Targets: not checked -- our init was not measured (no --init given).**")
		return
	}
	verdict := func(ok bool) string {
		if ok {
			return "PASS"
		}
		return "FAIL"
	}
	tol := rep.cfg.tolerance
	fmt.Fprintf(w, "**Targets for ours** (the line held so far; \"about\" and \"on par\" allow %.0f%% run-to-run noise)\n\n", tol*100)
	fmt.Fprintln(w, "| target | ours | reference | result |")
	fmt.Fprintln(w, "|---|---:|---:|---|")
	fmt.Fprintf(w, "| stripped static binary <= 1.6 MB | %.2f MB, %s | 1.60 MB | %s |\n",
		float64(ours.size)/1e6, map[bool]string{true: "static", false: "dynamic"}[ours.static], verdict(ours.static && ours.size <= 1_600_000))
	id := rep.idle["ours"]
	fmt.Fprintf(w, "| RSS as PID 1 about 2.3 MiB | %d KiB (%.2f MiB; %s the Go floor's) | %.0f KiB, + %.0f%% = %.0f KiB | %s |\n",
		id.rssKiB, float64(id.rssKiB)/1024, times(rep.rssRatio("ours")), rssLineKiB, tol*100, rssLineKiB*(1+tol), verdict(float64(id.rssKiB) <= rssLineKiB*(1+tol)))
	floor := rep.goFloor()
	for _, s := range []*startupResult{rep.startChild, rep.startPID1} {
		mode := s.mode()
		if floor == nil {
			fmt.Fprintf(w, "| start-up overhead about %.1f× the Go floor's (%s) | %s | Go floor not measured | not checked |\n", startupLine, mode, us(s.overhead("ours", 50)))
			continue
		}
		fmt.Fprintf(w, "| start-up overhead about %.1f× the Go floor's (%s) | %s (%s) | %s, × %.1f + %.0f%% = %.2f× | %s |\n", startupLine, mode,
			us(s.overhead("ours", 50)), times(s.ratio("ours", goFloorName)), us(s.overhead(goFloorName, 50)), startupLine, tol*100, startupLine*(1+tol),
			verdict(s.ratio("ours", goFloorName) <= startupLine*(1+tol)))
	}
	or, tr := rep.reap["ours"].batches.sum(), rep.reap["tini"].batches.sum()
	fmt.Fprintf(w, "| reap time on par with tini's | %s | %s (ratio %.2f) | %s |\n", ms(or), ms(tr), float64(or)/float64(tr), verdict(float64(or) <= float64(tr)*(1+tol)))
	lost := rep.signals["ours"].lost
	fmt.Fprintf(w, "| no signal lost | %d lost of %d | 0 | %s |\n", lost, rep.cfg.signals, verdict(lost == 0))

	fmt.Fprint(w, "\n**Beside the line** (measured, no target)\n\n")
	fmt.Fprintln(w, "| figure | ours | reference |")
	fmt.Fprintln(w, "|---|---:|---:|")
	fmt.Fprintf(w, "| idle wake-ups | %d in %s | tini: %d |\n", id.wakeups, rep.cfg.idle, rep.idle["tini"].wakeups)
	for _, p := range []float64{50, 99} {
		o, t := rep.signals["ours"].latencies.percentile(p), rep.signals["tini"].latencies.percentile(p)
		fmt.Fprintf(w, "| signal latency p%.0f | %s | tini: %s (ratio %.2f) |\n", p, us1(o), us1(t), float64(o)/float64(t))
	}
	if o, t := rep.signals["ours"].inInit, rep.signals["tini"].inInit; len(o) > 0 && len(t) > 0 {
		fmt.Fprintf(w, "| time inside the init (kernel trace) p50 | %s | tini: %s (ratio %.2f) |\n", us1(o.median()), us1(t.median()), float64(o.median())/float64(t.median()))
	}
	for _, s := range []*startupResult{rep.startChild, rep.startPID1} {
		mode := s.mode()
		fmt.Fprintf(w, "| start-up overhead (%s) | %s | tini-static: %s (ratio %.2f) |\n", mode,
			us(s.overhead("ours", 50)), us(s.overhead("tini-static", 50)), s.ratio("ours", "tini-static"))
	}
}
