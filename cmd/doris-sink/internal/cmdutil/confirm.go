package cmdutil

import (
	"bufio"
	"fmt"
	"strings"
)

// Confirm guards a risky act. With yes it returns nil. Without a terminal
// it refuses (*NotConfirmedError): scripts must pass --yes. On a terminal
// it asks on stderr and accepts "y" or "yes".
func Confirm(io *IOStreams, yes bool, action string) error {
	if yes {
		return nil
	}
	if !io.IsTTY {
		return &NotConfirmedError{Action: action}
	}
	fmt.Fprintf(io.ErrOut, "? Really %s? [y/N] ", action)
	line, _ := bufio.NewReader(io.In).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return &NotConfirmedError{Action: action, Interactive: true}
}
