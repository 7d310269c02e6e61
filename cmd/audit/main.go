// Command audit tells builder owners and platforms whether a builder enforces the init on every
// image it makes (audit builder REF) or whether every process type of an app image starts
// through an init (audit image REF). Exit code 0: covered, 1: not covered, 2: bad input.
package main

import (
	"os"

	"github.com/pid1-buildpacks/init/internal/audit"
)

func main() {
	os.Exit(audit.Main(os.Args[1:], audit.Daemon, audit.Registry, os.Stdout, os.Stderr))
}
