package audit

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/pid1-buildpacks/init/internal/config"
)

// envFile is one file of an environment directory the lifecycle applies: the build-config
// environment (/cnb/build-config/env), applied to every buildpack's environment after the app
// developer's values, or a layer's env, env.launch or env.launch/<type>, which the launcher
// applies to the image's environment.
type envFile struct {
	// Path is the file's path in the image.
	Path string
	// Variable and Action come from the file name, NAME[.ACTION]; an unsuffixed file takes the
	// directory's default action (default in the build config, override in a layer).
	Variable, Action string
	Value            string
	// Delim joins an append or a prepend (NAME.delim in the same directory; nothing without,
	// ':' for NAME., the lifecycle's prepend-path).
	Delim string
}

// envFiles are environment files in the order the lifecycle applies them: directory by
// directory, each read with os.ReadDir (by file name), each file with a known action once.
type envFiles struct {
	files []envFile
	// Broken names a file the lifecycle cannot read (a dangling link): it fails.
	Broken string
}

// readEnvDir appends the files of the directory dir of the image to e, unsuffixed files taking
// defaultAction. A directory that is not there adds nothing.
func (e *envFiles) readEnvDir(fs builderFS, dir, defaultAction string) error {
	if !fs.isDir(dir) {
		return nil
	}
	names, resolved, err := fs.dir(dir)
	if err != nil {
		return err
	}
	slices.Sort(names)
	var read []envFile
	delims := map[string]string{}
	for _, name := range names {
		p := path.Join(resolved, name)
		if fs.isDir(p) {
			continue // the lifecycle skips directories, and links to them
		}
		contents, ok, err := fs.file(p)
		if err != nil {
			return err
		}
		shown := "/" + path.Join(dir, name)
		if !ok {
			e.Broken = shown
			continue
		}
		variable, action, suffixed := strings.Cut(name, ".")
		if !suffixed {
			action = defaultAction
		}
		switch action {
		case "default", "override", "append", "prepend":
			read = append(read, envFile{Path: shown, Variable: variable, Action: action, Value: string(contents)})
		case "":
			// NAME. is the lifecycle's prepend-path action: a prepend joined by ':' without a delim.
			read = append(read, envFile{Path: shown, Variable: variable, Action: "prepend", Value: string(contents), Delim: ":"})
		case "delim":
			delims[variable] = string(contents)
		}
	}
	for i := range read {
		if delim, ok := delims[read[i].Variable]; ok {
			read[i].Delim = delim
		}
	}
	e.files = append(e.files, read...)
	return nil
}

// resolve returns the value variable ends with when it starts as start (nil: not set), as the
// lifecycle computes it: each file in turn, a default only when the value is still empty, an
// override replacing it, append and prepend joining with the delimiter. It also returns the
// files that apply, and whether the variable is set at the end.
func (e envFiles) resolve(variable string, start *string) (value string, files []string, set bool) {
	if start != nil {
		value, set = *start, true
	}
	for _, f := range e.files {
		if f.Variable != variable {
			continue
		}
		files, set = append(files, f.Path), true
		switch f.Action {
		case "default":
			if value == "" {
				value = f.Value
			}
		case "override":
			value = f.Value
		case "append":
			if value != "" {
				value += f.Delim
			}
			value += f.Value
		case "prepend":
			if value != "" {
				value = f.Delim + value
			}
			value = f.Value + value
		}
	}
	return value, files, set
}

// readBuildEnv reads /cnb/build-config/env from the builder's file system.
func readBuildEnv(fs builderFS) (envFiles, error) {
	var e envFiles
	return e, e.readEnvDir(fs, buildConfigEnvDir, "default")
}

// auditBuildEnv judges what the build-config environment does to the buildpack: problems when
// an image is not wrapped by default, or every build fails; else a note on whether app
// developers can opt out with BP_INIT_ENABLED=false, and warnings.
func auditBuildEnv(e envFiles) (note string, problems, warnings []string) {
	if e.Broken != "" {
		return "", []string{fmt.Sprintf("%s cannot be read (a dangling link): the lifecycle fails every build", e.Broken)}, nil
	}
	str := func(s string) *string { return &s }
	value, files, _ := e.resolve(config.Enabled, nil)
	from := sets(files)
	enabled, err := config.ParseEnabled(value)
	switch {
	case err != nil:
		problems = append(problems, fmt.Sprintf("%s BP_INIT_ENABLED=%q, which is not true or false: every build fails", from, value))
	case !enabled:
		problems = append(problems, fmt.Sprintf("%s BP_INIT_ENABLED=%q unless the app developer sets it: images are not wrapped by default", from, value))
	}

	if value, files, _ := e.resolve(config.ProcessTypes, nil); len(files) > 0 {
		from := sets(files)
		types, err := config.ParseTypes(value)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s BP_INIT_PROCESS_TYPES=%q, which names no process type: every build fails", from, value))
		case types != nil:
			problems = append(problems, fmt.Sprintf("%s BP_INIT_PROCESS_TYPES=%q: only %s wrapped, every other process type starts without the init",
				from, value, typesPhrase(types)))
		}
	}
	if len(problems) > 0 {
		return "", problems, nil
	}

	optedOut, files, _ := e.resolve(config.Enabled, str("false"))
	from = sets(files)
	switch enabled, err := config.ParseEnabled(optedOut); {
	case len(files) == 0:
		note = "app developers can opt out with BP_INIT_ENABLED=false"
	case err != nil:
		note = fmt.Sprintf("BP_INIT_ENABLED=false fails the build (%s it to %q)", from, optedOut)
	case enabled:
		note = fmt.Sprintf("BP_INIT_ENABLED=false is ignored (%s)", strings.Join(files, ", "))
	default:
		note = fmt.Sprintf("app developers can opt out with BP_INIT_ENABLED=false (%s: a default)", strings.Join(files, ", "))
	}
	if on, files, _ := e.resolve(config.Enabled, str("true")); len(files) > 0 {
		if enabled, err := config.ParseEnabled(on); err != nil || !enabled {
			warnings = append(warnings, fmt.Sprintf("BP_INIT_ENABLED=true set by the app developer becomes %q (%s)", on, strings.Join(files, ", ")))
		}
	}
	return note, nil, warnings
}

func typesPhrase(types []string) string {
	if len(types) == 1 {
		return "process type " + types[0] + " is"
	}
	return "process types " + strings.Join(types, ", ") + " are"
}

// sets says which files set a variable: "F sets" or "F, G set".
func sets(files []string) string {
	if len(files) == 1 {
		return files[0] + " sets"
	}
	return strings.Join(files, ", ") + " set"
}
