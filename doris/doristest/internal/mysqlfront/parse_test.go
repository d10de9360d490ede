package mysqlfront

import (
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

func TestLikeMatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		p, s string
		want bool
	}{
		{"stream_load%", "stream_load_default_timeout_second", true},
		{"%timeout%", "stream_load_default_timeout_second", true},
		{"job:%:1", "job:demo.t:0:1", true},
		{"job:%:1", "job:demo.t:0:12", false},
		{"a_c", "abc", true},
		{"a\\_c", "abc", false},
		{"a\\_c", "a_c", true},
		{"ABC", "abc", true},
		{"", "", true},
		{"%", "", true},
	} {
		if got := likeMatch(c.p, c.s); got != c.want {
			t.Errorf("likeMatch(%q, %q) = %v, want %v", c.p, c.s, got, c.want)
		}
	}
}

func TestBindArgs(t *testing.T) {
	t.Parallel()
	got, err := bindArgs("SELECT '?', `?`, ? /* ? */, ?, ?, ? -- ?\n",
		[]any{mysql.TypedBytes{Type: mysql.MYSQL_TYPE_STRING, Bytes: []byte("it's")}, int64(-3), nil, 1.5})
	if err != nil {
		t.Fatal(err)
	}
	want := "SELECT '?', `?`, 'it''s' /* ? */, -3, NULL, 1.5 -- ?\n"
	if got != want {
		t.Errorf("bindArgs = %q, want %q", got, want)
	}
	if _, err := bindArgs("SELECT ?, ?", []any{int64(1)}); err == nil {
		t.Error("bindArgs with too few args: no error")
	}
}

func TestTrimStatement(t *testing.T) {
	t.Parallel()
	text, toks := trimStatement("  /* c */ SHOW `my db`.t ; ; ")
	if text != "SHOW `my db`.t" {
		t.Errorf("text = %q", text)
	}
	if len(toks) != 4 || toks[1].kind != tokQuoted || toks[1].val != "my db" {
		t.Errorf("tokens = %+v", toks)
	}
}
