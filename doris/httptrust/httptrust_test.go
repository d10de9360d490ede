package httptrust_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris/httptrust"
)

func TestRefusedIP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ip         string
		loopbackOK bool
		refused    bool
	}{
		{"169.254.169.254", true, true},
		{"fe80::1", true, true},
		{"0.0.0.0", true, true},
		{"0.1.2.3", true, true},
		{"::", true, true},
		{"224.0.0.1", true, true},
		{"ff02::1", true, true},
		{"255.255.255.255", true, true},
		{"::ffff:169.254.169.254", true, true},
		{"127.0.0.1", false, true},
		{"::1", false, true},
		{"127.0.0.1", true, false},
		{"10.0.0.5", false, false},
		{"192.168.1.2", false, false},
		{"2001:db8::1", false, false},
	} {
		if got := httptrust.RefusedIP(net.ParseIP(tc.ip), tc.loopbackOK) != ""; got != tc.refused {
			t.Errorf("RefusedIP(%s, loopbackOK %t) refused = %t, want %t", tc.ip, tc.loopbackOK, got, tc.refused)
		}
	}
}

func TestRedirectSchemeAndSameHost(t *testing.T) {
	t.Parallel()
	u := func(s string) *url.URL { v, _ := url.Parse(s); return v }
	if err := httptrust.RedirectScheme(u("https://a/x"), u("http://a/y")); !errors.Is(err, httptrust.ErrDowngrade) {
		t.Errorf("https → http: %v, want ErrDowngrade", err)
	}
	if err := httptrust.RedirectScheme(u("http://a/x"), u("file:///etc/passwd")); !errors.Is(err, httptrust.ErrScheme) {
		t.Errorf("http → file: %v, want ErrScheme", err)
	}
	if err := httptrust.RedirectScheme(u("http://a/x"), u("https://b/y")); err != nil {
		t.Errorf("http → https: %v", err)
	}
	if !httptrust.SameHost("SR.example", "sr.example") || !httptrust.SameHost("localhost", "[::1]") || httptrust.SameHost("a", "b") {
		t.Error("SameHost: wrong answer")
	}
}

// The guard checks the IP actually dialed: "localhost" is a name the
// dialer resolves to a loopback IP, refused when loopback is not allowed,
// before any connection is made (the listener sees none).
func TestGuardedDialChecksTheResolvedIP(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan struct{}, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	d := &net.Dialer{Timeout: 5 * time.Second}
	dial := func(guard, loopbackOK bool) error {
		dc := httptrust.GuardedDial(d, func(context.Context, string) httptrust.DialPolicy {
			return httptrust.DialPolicy{Guard: guard, LoopbackOK: func() bool { return loopbackOK }}
		})
		c, err := dc(context.Background(), "tcp4", net.JoinHostPort("localhost", port))
		if err == nil {
			c.Close()
		}
		return err
	}
	err = dial(true, false)
	var ae *httptrust.AddressError
	if !errors.As(err, &ae) || ae.IP != "127.0.0.1" || !strings.Contains(err.Error(), "localhost:"+port) {
		t.Fatalf("guarded dial of localhost with loopback refused: %v, want an *AddressError naming localhost and 127.0.0.1", err)
	}
	if err := dial(true, true); err != nil {
		t.Fatalf("guarded dial with loopback allowed: %v", err)
	}
	if err := dial(false, false); err != nil {
		t.Fatalf("unguarded dial: %v", err)
	}
	<-accepted
	<-accepted
	select {
	case <-accepted:
		t.Fatal("the refused dial reached the listener")
	default:
	}
}
