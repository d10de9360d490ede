package dev

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

// parse runs the dev command's parsing with env and args and returns the
// options it would run with.
func parse(t *testing.T, env []string, args ...string) (*Options, error) {
	t.Helper()
	f, _, _ := cmdutil.NewTestFactory(false)
	f.Environ = func() []string { return env }
	var got *Options
	cmd := NewCmdDev(f, func(_ context.Context, o *Options) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(new(strings.Builder))
	cmd.SetErr(new(strings.Builder))
	return got, cmd.Execute()
}

// The password never comes from the command line (issue 10): --password is
// refused with the alternatives, which both work.
func TestDevPasswordSources(t *testing.T) {
	t.Parallel()
	var fe *cmdutil.FlagError
	if _, err := parse(t, nil, "--password", "secret"); !errors.As(err, &fe) ||
		!strings.Contains(err.Error(), "--password-file") || !strings.Contains(err.Error(), PasswordEnv) {
		t.Errorf("--password: %v, want a flag error naming the alternatives", err)
	}
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if o, err := parse(t, nil, "--password-file", pwFile); err != nil || o.Password != "from-file" || passwordNote(o) != "from --password-file" {
		t.Errorf("--password-file: %+v, %v", o, err)
	}
	if o, err := parse(t, []string{"HOME=/x", PasswordEnv + "=from-env"}); err != nil || o.Password != "from-env" || passwordNote(o) != "from "+PasswordEnv {
		t.Errorf("%s: %+v, %v", PasswordEnv, o, err)
	}
	if _, err := parse(t, []string{PasswordEnv + "=x"}, "--password-file", pwFile); !errors.As(err, &fe) {
		t.Errorf("both sources: %v, want a flag error", err)
	}
	if _, err := parse(t, nil, "--password-file", filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing --password-file accepted")
	}
	tokFile := filepath.Join(t.TempDir(), "tok")
	if err := os.WriteFile(tokFile, []byte("t0k\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if o, err := parse(t, nil, "--admin-token-file", tokFile); err != nil || o.adminToken != "t0k" {
		t.Errorf("--admin-token-file: %+v, %v", o, err)
	}
	if err := os.WriteFile(tokFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := parse(t, nil, "--admin-token-file", tokFile); err == nil {
		t.Error("empty --admin-token-file accepted")
	}
	if o, err := parse(t, nil); err != nil || o.Password != "" || passwordNote(o) != "empty" {
		t.Errorf("default: %+v, %v", o, err)
	}
}

// Listeners stay on loopback unless --allow-non-loopback; with it, dev warns
// on stderr, prints the bind address and the admin endpoint's token, and the
// admin endpoint requires that token.
func TestDevNonLoopback(t *testing.T) {
	t.Parallel()
	for _, flag := range []string{"--fe-http", "--be-http", "--mysql", "--kafka", "--admin", "--schema-registry"} {
		var fe *cmdutil.FlagError
		if _, err := parse(t, nil, flag, "0.0.0.0:0"); !errors.As(err, &fe) || !strings.Contains(err.Error(), "--allow-non-loopback") {
			t.Errorf("%s 0.0.0.0:0: %v, want a flag error naming --allow-non-loopback", flag, err)
		}
	}

	f, _, errOut := cmdutil.NewTestFactory(false)
	ep := startDev(t, f, "--allow-non-loopback", "--admin", "0.0.0.0:0")
	if w := errOut.String(); !strings.Contains(w, "WARNING") || !strings.Contains(w, "--admin 0.0.0.0:0") || strings.Contains(w, "--fe-http") {
		t.Errorf("stderr %q: want a warning naming only --admin", w)
	}
	if !strings.HasPrefix(ep.Admin, "http://0.0.0.0:") || ep.AdminToken == "" {
		t.Fatalf("endpoints %+v: want the bind address and a token", ep)
	}
	port := ep.Admin[strings.LastIndex(ep.Admin, ":")+1:]
	for tok, want := range map[string]int{"": http.StatusUnauthorized, ep.AdminToken: http.StatusOK} {
		req, _ := http.NewRequest("GET", "http://127.0.0.1:"+port+"/faults", nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("admin with token %q: HTTP %d, want %d", tok, resp.StatusCode, want)
		}
	}
}
