package rewrite

import (
	"path/filepath"
	"regexp"
	"strings"

	"github.com/pid1-buildpacks/init/internal/launch"
)

// knownInit matches the file names of inits that already reap zombies and forward signals:
// tini and tini-static under their release names (tini-amd64, tini-static-muslc-arm64, ...),
// Docker's copy of tini (docker-init), dumb-init and its release names
// (dumb-init_1.2.5_x86_64), and catatonit.
var knownInit = regexp.MustCompile(`^(?:` +
	`tini(?:-static)?(?:-muslc)?(?:-(?:amd64|arm64|armel|armhf|i386|mips|mips64el|ppc64el|ppc64le|riscv64|s390x))?` +
	`|docker-init` +
	`|dumb-init(?:_[0-9][0-9.]*_(?:x86_64|aarch64|ppc64le|s390x))?` +
	`|catatonit` +
	`)$`)

// assignment matches a shell variable assignment word, NAME=value.
var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// unknown stands for a word whose value only the shell knows at run time (it holds an
// expansion or a glob); it names no program.
const unknown = "\x00"

// maxDepth bounds how many env and shell -c layers ExistingInit looks through.
const maxDepth = 4

// ExistingInit returns the name of the init p already starts with, and true, when the program p
// executes first is our init at one of ours (its path now and its former paths) or a known init
// (tini, tini-static and their release names, docker-init, dumb-init, catatonit).
//
// The program is found the way the launcher and the shell would find it: through
// `env [OPTION]... [NAME=VALUE]... PROGRAM`, and through a shell script (a Buildpack API 0.8
// shell process's command line, or the script of `bash -c` or `sh -c`) whose first command is
// `exec PROGRAM ...`, or, under bash, which execs a script's only simple command itself, the
// whole script. When a word's value depends on the run time (`$VAR`, `$(...)`, a glob), it
// names no init.
//
// A known init's name counts where the image's tools are, never in the application directory:
// a bare name (looked up on PATH at launch: the run image's directories and the buildpack
// layers' bin/), or an absolute path outside appDir. A path inside appDir, or relative to the
// working directory (`./tini`, `bin/tini`), is the app's own file, whatever its name, and is
// wrapped. When unsure, ExistingInit says no: wrapping a process that already has an init costs a
// second init, while not wrapping one that has none leaves the app as PID 1.
func ExistingInit(p launch.Process, appDir string, ours ...string) (string, bool) {
	var program string
	switch {
	case p.Direct:
		program = directProgram(append(append([]string{}, p.Command...), p.Args...), appDir, 0)
	case len(p.Args) > 0:
		// The launcher runs `bash -c '"$(eval echo \"$0\")" ...' <line> <args>...`: the whole
		// command line, expanded, is one word, the program.
		program = p.Command[0]
		if strings.ContainsAny(program, "$`\\\"'*?[") {
			program = unknown
		}
	default:
		program = scriptProgram(p.Command[0], true, appDir, 0)
	}

	for _, path := range ours {
		if program == path {
			return path, true
		}
	}
	if knownInit.MatchString(filepath.Base(program)) && isTool(program, appDir) {
		return filepath.Base(program), true
	}
	return "", false
}

// isTool reports whether word names a program installed in the image rather than a file of the
// application: a bare name, found on PATH, or an absolute path outside appDir.
func isTool(word, appDir string) bool {
	if word == unknown || word == "" {
		return false
	}
	if !strings.Contains(word, "/") {
		return true
	}
	if !filepath.IsAbs(word) {
		return false
	}
	rel, err := filepath.Rel(filepath.Clean(appDir), filepath.Clean(word))
	return err == nil && (rel == ".." || strings.HasPrefix(rel, "../"))
}

// directProgram returns the program argv executes first, looking through env and shells' -c.
func directProgram(argv []string, appDir string, depth int) string {
	if len(argv) == 0 || depth > maxDepth || !isTool(argv[0], appDir) {
		return first(argv)
	}
	switch name := filepath.Base(argv[0]); name {
	case "env":
		return directProgram(envProgram(argv[1:]), appDir, depth+1)
	case "bash", "sh", "dash", "ash":
		if script, ok := shellScript(argv[1:]); ok {
			return scriptProgram(script, name == "bash", appDir, depth+1)
		}
	}
	return argv[0]
}

// envProgram returns the program and its arguments from env's arguments.
func envProgram(args []string) []string {
	program, _ := EnvCommand(args)
	return program
}

// EnvChange is one change `env` makes to the environment before it runs its program: Clear (-i)
// empties it, Unset (-u NAME) removes Name, otherwise Name is set to Value (NAME=VALUE).
type EnvChange struct {
	Name, Value  string
	Unset, Clear bool
}

// EnvCommand returns what `env ARGS...` runs, its program and its arguments, and the changes it
// makes to the environment first, in order. It reads env's options (coreutils and busybox; -S
// splits its string into more arguments) and NAME=VALUE assignments. Each -S string is split
// once and read before the arguments after it, without copying them, so the work is linear in
// the arguments however many -S they hold.
func EnvCommand(args []string) (program []string, changes []EnvChange) {
	words := envWords{args}
	for {
		a, ok := words.next()
		if !ok {
			return nil, changes
		}
		switch {
		case a == "--":
			rest := words.rest()
			for len(rest) > 0 && assignment.MatchString(rest[0]) {
				changes = append(changes, assign(rest[0]))
				rest = rest[1:]
			}
			return rest, changes
		case a == "-S" || a == "--split-string":
			s, ok := words.next()
			if !ok {
				return nil, changes
			}
			words.push(strings.Fields(s))
		case strings.HasPrefix(a, "--split-string="):
			words.push(strings.Fields(strings.TrimPrefix(a, "--split-string=")))
		case strings.HasPrefix(a, "-S"):
			words.push(strings.Fields(a[2:]))
		case a == "-u" || a == "--unset":
			if name, ok := words.next(); ok {
				changes = append(changes, EnvChange{Name: name, Unset: true})
			}
		case strings.HasPrefix(a, "--unset="):
			changes = append(changes, EnvChange{Name: strings.TrimPrefix(a, "--unset="), Unset: true})
		case a == "-C" || a == "--chdir":
			words.next() // the option's value
		case a == "-i" || a == "-" || a == "--ignore-environment":
			changes = append(changes, EnvChange{Clear: true})
		case strings.HasPrefix(a, "-u") && !strings.HasPrefix(a, "--"):
			changes = append(changes, EnvChange{Name: a[2:], Unset: true})
		case strings.HasPrefix(a, "-"):
			// -0, -v, -iv, ... (a combined -i is read as no change: unsure, not a clear)
		case assignment.MatchString(a):
			changes = append(changes, assign(a))
		default:
			return append([]string{a}, words.rest()...), changes
		}
	}
}

func assign(word string) EnvChange {
	name, value, _ := strings.Cut(word, "=")
	return EnvChange{Name: name, Value: value}
}

// envWords are the words env has still to read: a stack of runs of words, the last run read
// first (the words of a -S string come before the arguments that followed it).
type envWords [][]string

func (w *envWords) next() (string, bool) {
	for len(*w) > 0 {
		top := &(*w)[len(*w)-1]
		if len(*top) > 0 {
			word := (*top)[0]
			*top = (*top)[1:]
			return word, true
		}
		*w = (*w)[:len(*w)-1]
	}
	return "", false
}

func (w *envWords) push(words []string) {
	if len(words) > 0 {
		*w = append(*w, words)
	}
}

func (w *envWords) rest() []string {
	var words []string
	for i := len(*w) - 1; i >= 0; i-- {
		words = append(words, (*w)[i]...)
	}
	return words
}

func skipAssignments(words []string) []string {
	for len(words) > 0 && assignment.MatchString(words[0]) {
		words = words[1:]
	}
	return words
}

// shellScript returns the script of a shell's -c from its arguments (options may come before and
// be combined, as in -ec), and false when the shell runs no -c script.
func shellScript(args []string) (string, bool) {
	dashC := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--" || a == "-":
			i++
			if dashC && i < len(args) {
				return args[i], true
			}
			return "", false
		case strings.HasPrefix(a, "--"):
			// --login, --norc, --noprofile, ...
		case a == "-o" || a == "+o" || a == "-O" || a == "+O":
			i++ // the option's name
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			dashC = dashC || (a[0] == '-' && strings.ContainsRune(a[1:], 'c'))
		default:
			return a, dashC
		}
	}
	return "", false
}

// scriptProgram returns the program a shell script executes in the shell's place: the program of
// its first command when that command is `exec ...` (a POSIX shell) or, when the shell is bash,
// when it is the script's only command. Otherwise the shell stays, and it is the program.
func scriptProgram(script string, bash bool, appDir string, depth int) string {
	words, next := firstCommand(script)
	words = skipAssignments(words)
	exec := first(words) == "exec"
	if exec {
		words = execOperands(words[1:])
		if next == "|" || next == "&" {
			return unknown // exec in a pipeline or in the background runs in a subshell
		}
	} else if !bash || next != "" {
		return unknown
	}
	return directProgram(words, appDir, depth)
}

// execOperands skips the options of bash's exec (-c, -l, -a NAME).
func execOperands(words []string) []string {
	for len(words) > 0 && strings.HasPrefix(words[0], "-") {
		option := words[0]
		words = words[1:]
		if option == "--" {
			break
		}
		if strings.HasSuffix(option, "a") && len(words) > 0 {
			words = words[1:]
		}
	}
	return words
}

// firstCommand splits the first simple command of a shell script into words, undoing quotes and
// backslashes, and returns the operator that ends it ("" at the end of the script; ";", "&",
// "|", "\n", "(", ")", "<" or ">" otherwise). A word whose value depends on the run time
// (expansions, globs) becomes unknown, or NAME=unknown for an assignment.
func firstCommand(script string) (words []string, next string) {
	var word strings.Builder
	inWord, literal := false, true
	end := func() {
		if !inWord {
			return
		}
		w := word.String()
		if !literal {
			if m := assignment.FindString(w); m != "" {
				w = m + unknown
			} else {
				w = unknown
			}
		}
		words = append(words, w)
		word.Reset()
		inWord, literal = false, true
	}

	for i := 0; i < len(script); i++ {
		c := script[i]
		switch {
		case c == ' ' || c == '\t':
			end()
		case c == '#' && !inWord:
			for i < len(script) && script[i] != '\n' {
				i++
			}
			i--
		case c == '\n' && len(words) == 0 && !inWord:
		case strings.IndexByte(";&|\n()<>", c) >= 0:
			end()
			return words, string(c)
		case c == '\\':
			inWord = true
			if i+1 < len(script) {
				i++
				if script[i] != '\n' {
					word.WriteByte(script[i])
				}
			}
		case c == '\'':
			inWord = true
			j := strings.IndexByte(script[i+1:], '\'')
			if j < 0 {
				return nil, "'" // unterminated: the shell fails
			}
			word.WriteString(script[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			j := i + 1
			for ; j < len(script) && script[j] != '"'; j++ {
				switch script[j] {
				case '$', '`':
					literal = false
				case '\\':
					if j+1 < len(script) && strings.IndexByte("$`\"\\\n", script[j+1]) >= 0 {
						j++
					}
				}
				word.WriteByte(script[j])
			}
			if j == len(script) {
				return nil, "\""
			}
			i = j
		case strings.IndexByte("$`*?[{}~", c) >= 0:
			inWord, literal = true, false
			word.WriteByte(c)
		default:
			inWord = true
			word.WriteByte(c)
		}
	}
	end()
	return words, ""
}

func first(words []string) string {
	if len(words) == 0 {
		return ""
	}
	return words[0]
}
