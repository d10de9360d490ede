package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Config errors never quote credentials of an FE URL (issue 10 finding 5).
func TestConfigErrorRedactsURLCredentials(t *testing.T) {
	t.Parallel()
	_, err := load(t, "doris:\n  fe: [\"ftp://root:s3cret@fe:8030\"]\n", nil, nil, 0)
	if err == nil {
		t.Fatal("no error")
	}
	keyError(t, err, "doris.fe")
	if strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("config error leaks the password: %v", err)
	}
}

// doris.database and doris.table follow Doris's rules (FeNameFormat.java):
// '.', '/' or a leading digit are refused at load, naming the key.
func TestDorisNamesValidated(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ key, yaml string }{
		{"doris.database", "doris:\n  database: \"..\"\n"},
		{"doris.database", "doris:\n  database: \"a/b\"\n"},
		{"doris.table", "doris:\n  table: \"1t\"\n"},
		{"doris.table", "doris:\n  table: \"t.x\"\n"},
	} {
		_, err := load(t, tc.yaml, nil, nil, 0)
		keyError(t, err, tc.key)
	}
	mustLoad(t, "doris:\n  database: demo\n  table: orders-2\n", nil, nil, 0)
}

func TestSecurityKeysDecodedAndValidated(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, "doris:\n  mysql_tls: Preferred\n  mysql_allow_insecure_auth: true\n  redirect_allow_hosts: [be1.lan, \"*\"]\n  redirect_allow_http: true\n", nil, nil, 0)
	if c.Doris.MySQLTLS != "preferred" || !c.Doris.MySQLAllowInsecureAuth || !c.Doris.RedirectAllowHTTP ||
		len(c.Doris.RedirectAllowHosts) != 2 {
		t.Fatalf("decoded %+v", c.Doris)
	}
	_, err := load(t, "doris:\n  mysql_tls: sometimes\n", nil, nil, 0)
	keyError(t, err, "doris.mysql_tls")
	_, err = load(t, "doris:\n  redirect_allow_hosts: [\"http://be:8040\"]\n", nil, nil, 0)
	keyError(t, err, "doris.redirect_allow_hosts")
}

// A password_file or TLS key_file with group/other read bits is warned
// about; 0600 is not. SASL PLAIN without TLS is warned about.
func TestSecurityWarnings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	closed := filepath.Join(dir, "closed")
	for p, mode := range map[string]os.FileMode{open: 0o644, closed: 0o600} {
		if err := os.WriteFile(p, []byte("pw\n"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // umask
			t.Fatal(err)
		}
	}
	c := mustLoad(t, "doris:\n  password_file: "+open+"\nkafka:\n  sasl:\n    mechanism: plain\n    user: u\n    password_file: "+closed+"\n", nil, nil, 0)
	w := strings.Join(c.Warnings, "\n")
	if !strings.Contains(w, "doris.password_file "+open+" is readable by group or others") {
		t.Errorf("no warning for a 0644 password_file:\n%s", w)
	}
	if strings.Contains(w, closed) {
		t.Errorf("warning for a 0600 file:\n%s", w)
	}
	if !strings.Contains(w, "SASL PLAIN sends") {
		t.Errorf("no warning for SASL PLAIN without TLS:\n%s", w)
	}
	c = mustLoad(t, "kafka:\n  tls: true\n  sasl:\n    mechanism: plain\n    user: u\n    password_file: "+closed+"\n", nil, nil, 0)
	if len(c.Warnings) != 0 {
		t.Errorf("warnings with TLS and 0600: %q", c.Warnings)
	}
}
