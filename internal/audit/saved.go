package audit

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// savedImage is an image whose layers are read from one docker save stream: its tar holds each
// layer (<id>/layer.tar, or blobs/sha256/<digest> in the OCI layout of Docker 25 and newer) and a
// manifest.json naming them in order, often at the end.
type savedImage struct {
	v1.Image
	save func() (io.ReadCloser, error)
}

// StreamLayers reads the docker save stream once.
func (s savedImage) StreamLayers(layer func(name string, tar io.Reader) error) ([]string, error) {
	rc, err := s.save()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return streamSaved(rc, layer)
}

// streamSaved reads a docker save tar, calling layer for each file that may be a layer and
// returning the layers of its manifest.json, lowest first. A link in the tar (the legacy format
// links a layer seen twice) names the layer it links to.
func streamSaved(r io.Reader, layer func(name string, tar io.Reader) error) ([]string, error) {
	tr := tar.NewReader(r)
	links := map[string]string{}
	var manifest []struct {
		Layers []string `json:"Layers"`
	}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("unable to read docker save's stream: %w", err)
		}
		name := cleanPath(hdr.Name)
		switch {
		case hdr.Typeflag == tar.TypeSymlink:
			links[name] = cleanPath(path.Join(path.Dir(name), hdr.Linkname))
		case hdr.Typeflag == tar.TypeLink:
			links[name] = cleanPath(hdr.Linkname)
		case name == "manifest.json":
			if err := json.NewDecoder(io.LimitReader(tr, maxKeptFile)).Decode(&manifest); err != nil {
				return nil, fmt.Errorf("unable to read docker save's manifest.json: %w", err)
			}
		case hdr.Typeflag == tar.TypeReg && (strings.HasSuffix(name, "/layer.tar") || strings.HasPrefix(name, "blobs/")):
			if err := layer(name, uncompressed(tr)); err != nil {
				return nil, err
			}
		}
	}
	if len(manifest) != 1 {
		return nil, fmt.Errorf("docker save's manifest.json names %d images: expected 1", len(manifest))
	}
	var order []string
	for _, l := range manifest[0].Layers {
		l = cleanPath(l)
		for i := 0; i < maxLinks && links[l] != ""; i++ {
			l = links[l]
		}
		order = append(order, l)
	}
	return order, nil
}

// uncompressed undoes the gzip of a layer that has it.
func uncompressed(r io.Reader) io.Reader {
	br := bufio.NewReader(r)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		if zr, err := gzip.NewReader(br); err == nil {
			return zr
		}
	}
	return br
}
