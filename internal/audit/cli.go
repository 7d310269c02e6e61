package audit

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Exit codes of Main.
const (
	ExitCovered    = 0
	ExitNotCovered = 1
	ExitBadInput   = 2
)

const usage = `usage: audit builder|image [--json] [--registry] [--platform-api X.Y] REF
  audit builder REF  whether every image the builder makes starts each process type through the init,
                     on every Platform API its lifecycle supports
  audit image REF    whether every process type of the app image starts through an init
  --platform-api X.Y judge the builder for one Platform API only (0.9 for kpack)
  --registry         read REF from its registry instead of the Docker daemon
  --json             write the report as JSON
exit code: 0 covered, 1 not covered (one line per problem), 2 bad input`

// Main runs the audit command with args (without the program name), reading images from the
// Docker daemon, or with --registry from registry, and returns the exit code.
func Main(args []string, daemon, registry Source, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "audit: missing command: want builder or image\n"+usage)
		return ExitBadInput
	}
	flags := flag.NewFlagSet("audit "+args[0], flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	asJSON := flags.Bool("json", false, "")
	fromRegistry := flags.Bool("registry", false, "")
	platformAPI := flags.String("platform-api", "", "")
	var audit func(string, v1.Image) (Report, error)
	switch args[0] {
	case "builder":
		audit = func(ref string, img v1.Image) (Report, error) { return Builder(ref, img, *platformAPI) }
	case "image":
		audit = Image
	case "-h", "--help", "help":
		fmt.Fprintln(stdout, usage)
		return ExitCovered
	default:
		fmt.Fprintf(stderr, "audit: unknown command %q: want builder or image\n%s\n", args[0], usage)
		return ExitBadInput
	}

	if err := flags.Parse(args[1:]); err != nil {
		fmt.Fprintf(stderr, "audit %s: %v\n%s\n", args[0], err, usage)
		return ExitBadInput
	}
	if *platformAPI != "" && args[0] != "builder" {
		fmt.Fprintf(stderr, "audit %s: --platform-api is for audit builder\n", args[0])
		return ExitBadInput
	}
	if flags.NArg() != 1 || strings.TrimSpace(flags.Arg(0)) == "" {
		fmt.Fprintf(stderr, "audit %s: want exactly one image reference, got %d arguments\n%s\n", args[0], flags.NArg(), usage)
		return ExitBadInput
	}
	ref := flags.Arg(0)

	source := daemon
	if *fromRegistry {
		source = registry
	}
	report, err := readAndAudit(ref, source, audit)
	if err != nil {
		if *asJSON {
			_ = json.NewEncoder(stdout).Encode(struct {
				Kind  string `json:"kind"`
				Ref   string `json:"ref"`
				Error string `json:"error"`
			}{args[0], ref, err.Error()})
		}
		fmt.Fprintf(stderr, "audit %s: %v\n", args[0], err)
		return ExitBadInput
	}

	write := report.WriteText
	if *asJSON {
		write = report.WriteJSON
	}
	if err := write(stdout); err != nil {
		fmt.Fprintf(stderr, "audit %s: %v\n", args[0], err)
		return ExitBadInput
	}
	if !report.Covered {
		return ExitNotCovered
	}
	return ExitCovered
}

func readAndAudit(ref string, source Source, audit func(string, v1.Image) (Report, error)) (Report, error) {
	img, err := source(ref)
	if err != nil {
		return Report{}, err
	}
	report, err := audit(ref, img)
	if err != nil {
		return report, fmt.Errorf("%s: %w", ref, err)
	}
	return report, nil
}
