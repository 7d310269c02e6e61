// Command detect is the buildpack's detect executable.
package main

import (
	"os"

	"github.com/paketo-buildpacks/libpak/v2"
	"github.com/paketo-buildpacks/libpak/v2/log"

	"github.com/pid1-buildpacks/init/internal/buildpack"
)

func main() {
	libpak.Detect(buildpack.Detect{Logger: log.NewPaketoLogger(os.Stdout)}.Detect)
}
