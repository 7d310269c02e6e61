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

// keptDir is the directory whose small regular files are kept with their contents: the
// lifecycle's inputs are all under it.
const keptDir = "cnb/"

// maxKeptFile bounds the contents kept of one file; a larger file under keptDir is an error.
const maxKeptFile = 1 << 20

// maxLinks bounds how many symbolic links one lookup follows, as the kernel's ELOOP does.
const maxLinks = 40

// fsEntry is one path of the builder's file system once every layer is applied.
type fsEntry struct {
	Type     byte   // tar.TypeReg, tar.TypeDir, tar.TypeSymlink, ...
	Linkname string // the target of a symbolic or hard link
	Contents []byte // for regular files under keptDir
	Kept     bool
}

// builderFS is the file system of an image as a container sees it: its layers applied in order,
// with the whiteouts (.wh.NAME removes NAME, .wh..wh..opq empties the directory) of each layer
// applied to the layers before it. Only the contents of small files under /cnb/ are kept.
type builderFS map[string]fsEntry

// readBuilderFS streams each layer of img once, keeping no layer in memory.
func readBuilderFS(img v1.Image) (builderFS, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("unable to read the image's layers: %w", err)
	}
	fs := builderFS{}
	for i, layer := range layers {
		if err := fs.apply(layer); err != nil {
			return nil, fmt.Errorf("unable to read layer %d of the image: %w", i+1, err)
		}
	}
	return fs, nil
}

func (fs builderFS) apply(layer v1.Layer) error {
	rc, err := layer.Uncompressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	added := builderFS{}
	var removed, emptied []string
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		name := cleanPath(hdr.Name)
		dir, base := path.Split(name)
		switch {
		case base == ".wh..wh..opq":
			emptied = append(emptied, strings.TrimSuffix(dir, "/"))
			continue
		case strings.HasPrefix(base, ".wh."):
			removed = append(removed, dir+strings.TrimPrefix(base, ".wh."))
			continue
		}
		e := fsEntry{Type: hdr.Typeflag, Linkname: hdr.Linkname}
		if e.Type == tar.TypeRegA {
			e.Type = tar.TypeReg
		}
		if e.Type == tar.TypeLink {
			e.Linkname = cleanPath(hdr.Linkname)
		}
		if e.Type == tar.TypeReg && strings.HasPrefix(name, keptDir) {
			if hdr.Size > maxKeptFile {
				return fmt.Errorf("/%s: %d bytes: expected at most %d", name, hdr.Size, maxKeptFile)
			}
			if e.Contents, err = io.ReadAll(tr); err != nil {
				return fmt.Errorf("unable to read /%s: %w", name, err)
			}
			e.Kept = true
		}
		if e.Type == tar.TypeLink {
			// A hard link shares the contents of its target, in this layer or a lower one.
			if target, ok := added[e.Linkname]; ok {
				e.Contents, e.Kept = target.Contents, target.Kept
			} else if target, ok := fs[e.Linkname]; ok {
				e.Contents, e.Kept = target.Contents, target.Kept
			}
		}
		added[name] = e
	}
	for _, dir := range emptied {
		fs.removeUnder(dir, false)
	}
	for _, name := range removed {
		fs.removeUnder(name, true)
	}
	for name, e := range added {
		if e.Type != tar.TypeDir {
			// A file replaces whatever directory tree was at its path.
			fs.removeUnder(name, false)
		}
		fs[name] = e
	}
	return nil
}

// removeUnder removes what is under name, and name itself when self.
func (fs builderFS) removeUnder(name string, self bool) {
	if self {
		delete(fs, name)
	}
	prefix := name + "/"
	if name == "" {
		prefix = ""
	}
	for p := range fs {
		if strings.HasPrefix(p, prefix) && p != name {
			delete(fs, p)
		}
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
		e, ok := fs[next]
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
	e, found := fs[resolved]
	switch {
	case !found:
		return nil, false, nil
	case e.Type != tar.TypeReg && e.Type != tar.TypeLink:
		return nil, false, fmt.Errorf("/%s is not a regular file", p)
	case !e.Kept:
		return nil, false, fmt.Errorf("/%s leads to /%s, outside /%s, which the audit does not read", p, resolved, strings.TrimSuffix(keptDir, "/"))
	}
	return e.Contents, true, nil
}

// dir returns the names of the entries of the directory at p (following symbolic links), and
// the path it resolves to.
func (fs builderFS) dir(p string) (names []string, resolved string, err error) {
	if resolved, err = fs.resolve(p); err != nil {
		return nil, "", err
	}
	prefix := resolved + "/"
	for name := range fs {
		if rest, ok := strings.CutPrefix(name, prefix); ok && rest != "" && !strings.Contains(rest, "/") {
			names = append(names, rest)
		}
	}
	return names, resolved, nil
}

// isDir reports whether p, following symbolic links, is a directory.
func (fs builderFS) isDir(p string) bool {
	resolved, err := fs.resolve(p)
	if err != nil {
		return false
	}
	e, ok := fs[resolved]
	if ok {
		return e.Type == tar.TypeDir
	}
	// A directory the tar names only through its entries.
	names, _, _ := fs.dir(resolved)
	return len(names) > 0
}

func cleanPath(name string) string {
	return strings.TrimPrefix(path.Clean("/"+name), "/")
}
