package audit

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The files of a builder the lifecycle reads, relative to the root.
const (
	orderFile         = "cnb/order.toml"
	systemFile        = "cnb/system.toml"
	lifecycleFile     = "cnb/lifecycle/lifecycle.toml"
	buildConfigEnvDir = "cnb/build-config/env"
)

// lifecycleFiles selects the files whose contents a builder audit keeps: the lifecycle's inputs
// are all under /cnb/.
func lifecycleFiles(name string) bool { return strings.HasPrefix(name, "cnb/") }

// maxKeptFile bounds the contents kept of one file: a larger file (a binary) is not kept, and
// reading it is an error.
const maxKeptFile = 1 << 20

// maxLinks bounds how many symbolic links one lookup follows, as the kernel's ELOOP does.
const maxLinks = 40

// fsEntry is one path of the builder's file system once every layer is applied.
type fsEntry struct {
	Type     byte   // tar.TypeReg, tar.TypeDir, tar.TypeSymlink, ...
	Linkname string // the target of a symbolic or hard link
	Contents []byte // for regular files under keptDir
	Kept     bool
	// Layer is the index of the layer that wrote this path, lowest first.
	Layer int
}

// builderFS is the file system of an image as a container sees it: its layers applied in order,
// with the whiteouts (.wh.NAME removes NAME, .wh..wh..opq empties the directory) of each layer
// applied to the layers before it. Only the contents of the small files a keep function
// selects are kept. Each
// path knows its children, so that a whiteout costs what it removes.
type builderFS struct {
	entries  map[string]fsEntry
	children map[string]map[string]struct{}
}

func newBuilderFS() builderFS {
	return builderFS{entries: map[string]fsEntry{}, children: map[string]map[string]struct{}{}}
}

// put sets the entry at name, and links name into its parents.
func (fs builderFS) put(name string, e fsEntry) {
	fs.entries[name] = e
	for p := name; p != ""; {
		parent, base := parentOf(p)
		siblings, known := fs.children[parent]
		if !known {
			siblings = map[string]struct{}{}
			fs.children[parent] = siblings
		}
		siblings[base] = struct{}{}
		if known {
			return
		}
		p = parent
	}
}

// removeUnder removes what is under name, and name itself when self.
func (fs builderFS) removeUnder(name string, self bool) {
	for child := range fs.children[name] {
		fs.removeUnder(path.Join(name, child), true)
	}
	delete(fs.children, name)
	if self && name != "" {
		delete(fs.entries, name)
		parent, base := parentOf(name)
		delete(fs.children[parent], base)
	}
}

func parentOf(name string) (parent, base string) {
	dir, base := path.Split(name)
	return strings.TrimSuffix(dir, "/"), base
}

// LayerStreamer is an image whose layers are best read in one pass over one stream, as the
// Docker daemon gives them (docker save), rather than one layer at a time.
type LayerStreamer interface {
	// StreamLayers calls layer with the name and uncompressed tar of each layer, in the
	// stream's order, and returns the names of the image's layers, lowest first.
	StreamLayers(layer func(name string, tar io.Reader) error) (order []string, err error)
}

// readBuilderFS reads each layer of img once, as a stream, keeping no layer in memory, and the
// contents of the small files keep selects.
func readBuilderFS(img v1.Image, keep func(name string) bool) (builderFS, error) {
	fs := newBuilderFS()
	if s, ok := img.(LayerStreamer); ok {
		deltas := map[string]layerDelta{}
		failed := map[string]error{}
		order, err := s.StreamLayers(func(name string, r io.Reader) error {
			d, err := readLayer(r, keep)
			if err != nil {
				failed[name] = err // perhaps not a layer: an error only when the image lists it
				return nil
			}
			deltas[name] = d
			return nil
		})
		if err != nil {
			return builderFS{}, fmt.Errorf("unable to read the image's layers: %w", err)
		}
		for i, name := range order {
			d, ok := deltas[name]
			switch {
			case failed[name] != nil:
				return builderFS{}, fmt.Errorf("unable to read layer %d of the image (%s): %w", i+1, name, failed[name])
			case !ok:
				return builderFS{}, fmt.Errorf("unable to read layer %d of the image: %s is not in the stream", i+1, name)
			}
			fs.apply(d, i)
		}
		return fs, nil
	}
	layers, err := img.Layers()
	if err != nil {
		return builderFS{}, fmt.Errorf("unable to read the image's layers: %w", err)
	}
	for i, layer := range layers {
		d, err := readImageLayer(layer, keep)
		if err != nil {
			return builderFS{}, fmt.Errorf("unable to read layer %d of the image: %w", i+1, err)
		}
		fs.apply(d, i)
	}
	return fs, nil
}

func readImageLayer(layer v1.Layer, keep func(string) bool) (layerDelta, error) {
	rc, err := layer.Uncompressed()
	if err != nil {
		return layerDelta{}, err
	}
	defer rc.Close()
	return readLayer(rc, keep)
}

// layerDelta is what one layer does to the layers below it.
type layerDelta struct {
	added map[string]fsEntry
	// removed are the paths of its .wh.NAME whiteouts, emptied the directories of its
	// .wh..wh..opq ones.
	removed, emptied []string
}

func readLayer(r io.Reader, keep func(string) bool) (layerDelta, error) {
	d := layerDelta{added: map[string]fsEntry{}}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return d, nil
		}
		if err != nil {
			return d, err
		}
		name := cleanPath(hdr.Name)
		dir, base := path.Split(name)
		switch {
		case base == ".wh..wh..opq":
			d.emptied = append(d.emptied, strings.TrimSuffix(dir, "/"))
			continue
		case strings.HasPrefix(base, ".wh."):
			d.removed = append(d.removed, dir+strings.TrimPrefix(base, ".wh."))
			continue
		}
		e := fsEntry{Type: hdr.Typeflag, Linkname: hdr.Linkname}
		if e.Type == tar.TypeRegA {
			e.Type = tar.TypeReg
		}
		if e.Type == tar.TypeLink {
			e.Linkname = cleanPath(hdr.Linkname)
		}
		if e.Type == tar.TypeReg && hdr.Size <= maxKeptFile && keep(name) {
			if e.Contents, err = io.ReadAll(tr); err != nil {
				return d, fmt.Errorf("unable to read /%s: %w", name, err)
			}
			e.Kept = true
		}
		d.added[name] = e
	}
}

// apply puts layer number index over fs: its whiteouts first, then its entries.
func (fs builderFS) apply(d layerDelta, index int) {
	for _, dir := range d.emptied {
		fs.removeUnder(dir, false)
	}
	for _, name := range d.removed {
		fs.removeUnder(name, true)
	}
	for name, e := range d.added {
		if e.Type == tar.TypeLink {
			// A hard link shares the contents of its target, in this layer or a lower one.
			target, ok := d.added[e.Linkname]
			if !ok {
				target = fs.entries[e.Linkname]
			}
			e.Contents, e.Kept = target.Contents, target.Kept
		}
		e.Layer = index
		if e.Type != tar.TypeDir {
			// A file replaces whatever directory tree was at its path.
			fs.removeUnder(name, false)
		}
		fs.put(name, e)
	}
}

// resolve follows the symbolic links of every component of p, as the kernel would in a
// container of the image, and returns the path it ends at.
func (fs builderFS) resolve(p string) (string, error) {
	links := 0
	resolved := ""
	rest := strings.Split(cleanPath(p), "/")
	for len(rest) > 0 {
		component := rest[0]
		rest = rest[1:]
		if component == "" || component == "." {
			continue
		}
		next := path.Join(resolved, component)
		if component == ".." {
			next = path.Dir(resolved)
			if next == "." {
				next = ""
			}
		}
		e, ok := fs.entries[next]
		if !ok || e.Type != tar.TypeSymlink {
			resolved = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("/%s: too many levels of symbolic links", p)
		}
		target := e.Linkname
		if !path.IsAbs(target) {
			target = path.Join(path.Dir(next), target)
		}
		resolved = ""
		rest = append(strings.Split(cleanPath(target), "/"), rest...)
	}
	return resolved, nil
}

// file returns the contents of the regular file at p, following symbolic links; ok is false
// when there is none. A path that ends outside /cnb/, or at something else than a file, is an
// error naming it.
func (fs builderFS) file(p string) (contents []byte, ok bool, err error) {
	resolved, err := fs.resolve(p)
	if err != nil {
		return nil, false, err
	}
	e, found := fs.entries[resolved]
	switch {
	case !found:
		return nil, false, nil
	case e.Type != tar.TypeReg && e.Type != tar.TypeLink:
		return nil, false, fmt.Errorf("/%s is not a regular file", p)
	case !e.Kept:
		return nil, false, fmt.Errorf("/%s leads to /%s, which the audit does not read: it reads the lifecycle's files, of at most %d bytes", p, resolved, maxKeptFile)
	}
	return e.Contents, true, nil
}

// dir returns the names of the entries of the directory at p (following symbolic links), and
// the path it resolves to.
func (fs builderFS) dir(p string) (names []string, resolved string, err error) {
	if resolved, err = fs.resolve(p); err != nil {
		return nil, "", err
	}
	for name := range fs.children[resolved] {
		names = append(names, name)
	}
	return names, resolved, nil
}

// isDir reports whether p, following symbolic links, is a directory.
func (fs builderFS) isDir(p string) bool {
	resolved, err := fs.resolve(p)
	if err != nil {
		return false
	}
	if e, ok := fs.entries[resolved]; ok {
		return e.Type == tar.TypeDir
	}
	// A directory the tar names only through its entries.
	return len(fs.children[resolved]) > 0
}

func cleanPath(name string) string {
	return strings.TrimPrefix(path.Clean("/"+name), "/")
}
