package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pid1-buildpacks/init/init/internal/config"
	"github.com/pid1-buildpacks/init/init/internal/signals"
)

// checkError fails unless err is nil or a one-line *config.Error for
// variable that quotes value.
func checkError(t *testing.T, err error, variable, value string) {
	t.Helper()
	if err == nil {
		return
	}
	var cerr *config.Error
	if !errors.As(err, &cerr) || cerr.Variable != variable || cerr.Value != value || cerr.Accepted == "" {
		t.Fatalf("unexpected error for %q: %#v", value, err)
	}
	if !strings.HasPrefix(err.Error(), "invalid "+variable+"=") {
		t.Fatalf("error does not name %s: %s", variable, err)
	}
}

func FuzzParseGracePeriod(f *testing.F) {
	for _, seed := range []string{"5", "5s", "1m30s", "-1", "1.5", "0", "", "9223372036854775807", "1e3s"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d, err := config.ParseGracePeriod(v)
		checkError(t, err, config.EnvGracePeriod, v)
		if err == nil && d < 0 {
			t.Fatalf("negative grace period %s from %q", d, v)
		}
	})
}

func FuzzParseSignalRewrite(f *testing.F) {
	for _, seed := range []string{"TERM:QUIT", "sigint:Sigterm, 10:12", "KILL:TERM", "TERM:QUIT,TERM:INT", ":", ",", "1:64"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		rewrite, err := config.ParseSignalRewrite(v)
		checkError(t, err, config.EnvSignalRewrite, v)
		for from, to := range rewrite {
			if !signals.Forwardable(from) || to < 1 || to > signals.Max {
				t.Fatalf("bad pair %d:%d from %q", from, to, v)
			}
		}
	})
}

func FuzzParseSuccessExitCodes(f *testing.F) {
	for _, seed := range []string{"143", "0,255", "256", "-1", " 1 , 2 ", "1,,2"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		codes, err := config.ParseSuccessExitCodes(v)
		checkError(t, err, config.EnvSuccessExitCodes, v)
		for _, c := range codes {
			if c < 0 || c > 255 {
				t.Fatalf("code %d out of range from %q", c, v)
			}
		}
	})
}

func FuzzParseKeywords(f *testing.F) {
	for _, seed := range []string{"true", "FALSE", "group", "child", "error", "info", "debug", "", "tRuE"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		_, err := config.ParseEnabled(v)
		checkError(t, err, config.EnvEnabled, v)
		_, err = config.ParseSignalTarget(v)
		checkError(t, err, config.EnvSignalTarget, v)
		_, err = config.ParseLogLevel(v)
		checkError(t, err, config.EnvLogLevel, v)
	})
}

func FuzzLoad(f *testing.F) {
	f.Add("true", "group", "5s", "TERM:QUIT", "143", "debug")
	f.Add("no", "x", "-1", "KILL:TERM", "999", "loud")
	f.Fuzz(func(t *testing.T, enabled, target, grace, rewrite, codes, level string) {
		env := map[string]string{
			config.EnvEnabled: enabled, config.EnvSignalTarget: target, config.EnvGracePeriod: grace,
			config.EnvSignalRewrite: rewrite, config.EnvSuccessExitCodes: codes, config.EnvLogLevel: level,
		}
		_, err := config.Load(lookup(env))
		var cerr *config.Error
		if err != nil && (!errors.As(err, &cerr) || env[cerr.Variable] != cerr.Value) {
			t.Fatalf("unexpected error %#v", err)
		}
	})
}
