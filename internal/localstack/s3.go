package localstack

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3 is a running S3-compatible object store: versitygw (built by hack/tools into
// _output/bin) serving a directory over TLS with SigV4 authentication, a real S3
// implementation rather than a fake (docs/TESTING.md). It needs no Stack: a package's test
// runs it alone.
type S3 struct {
	// Endpoint is the server's URL, https://127.0.0.1:<port>.
	Endpoint string
	// CAPEM is the CA of its serving certificate, a CA of its own.
	CAPEM []byte
	// AccessKeyID and SecretAccessKey are its root user's, random for each start.
	AccessKeyID, SecretAccessKey string
	// Region is the region it answers for.
	Region string
	// Bucket was created at start.
	Bucket string
	// DataDir holds the buckets: the object k of bucket b is the file DataDir/b/k.
	DataDir string

	proc *Process
}

// S3Options say where the store keeps its state and which bucket it starts with.
type S3Options struct {
	// Dir holds the store's data (data/), its certificates (pki/) and its log (logs/).
	Dir string
	// Bin is versitygw's binary; ToolBin("versitygw") when empty.
	Bin string
	// Bucket is created at start; "snapshots" when empty.
	Bucket string
}

// ToolBin is the path of a tool that hack/tools builds into the repository's _output/bin,
// or an error that says how to build it when it is missing.
func ToolBin(name string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(root, "_output", "bin", name)
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("missing %s: run `make tools` first", bin)
	}
	return bin, nil
}

// StartS3 runs versitygw's POSIX backend on opts.Dir, on a free loopback port, and returns
// once its bucket is created. Stop ends it; the directory stays.
func StartS3(ctx context.Context, opts S3Options) (s *S3, err error) {
	if opts.Bin == "" {
		if opts.Bin, err = ToolBin("versitygw"); err != nil {
			return nil, err
		}
	}
	if opts.Bucket == "" {
		opts.Bucket = "snapshots"
	}
	s = &S3{Region: "us-east-1", Bucket: opts.Bucket, DataDir: filepath.Join(opts.Dir, "data")}
	for _, d := range []string{s.DataDir, filepath.Join(opts.Dir, "logs")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	pkiDir := filepath.Join(opts.Dir, "pki")
	ca, err := LoadOrCreateCA(pkiDir, "s3-ca")
	if err != nil {
		return nil, err
	}
	serving, err := ca.Issue(pkiDir, "s3-server", CertSpec{
		CommonName: "s3",
		DNSNames:   []string{"localhost"},
		IPs:        []net.IP{net.ParseIP("127.0.0.1")},
		Usages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return nil, err
	}
	s.CAPEM = ca.CertPEM
	if s.AccessKeyID, err = randomHex(10); err != nil {
		return nil, err
	}
	if s.SecretAccessKey, err = randomHex(20); err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	s.Endpoint = "https://127.0.0.1:" + strconv.Itoa(port)
	// The root credentials go by the environment, never on the command line. Every path is
	// absolute: versitygw resolves the certificate's after entering its data directory.
	s.proc, err = StartProcessWithEnv(filepath.Join(opts.Dir, "logs"), "versitygw", opts.Bin,
		[]string{"ROOT_ACCESS_KEY_ID=" + s.AccessKeyID, "ROOT_SECRET_ACCESS_KEY=" + s.SecretAccessKey},
		"--port", "127.0.0.1:"+strconv.Itoa(port), "--region", s.Region,
		"--cert", absPath(serving.CertFile), "--key", absPath(serving.KeyFile), "--quiet",
		"posix", absPath(s.DataDir))
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	client, err := s.Client()
	if err != nil {
		return nil, err
	}
	err = Poll(ctx, "versitygw to serve", time.Minute, []*Process{s.proc}, func(ctx context.Context) (bool, error) {
		err := client.MakeBucket(ctx, s.Bucket, minio.MakeBucketOptions{Region: s.Region})
		if code := minio.ToErrorResponse(err).Code; code == minio.BucketAlreadyOwnedByYou {
			return true, nil // kept from an earlier start on the same directory
		}
		return err == nil, err
	})
	return s, err
}

// Client is an S3 client of the store as its root user, trusting its CA alone.
func (s *S3) Client() (*minio.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.CAPEM) {
		return nil, errors.New("the S3 CA holds no certificate")
	}
	return minio.New(s.Endpoint[len("https://"):], &minio.Options{
		Creds:        credentials.NewStaticV4(s.AccessKeyID, s.SecretAccessKey, ""),
		Secure:       true,
		Region:       s.Region,
		BucketLookup: minio.BucketLookupPath,
		Transport:    &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	})
}

// Stop ends the server.
func (s *S3) Stop() {
	if s.proc != nil {
		s.proc.Stop()
	}
}

// Log is the end of the server's log.
func (s *S3) Log() string { return s.proc.Tail(20) }

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
