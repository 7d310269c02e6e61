// Command init is a PID 1 for containers: it runs one program as its child,
// forwards signals to it, reaps every zombie, and exits the way the program
// did. See the README for the configuration (BPL_INIT_*).
//
//	init [--] PROGRAM [ARG...]
//
// The settings below keep the Go runtime from sizing GOMAXPROCS by the
// cgroup CPU limit and from waking up periodically to follow changes of that
// limit; under a limit on processes the init runs on one P whatever the
// node's CPUs (see supervisor/threads.go).
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0
package main

import (
	"os"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pid1-buildpacks/init/init/internal/config"
	"github.com/pid1-buildpacks/init/init/internal/logger"
	"github.com/pid1-buildpacks/init/init/internal/program"
	"github.com/pid1-buildpacks/init/init/internal/supervisor"
)

const usage = "usage: init [--] PROGRAM [ARG...]"

// exitUsage is the exit code for bad invocations and bad configuration.
const exitUsage = 2

// flushTimeout bounds how long the init waits, before it exits or execs, for
// its last messages to be written to a standard error that does not take
// them.
const flushTimeout = 500 * time.Millisecond

func main() {
	runtime.GOMAXPROCS(1)
	code := run(os.Args[1:])
	logger.Flush(flushTimeout)
	os.Exit(code)
}

func run(args []string) int {
	log := logger.Logger{}
	cfg, err := config.Load(syscall.Getenv)
	if err != nil {
		log.Error(err.Error())
		return exitUsage
	}
	log.Level = cfg.LogLevel

	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		log.Error(usage)
		return exitUsage
	}

	pathEnv, pathSet := syscall.Getenv("PATH")
	path, err := program.LookPath(args[0], pathEnv, pathSet)
	if err != nil {
		log.Error(err.Error())
		return err.(*program.Error).Code
	}
	env := program.Environ()

	if !cfg.Enabled {
		log.Info("disabled by BPL_INIT_ENABLED=false, executing ", path, " directly")
		logger.Flush(flushTimeout)
		err := unix.Exec(path, args, env)
		perr := program.ExecError(path, err).(*program.Error)
		log.Error(perr.Error())
		return perr.Code
	}

	s := supervisor.Supervisor{Config: cfg, Log: log}
	return s.Run(path, args, env)
}
