package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/constraintlab/assistant/internal/config"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// errUsage marks errors in how the command was called (exit code 2).
var errUsage = errors.New("usage")

func exitCode(err error) int {
	if errors.Is(err, errUsage) {
		return 2
	}
	return 1
}

// env is what a subcommand may use of the outside world. Only run() and the
// subcommands read it; no package reads os directly.
type env struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	now    func() time.Time
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e env, args []string) error
}

func commands() []command {
	return []command{
		{"serve", "serve the HTTP API (creates and migrates the database, loads the knowledge base)", serve},
		{"migrate", "apply pending database migrations and exit, or copy a deployment to another database (--from, --to)", migrate},
		{"keys", "create, list and revoke API keys", keysCommand},
		{"admin", "manage admin users of the admin area", adminCommand},
		{"webhooks", "manage webhook endpoints and their delivery log", webhooksCommand},
		{"kb", "validate, import or export the knowledge base", kbCommand},
		{"eval", "score retrieval, archetype matching or claim verification on a file (D26)", evalCommand},
		{"version", "print the version", printVersion},
	}
}

// run is the whole program: main only adds signals and the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	e := env{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr, now: time.Now}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return fmt.Errorf("%w: a subcommand is required", errUsage)
		}
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(ctx, e, args[1:])
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
	}
	usage(stderr)
	return fmt.Errorf("%w: unknown subcommand %q", errUsage, args[0])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: assistant <subcommand> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Subcommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'assistant <subcommand> --help' for its flags. Settings come from ASSISTANT_* environment variables;\na subcommand also takes the settings it uses as flags (docs/operations.md).")
}

// The configuration settings each kind of subcommand offers as flags
// (config.LoadFlags); the other settings are still read from their
// ASSISTANT_* variables. serve offers all of them (config.Load).
var (
	// storeSettings: subcommands that open the database.
	storeSettings = config.StoreFlags
	// chatSettings: eval chat, which also runs the model provider and logs.
	chatSettings = append(append(append([]string{}, config.StoreFlags...), config.ModelFlags...), "log-level")
)

// commandFlags returns the flag set of a subcommand; the subcommand adds
// its own flags, and parseConfig adds the configuration settings it uses
// next to them. --help prints the usage line and about, then those flags.
func commandFlags(e env, usage, about string) *flag.FlagSet {
	var name []string // the leading words of usage: "keys create"
	for _, w := range strings.Fields(usage) {
		if !commandWord.MatchString(w) {
			break
		}
		name = append(name, w)
	}
	fs := flag.NewFlagSet("assistant "+strings.Join(name, " "), flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: assistant %s [flags]\n\n", usage)
		if about != "" {
			fmt.Fprintf(fs.Output(), "%s\n\n", about)
		}
		fmt.Fprintln(fs.Output(), "Flags:")
		fs.PrintDefaults()
		for _, s := range config.Settings {
			if fs.Lookup(s.Flag) == nil {
				fmt.Fprintln(fs.Output(), "\nThe other ASSISTANT_* settings (docs/operations.md) are read from the environment.")
				break
			}
		}
	}
	return fs
}

// parseConfig parses args with fs over the environment: the subcommand's
// own flags and the configuration settings named in settings (flag names;
// nil for all of them), in any order with the positional arguments, which
// stay in fs.Args().
func parseConfig(e env, fs *flag.FlagSet, args []string, settings []string) (*config.Config, error) {
	var cfg *config.Config
	var err error
	if settings == nil {
		cfg, err = config.Load(fs, args, e.getenv)
	} else {
		cfg, err = config.LoadFlags(fs, args, e.getenv, settings)
	}
	if errors.Is(err, config.ErrFlags) {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	return cfg, err
}

// loadConfig is parseConfig for subcommands with no flags or arguments of
// their own.
func loadConfig(e env, name string, args []string, settings []string) (*config.Config, error) {
	fs := commandFlags(e, name, "")
	cfg, err := parseConfig(e, fs, args, settings)
	if err == nil && fs.NArg() > 0 {
		return nil, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	return cfg, err
}

var commandWord = regexp.MustCompile(`^[a-z][a-z-]*$`)

func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

func printVersion(_ context.Context, e env, args []string) error {
	fs := flag.NewFlagSet("assistant version", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: assistant version

Prints "assistant" and the version of this binary on stdout, e.g.
"assistant v0.3.0" ("dev" when it was built without -ldflags "-X main.version=...").
It takes no flags or arguments and reads no settings.
`)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: version takes no arguments (got %q)", errUsage, fs.Arg(0))
	}
	fmt.Fprintln(e.stdout, "assistant", version)
	return nil
}
