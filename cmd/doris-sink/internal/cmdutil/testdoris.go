//go:build !nodev

package cmdutil

import (
	"testing"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
)

// NewTestDoris starts an emulator with database demo and the table of ddl
// in it, and a client for user root (FE HTTP and MySQL), both closed when
// t ends; for command tests that talk to Doris.
func NewTestDoris(t testing.TB, ddl string) (*doristest.Server, *doris.Client) {
	t.Helper()
	s, err := doristest.NewServer(doristest.SeedDatabases("demo"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.CreateTable("demo", ddl); err != nil {
		t.Fatal(err)
	}
	c, err := doris.NewClient(doris.Config{FE: []string{s.FEURL()}, MySQL: s.MySQLAddr(), User: "root", MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return s, c
}
