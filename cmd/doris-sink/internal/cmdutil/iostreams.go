package cmdutil

import (
	"bytes"
	"io"
	"strings"
)

// IOStreams are a command's standard streams. IsTTY reports whether the
// user is at a terminal (stdin and stdout): it selects human tables over
// tab-separated output and allows interactive confirmation.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	IsTTY  bool
}

// TestStreams returns streams backed by buffers: stdin reads in, stdout
// and stderr are captured.
func TestStreams(in string, tty bool) (*IOStreams, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: strings.NewReader(in), Out: out, ErrOut: errOut, IsTTY: tty}, out, errOut
}

// NewTestFactory returns a Factory over TestStreams with no environment, for
// command tests; stdout and stderr are captured.
func NewTestFactory(tty bool) (*Factory, *bytes.Buffer, *bytes.Buffer) {
	io, out, errOut := TestStreams("", tty)
	return &Factory{IO: io, Version: "test"}, out, errOut
}
