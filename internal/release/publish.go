package release

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Publisher publishes a buildpack's per-platform images to one repository as one image index.
type Publisher struct {
	Repository name.Repository
	// Options are passed to every registry call (authentication, context, transport).
	Options []remote.Option
	// Log receives one line per step.
	Log io.Writer
}

// Publish pushes images as one OCI image index tagged version, MAJOR.MINOR, MAJOR and latest
// (see Tags), and returns the index digest. Nothing is tagged until every platform's image,
// read back from the registry, passes CheckPlatform: the index and its images are pushed by
// digest first. When version is already a tag of the repository, it must name the same digest
// (publishing the same build again is harmless and completes the floating tags); another
// digest is an error and nothing is pushed.
func (p Publisher) Publish(version string, images []v1.Image) (v1.Hash, error) {
	if _, err := Tags(version, nil); err != nil {
		return v1.Hash{}, err
	}
	index, platforms, err := Index(images)
	if err != nil {
		return v1.Hash{}, err
	}
	digest, err := index.Digest()
	if err != nil {
		return v1.Hash{}, fmt.Errorf("unable to compute the index digest: %w", err)
	}

	tagged, err := p.Existing(version)
	if err != nil {
		return v1.Hash{}, err
	}
	if tagged != nil && *tagged != digest {
		return v1.Hash{}, fmt.Errorf("%s already exists as %s and this build is %s: a published version does not change; raise the version in buildpack.toml",
			p.Repository.Tag(version), tagged, digest)
	}

	ref := p.Repository.Digest(digest.String())
	if err := remote.WriteIndex(ref, index, p.Options...); err != nil {
		return v1.Hash{}, fmt.Errorf("unable to push %s: %w", ref, err)
	}
	p.logf("pushed %s (%s), untagged", ref, strings.Join(platforms, ", "))

	if err := p.Verify(digest, platforms); err != nil {
		return v1.Hash{}, fmt.Errorf("%s: %w; no tag was moved", ref, err)
	}

	existing, err := p.tags()
	if err != nil {
		return v1.Hash{}, err
	}
	tags, err := Tags(version, existing)
	if err != nil {
		return v1.Hash{}, err
	}
	for _, tag := range tags {
		if err := remote.Tag(p.Repository.Tag(tag), index, p.Options...); err != nil {
			return v1.Hash{}, fmt.Errorf("unable to tag %s as %s: %w", ref, tag, err)
		}
	}
	p.logf("tagged %s: %s", digest, strings.Join(tags, ", "))
	return digest, nil
}

// Existing returns the digest that tag version names in the repository, or nil when there is
// no such tag. It fails when the registry does not answer.
func (p Publisher) Existing(version string) (*v1.Hash, error) {
	desc, err := remote.Head(p.Repository.Tag(version), p.Options...)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, p.registryError(err)
	}
	return &desc.Digest, nil
}

// Verify reads the index digest back from the registry and checks that it holds one image for
// each of platforms and that each passes CheckPlatform.
func (p Publisher) Verify(digest v1.Hash, platforms []string) error {
	index, err := remote.Index(p.Repository.Digest(digest.String()), p.Options...)
	if err != nil {
		return fmt.Errorf("unable to read the index back: %w", err)
	}
	manifest, err := index.IndexManifest()
	if err != nil {
		return fmt.Errorf("unable to read the index back: %w", err)
	}
	var found []string
	for _, desc := range manifest.Manifests {
		if desc.Platform == nil {
			return fmt.Errorf("manifest %s has no platform in the index", desc.Digest)
		}
		img, err := remote.Image(p.Repository.Digest(desc.Digest.String()), p.Options...)
		if err != nil {
			return fmt.Errorf("unable to read the %s image back: %w", desc.Platform, err)
		}
		if err := CheckPlatform(img, *desc.Platform); err != nil {
			return fmt.Errorf("%s image %s: %w", desc.Platform, desc.Digest, err)
		}
		p.logf("checked %s (%s): %s built for %s", desc.Platform, desc.Digest, strings.Join(Executables, ", "), machines[desc.Platform.Architecture])
		found = append(found, desc.Platform.String())
	}
	sort.Strings(found)
	if strings.Join(found, " ") != strings.Join(platforms, " ") {
		return fmt.Errorf("the index holds [%s], expected [%s]", strings.Join(found, " "), strings.Join(platforms, " "))
	}
	return nil
}

// Index assembles images, each checked with CheckPlatform for the platform its configuration
// names and given OCI media types, into an OCI image index. It returns the index and the
// platforms, sorted. Two images for one platform are an error.
func Index(images []v1.Image) (v1.ImageIndex, []string, error) {
	if len(images) == 0 {
		return nil, nil, errors.New("no image to publish")
	}
	index := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var platforms []string
	seen := map[string]bool{}
	for _, img := range images {
		cfg, err := img.ConfigFile()
		if err != nil {
			return nil, nil, fmt.Errorf("unable to read an image configuration: %w", err)
		}
		platform := v1.Platform{OS: cfg.OS, Architecture: cfg.Architecture}
		if seen[platform.String()] {
			return nil, nil, fmt.Errorf("two images for %s", platform.String())
		}
		seen[platform.String()] = true
		if err := CheckPlatform(img, platform); err != nil {
			return nil, nil, fmt.Errorf("the %s image: %w", platform.String(), err)
		}
		oci, err := ociImage(img)
		if err != nil {
			return nil, nil, fmt.Errorf("the %s image: %w", platform.String(), err)
		}
		index = mutate.AppendManifests(index, mutate.IndexAddendum{
			Add:        oci,
			Descriptor: v1.Descriptor{Platform: &platform},
		})
		platforms = append(platforms, platform.String())
	}
	sort.Strings(platforms)
	return index, platforms, nil
}

// ociImage returns img with OCI media types (pack writes Docker ones to .cnb files, and OCI
// ones when it publishes): the same layers and configuration.
func ociImage(img v1.Image) (v1.Image, error) {
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("unable to read the configuration: %w", err)
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("unable to list the layers: %w", err)
	}
	out := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	for _, layer := range layers {
		out, err = mutate.Append(out, mutate.Addendum{Layer: layer, MediaType: types.OCILayer})
		if err != nil {
			return nil, fmt.Errorf("unable to add a layer: %w", err)
		}
	}
	return mutate.ConfigFile(out, cfg)
}

// tags lists the repository's tags; a repository that does not exist yet has none.
func (p Publisher) tags() ([]string, error) {
	tags, err := remote.List(p.Repository, p.Options...)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, p.registryError(err)
	}
	return tags, nil
}

// registryError says whether the registry did not answer or answered with an error.
func (p Publisher) registryError(err error) error {
	var terr *transport.Error
	if errors.As(err, &terr) {
		return fmt.Errorf("registry %s refused %s: %w", p.Repository.RegistryStr(), p.Repository, err)
	}
	return fmt.Errorf("registry %s does not answer: %w", p.Repository.RegistryStr(), err)
}

func isNotFound(err error) bool {
	var terr *transport.Error
	return errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound
}

func (p Publisher) logf(format string, args ...any) {
	if p.Log != nil {
		fmt.Fprintf(p.Log, format+"\n", args...)
	}
}
