// Command build is the buildpack's build executable.
package main

import (
	"os"

	"github.com/paketo-buildpacks/libpak/v2"
	"github.com/paketo-buildpacks/libpak/v2/log"

	"github.com/pid1-buildpacks/init/internal/buildpack"
)

func main() {
	libpak.Build(buildpack.Build{Logger: log.NewPaketoLogger(os.Stdout)}.Build)
}
