package audit

import (
	"context"
	"fmt"
	"io"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/daemon"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/moby/moby/client"
)

// Source reads an image by reference.
type Source func(ref string) (v1.Image, error)

// Daemon reads images from the Docker daemon that DOCKER_HOST (or the default socket) names,
// speaking DOCKER_API_VERSION when it is set. The layers, which audit builder reads, come from
// one docker save stream, read once and never held in memory (go-containerregistry's daemon
// reader holds the whole image in memory by default, or saves it again for each layer).
func Daemon(ref string) (v1.Image, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, fmt.Errorf("invalid image reference %q: %w", ref, err)
	}
	docker, err := client.New(client.FromEnv)
	if err != nil {
		return nil, fmt.Errorf("unable to reach the Docker daemon: %w", err)
	}
	img, err := daemon.Image(r, daemon.WithClient(docker), daemon.WithUnbufferedOpener())
	if err != nil {
		return nil, fmt.Errorf("unable to read image %s from the Docker daemon: %w", ref, err)
	}
	save := func() (io.ReadCloser, error) { return docker.ImageSave(context.Background(), []string{r.Name()}) }
	return eager(ref, savedImage{Image: img, save: save}, "the Docker daemon")
}

// Registry reads images from their registry, with the credentials of the Docker configuration
// (~/.docker/config.json) when it has some, anonymously otherwise.
func Registry(ref string) (v1.Image, error) {
	r, err := name.ParseReference(ref, name.WeakValidation)
	if err != nil {
		return nil, fmt.Errorf("invalid image reference %q: %w", ref, err)
	}
	img, err := remote.Image(r, remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		return nil, fmt.Errorf("unable to read image %s from its registry: %w", ref, err)
	}
	return eager(ref, img, "its registry")
}

// eager reads the configuration now, so that an image that is not there is reported as such
// rather than later as an unreadable configuration.
func eager(ref string, img v1.Image, where string) (v1.Image, error) {
	if _, err := img.ConfigFile(); err != nil {
		return nil, fmt.Errorf("unable to read image %s from %s: %w", ref, where, err)
	}
	return img, nil
}
