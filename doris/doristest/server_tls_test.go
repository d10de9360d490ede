package doristest

import (
	"crypto/tls"
	"net/http"
	"strings"
	"testing"
)

// WithTLS: FE and BE serve https with the given certificate, the FE's 307
// (docs/doris-facts.md §1.2) points at the https BE, and the default stays plain.
func TestWithTLSServesHTTPS(t *testing.T) {
	t.Parallel()
	pki := MustCertificates(t, "localhost", "127.0.0.1")
	s := newServer(t, WithTLS(pki.Server))
	if !strings.HasPrefix(s.FEURL(), "https://localhost:") || !strings.HasPrefix(s.BEURL(), "https://127.0.0.1:") {
		t.Fatalf("FEURL %s BEURL %s: want https", s.FEURL(), s.BEURL())
	}
	if strings.HasPrefix(s.AdminURL(), "https") {
		t.Fatalf("AdminURL %s: the admin endpoint stays plain", s.AdminURL())
	}
	hc := &http.Client{
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.Pool}},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	t.Cleanup(hc.CloseIdleConnections)
	req, err := http.NewRequest(http.MethodPut, s.FEURL()+"/api/"+testDB+"/orders/_stream_load", http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("root", "")
	req.Header.Set("Expect", "100-continue")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("PUT over https: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || !strings.HasPrefix(resp.Header.Get("Location"), withUserInfo(t, s.BEURL(), "root", "")+"/api/") {
		t.Fatalf("FE answered %d Location %q, want 307 to %s", resp.StatusCode, resp.Header.Get("Location"), s.BEURL())
	}
	// A plain-HTTP client gets no Doris answer from a TLS port.
	plain := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(plain.CloseIdleConnections)
	resp, err = plain.Get("http" + strings.TrimPrefix(s.BEURL(), "https") + "/api/_load_error_log")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("plain HTTP to the TLS BE answered %d", resp.StatusCode)
		}
	}

	if d := newServer(t); !strings.HasPrefix(d.FEURL(), "http://") || !strings.HasPrefix(d.BEURL(), "http://") {
		t.Fatalf("default FEURL %s BEURL %s: want plain http", d.FEURL(), d.BEURL())
	}
}

func TestWithTLSNeedsACertificate(t *testing.T) {
	t.Parallel()
	if _, err := NewServer(WithTLS(&tls.Config{})); err == nil || !strings.Contains(err.Error(), "WithTLS") {
		t.Fatalf("NewServer(WithTLS without certificate) = %v, want an error naming WithTLS", err)
	}
}
