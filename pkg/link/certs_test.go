package link

import (
	"crypto/ecdsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"testing"
	"time"

	"github.com/kcp-setups/apiserver/pkg/link/linktest"
)

// now is the tests' clock.
var now = time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)

// testCA is a CA made in a test.
type testCA struct{ linktest.CA }

func newKey(t *testing.T) *ecdsa.PrivateKey { return linktest.NewKey(t) }

// newCA makes a self-signed CA valid a year around now.
func newCA(t *testing.T, cn string) testCA {
	return testCA{linktest.NewCA(t, cn, now.Add(-365*24*time.Hour), now.Add(365*24*time.Hour))}
}

// leaf is a certificate to issue.
type leaf struct {
	dns      []string
	uris     []string
	from, to time.Time
	usages   []x509.ExtKeyUsage
}

// client is a link client certificate for identity and the URI SAN uri, valid a day around
// now.
func client(identity, uri string) leaf {
	l := leaf{dns: []string{identity}, from: now.Add(-24 * time.Hour), to: now.Add(24 * time.Hour),
		usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if uri != "" {
		l.uris = []string{uri}
	}
	return l
}

// issue signs l with ca and returns the certificate and its key.
func (ca testCA) issue(t *testing.T, l leaf) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	return ca.Issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "link"}, NotBefore: l.from, NotAfter: l.to, DNSNames: l.dns,
		URIs: linktest.URIs(t, l.uris...), ExtKeyUsage: l.usages, KeyUsage: x509.KeyUsageDigitalSignature})
}
