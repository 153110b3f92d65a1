package embeddedetcd

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pkiDirName is the directory inside the embedded etcd's directory that holds the certificates
// by which the member and the server know each other.
const pkiDirName = "pki"

// The files in the pki directory, each mode 0600. The CA's key is never written: the CA signs
// the three certificates once and is thrown away, so that nothing on disk can mint another
// client. When any file is missing, unreadable, or near its end, all are made anew.
const (
	caCertFile     = "ca.crt"
	serverCertFile = "server.crt"
	serverKeyFile  = "server.key"
	clientCertFile = "client.crt"
	clientKeyFile  = "client.key"
)

// The common names of the two leaf certificates, each the only one its listener admits.
const (
	memberCN = "kcp-setups embedded etcd"
	clientCN = "kcp-setups-apiserver"
)

const (
	// certValidity is how long the certificates are valid. They never leave the data
	// directory, whose reader could read the data itself, so a long life costs nothing and
	// spares a long-running server a certificate that ends under it.
	certValidity = 10 * 365 * 24 * time.Hour
	// renewBefore is how close to its end a certificate is replaced at start.
	renewBefore = 90 * 24 * time.Hour
)

// Credentials are the files a client of the member presents and verifies it by.
type Credentials struct {
	// CertFile and KeyFile are the client certificate and its key.
	CertFile, KeyFile string
	// CAFile is the CA that signed the member's serving certificate.
	CAFile string
}

// TLSConfig is a client TLS configuration with these credentials.
func (c Credentials) TLSConfig() (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("loading the embedded etcd's client certificate: %w", err)
	}
	caPEM, err := os.ReadFile(c.CAFile)
	if err != nil {
		return nil, fmt.Errorf("reading the embedded etcd's CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("no certificate in %s", c.CAFile)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool, MinVersion: tls.VersionTLS13}, nil
}

// pki are the paths of the member's certificates.
type pki struct {
	dir string
}

func (p pki) path(name string) string { return filepath.Join(p.dir, name) }

// client is what the server presents to the member.
func (p pki) client() Credentials {
	return Credentials{CertFile: p.path(clientCertFile), KeyFile: p.path(clientKeyFile), CAFile: p.path(caCertFile)}
}

// ensurePKI makes sure dir/pki holds a CA, a serving certificate for the member on loopback
// (also its peer certificate) and a client certificate for the server, all signed by the CA:
// those of an earlier start when they are whole and not near their end, new ones otherwise.
func ensurePKI(dir string) (pki, error) {
	p := pki{dir: filepath.Join(dir, pkiDirName)}
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return p, fmt.Errorf("creating the embedded etcd's certificate directory: %w", err)
	}
	if err := os.Chmod(p.dir, 0o700); err != nil {
		return p, fmt.Errorf("securing the embedded etcd's certificate directory: %w", err)
	}
	if err := p.check(time.Now()); err == nil {
		// Kept private even if someone widened them.
		for _, name := range []string{caCertFile, serverCertFile, serverKeyFile, clientCertFile, clientKeyFile} {
			if err := os.Chmod(p.path(name), 0o600); err != nil {
				return p, fmt.Errorf("securing the embedded etcd's certificates: %w", err)
			}
		}
		return p, nil
	}
	if err := p.generate(time.Now()); err != nil {
		return p, fmt.Errorf("generating the embedded etcd's certificates: %w", err)
	}
	return p, nil
}

// check says why the files cannot be used as they are, if they cannot.
func (p pki) check(now time.Time) error {
	caPEM, err := os.ReadFile(p.path(caCertFile))
	if err != nil {
		return err
	}
	ca, err := parseCert(caPEM)
	if err != nil {
		return err
	}
	if !ca.IsCA {
		return errors.New("the CA is no CA")
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	for _, leaf := range []struct {
		cert, key string
		usage     x509.ExtKeyUsage
		ip        string
	}{
		{serverCertFile, serverKeyFile, x509.ExtKeyUsageServerAuth, "127.0.0.1"},
		{clientCertFile, clientKeyFile, x509.ExtKeyUsageClientAuth, ""},
	} {
		certPEM, err := os.ReadFile(p.path(leaf.cert))
		if err != nil {
			return err
		}
		keyPEM, err := os.ReadFile(p.path(leaf.key))
		if err != nil {
			return err
		}
		if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
			return err
		}
		cert, err := parseCert(certPEM)
		if err != nil {
			return err
		}
		if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now.Add(renewBefore), KeyUsages: []x509.ExtKeyUsage{leaf.usage}}); err != nil {
			return err
		}
		if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{leaf.usage}}); err != nil {
			return err
		}
		if leaf.ip != "" {
			if err := cert.VerifyHostname(leaf.ip); err != nil {
				return err
			}
		}
	}
	return nil
}

// generate makes a new CA, signs the serving and client certificates with it, writes them
// and forgets the CA's key.
func (p pki) generate(now time.Time) error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTemplate := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "kcp-setups embedded etcd CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := sign(caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	files := map[string][]byte{caCertFile: pemCert(caDER)}
	for _, leaf := range []struct {
		cert, key string
		template  *x509.Certificate
	}{{
		// The member serves clients and its peer listener with it, and would present it as
		// a peer's client certificate, hence both usages.
		cert: serverCertFile, key: serverKeyFile,
		template: &x509.Certificate{
			Subject:     pkix.Name{CommonName: memberCN},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
			DNSNames:    []string{"localhost"},
		},
	}, {
		// No SANs: etcd checks a client certificate's SANs against the caller's address
		// when it has any.
		cert: clientCertFile, key: clientKeyFile,
		template: &x509.Certificate{
			Subject:     pkix.Name{CommonName: clientCN},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		},
	}} {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		leaf.template.NotBefore, leaf.template.NotAfter = now.Add(-time.Hour), now.Add(certValidity)
		leaf.template.KeyUsage = x509.KeyUsageDigitalSignature
		der, err := sign(leaf.template, ca, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return err
		}
		files[leaf.cert] = pemCert(der)
		files[leaf.key] = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	}
	// The CA goes last: until it is written, a crash leaves a set that check refuses.
	if err := os.Remove(p.path(caCertFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, name := range []string{serverCertFile, serverKeyFile, clientCertFile, clientKeyFile, caCertFile} {
		if err := writePrivate(p.path(name), files[name]); err != nil {
			return err
		}
	}
	return nil
}

// sign issues template, with a random serial, signed by parent's key.
func sign(template, parent *x509.Certificate, pub *ecdsa.PublicKey, signer *ecdsa.PrivateKey) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	template.SerialNumber = serial
	return x509.CreateCertificate(rand.Reader, template, parent, pub, signer)
}

func pemCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func parseCert(data []byte) (*x509.Certificate, error) {
	block, rest := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" || len(bytes.TrimSpace(rest)) > 0 {
		return nil, errors.New("not a single PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

// writePrivate replaces path with data, mode 0600, through a temporary file and a rename so
// that a crash never leaves half a file.
func writePrivate(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
