// Command publish is the release tool scripts/publish.sh runs; it is not part of the buildpack.
//
//	publish check REPOSITORY BUILDPACK_TOML
//	    prints the version buildpack.toml declares; fails when the registry does not answer or
//	    when REPOSITORY is not a repository name (no tag, no digest, no scheme)
//	publish push REPOSITORY BUILDPACK_TOML CNB...
//	    pushes the .cnb files (one per platform) as one OCI image index, checks each platform's
//	    image in the registry, tags it with the version and MAJOR.MINOR, MAJOR, latest, and
//	    prints the index digest on stdout
//
// Progress goes to stderr; an error is one line on stderr and exit code 1 (2 for bad usage).
// Credentials come from the Docker configuration (~/.docker/config.json), as for docker push.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pid1-buildpacks/init/internal/release"
)

const usage = "usage: publish check REPOSITORY BUILDPACK_TOML | publish push REPOSITORY BUILDPACK_TOML CNB..."

func main() {
	if len(os.Args) < 4 || (os.Args[1] != "check" && os.Args[1] != "push") || (os.Args[1] == "push" && len(os.Args) < 5) {
		fail(2, usage)
	}
	repository, err := parseRepository(os.Args[2])
	if err != nil {
		fail(2, err.Error())
	}
	version, err := readVersion(os.Args[3])
	if err != nil {
		fail(1, err.Error())
	}
	p := release.Publisher{
		Repository: repository,
		Options:    []remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain), remote.WithContext(context.Background())},
		Log:        os.Stderr,
	}

	if os.Args[1] == "check" {
		if _, err := p.Existing(version); err != nil {
			fail(1, err.Error())
		}
		fmt.Println(version)
		return
	}

	tmp, err := os.MkdirTemp("", "publish-")
	if err != nil {
		fail(1, fmt.Sprintf("unable to create a temporary folder: %v", err))
	}
	defer os.RemoveAll(tmp)
	var images []v1.Image
	for _, cnb := range os.Args[4:] {
		img, err := release.ReadPackage(cnb, tmp)
		if err != nil {
			os.RemoveAll(tmp)
			fail(1, err.Error())
		}
		images = append(images, img)
	}
	digest, err := p.Publish(version, images)
	if err != nil {
		os.RemoveAll(tmp)
		fail(1, err.Error())
	}
	fmt.Println(digest)
}

// parseRepository accepts a repository name such as 127.0.0.1:5311/pid1-buildpacks/init or
// ghcr.io/OWNER/init.
func parseRepository(s string) (name.Repository, error) {
	if strings.Contains(s, "://") {
		return name.Repository{}, fmt.Errorf("invalid repository %q: expected a repository name without a scheme, such as 127.0.0.1:5311/pid1-buildpacks/init", s)
	}
	repo, err := name.NewRepository(s, name.StrictValidation)
	if err != nil {
		return name.Repository{}, fmt.Errorf("invalid repository %q: expected a repository name without tag or digest, such as 127.0.0.1:5311/pid1-buildpacks/init: %v", s, err)
	}
	return repo, nil
}

// readVersion returns [buildpack] version from buildpack.toml.
func readVersion(path string) (string, error) {
	var descriptor struct {
		Buildpack struct {
			Version string `toml:"version"`
		} `toml:"buildpack"`
	}
	if _, err := toml.DecodeFile(path, &descriptor); err != nil {
		return "", fmt.Errorf("unable to read %s: %w", path, err)
	}
	if descriptor.Buildpack.Version == "" {
		return "", fmt.Errorf("%s declares no [buildpack] version", path)
	}
	return descriptor.Buildpack.Version, nil
}

// fail prints msg as one line and exits with code.
func fail(code int, msg string) {
	fmt.Fprintln(os.Stderr, "publish: "+strings.ReplaceAll(msg, "\n", " "))
	os.Exit(code)
}
