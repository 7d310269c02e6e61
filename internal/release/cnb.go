// Package release publishes the buildpack's per-architecture packages as one multi-platform
// image index in a registry, checks what it pushed, and only then moves the version tags.
package release

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// ReadPackage reads a .cnb file that `pack buildpack package --format file` wrote (an OCI image
// layout in a tar archive holding one image). It unpacks the archive into a folder under
// tmpDir, which must outlive every use of the image.
func ReadPackage(path, tmpDir string) (v1.Image, error) {
	dir, err := os.MkdirTemp(tmpDir, "cnb-")
	if err != nil {
		return nil, fmt.Errorf("unable to create a folder for %s: %w", path, err)
	}
	if err := untar(path, dir); err != nil {
		return nil, err
	}
	index, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("unable to read %s as an OCI image layout: %w", path, err)
	}
	manifest, err := index.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("unable to read the index of %s: %w", path, err)
	}
	if len(manifest.Manifests) != 1 {
		return nil, fmt.Errorf("%s holds %d images: expected one, as pack buildpack package --format file --target writes", path, len(manifest.Manifests))
	}
	img, err := index.Image(manifest.Manifests[0].Digest)
	if err != nil {
		return nil, fmt.Errorf("unable to read the image in %s: %w", path, err)
	}
	return img, nil
}

// untar extracts the regular files and folders of the tar archive at path into dir.
func untar(path, dir string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("unable to open %s: %w", path, err)
	}
	defer f.Close()
	err = eachEntry(f, func(hdr *tar.Header, r io.Reader) error {
		name := filepath.Clean(strings.TrimPrefix(hdr.Name, "/"))
		if name == "." || name == ".." || strings.HasPrefix(name, "../") {
			return nil
		}
		target := filepath.Join(dir, name)
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return fmt.Errorf("unable to create %s: %w", target, err)
			}
		case tar.TypeReg:
			if err := writeFile(target, r); err != nil {
				return fmt.Errorf("unable to extract %s: %w", hdr.Name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// eachEntry calls fn with each entry of the tar archive r, in order, and the entry's content.
func eachEntry(r io.Reader, fn func(*tar.Header, io.Reader) error) error {
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("unable to read a tar archive: %w", err)
		}
		if err := fn(hdr, tr); err != nil {
			return err
		}
	}
}

func writeFile(path string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
