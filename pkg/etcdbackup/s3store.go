package etcdbackup

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// s3PartSize is the size of each part of a snapshot's upload: the one buffer an upload
// holds (its size is not known before the stream ends), and a ten-thousandth of the
// largest snapshot it can write (S3's limit of parts), 160 GiB.
const s3PartSize = 16 << 20

// S3Config is where an S3Store keeps snapshots, and how it signs in.
type S3Config struct {
	// Endpoint is the server's URL, https only: scheme, host and port, no path.
	Endpoint string
	// Bucket must exist.
	Bucket string
	// Prefix is put before every object's name ("p/" keeps them under p/).
	Prefix string
	// Region is the bucket's region; empty is the server's default.
	Region string
	// AccessKeyID and SecretAccessKey are static credentials; they never appear in an error.
	AccessKeyID, SecretAccessKey string
	// CABundle is PEM; when set, the server's certificate must chain to it alone, otherwise
	// to the system's roots.
	CABundle []byte
}

// S3Store keeps snapshots in a bucket of S3-compatible object storage, signed with SigV4.
type S3Store struct {
	client  *minio.Client
	bucket  string
	prefix  string
	secrets []string
}

var _ Store = (*S3Store)(nil)

// NewS3Store checks cfg and builds a client; it does not reach the server.
func NewS3Store(cfg S3Config) (*S3Store, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("the S3 endpoint is not a URL: %w", err)
	}
	switch {
	case u.Scheme != "https":
		return nil, fmt.Errorf("the S3 endpoint must be https, not %q: credentials and snapshots never travel in the clear", u.Scheme)
	case u.User != nil:
		return nil, errors.New("the S3 endpoint must not carry credentials")
	case u.Host == "":
		return nil, errors.New("the S3 endpoint has no host")
	case strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "":
		return nil, errors.New("the S3 endpoint must be scheme, host and port alone")
	case cfg.Bucket == "":
		return nil, errors.New("the S3 bucket must be set")
	case cfg.AccessKeyID == "" || cfg.SecretAccessKey == "":
		return nil, errors.New("the S3 credentials must be set")
	}
	if cfg.Prefix != "" {
		if strings.HasPrefix(cfg.Prefix, "/") || strings.Contains(cfg.Prefix, "..") {
			return nil, fmt.Errorf("the S3 prefix %q must not start with a slash nor contain \"..\"", cfg.Prefix)
		}
	}
	transport, err := minio.DefaultTransport(true)
	if err != nil {
		return nil, err
	}
	if transport.TLSClientConfig == nil {
		transport.TLSClientConfig = &tls.Config{}
	}
	transport.TLSClientConfig.MinVersion = tls.VersionTLS12
	if len(cfg.CABundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cfg.CABundle) {
			return nil, errors.New("the S3 CA bundle holds no PEM certificate")
		}
		transport.TLSClientConfig.RootCAs = pool
	}
	client, err := minio.New(u.Host, &minio.Options{
		Creds:     credentials.NewStaticV4(cfg.AccessKeyID, cfg.SecretAccessKey, ""),
		Secure:    true,
		Transport: transport,
		Region:    cfg.Region,
		// Path-style: the bucket is a path of the endpoint, whose certificate names its host
		// alone.
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		return nil, fmt.Errorf("building the S3 client: %w", err)
	}
	return &S3Store{client: client, bucket: cfg.Bucket, prefix: cfg.Prefix, secrets: []string{cfg.SecretAccessKey, cfg.AccessKeyID}}, nil
}

// wrap turns err into one that names what failed and never holds a credential.
func (s *S3Store) wrap(what, name string, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, secret := range s.secrets {
		msg = strings.ReplaceAll(msg, secret, "<redacted>")
	}
	if name != "" {
		return fmt.Errorf("%s snapshot %s in bucket %s: %s", what, name, s.bucket, msg)
	}
	return fmt.Errorf("%s snapshots in bucket %s: %s", what, s.bucket, msg)
}

func (s *S3Store) key(name string) (string, error) {
	if err := ValidName(name); err != nil {
		return "", err
	}
	return s.prefix + name, nil
}

func (s *S3Store) Put(ctx context.Context, name string, r io.Reader) (int64, error) {
	key, err := s.key(name)
	if err != nil {
		return 0, err
	}
	// The size is unknown until the stream ends: a multipart upload of s3PartSize parts,
	// which the server assembles only once every part arrived, so that no half snapshot is
	// ever an object.
	info, err := s.client.PutObject(ctx, s.bucket, key, r, -1, minio.PutObjectOptions{
		PartSize:    s3PartSize,
		ContentType: "application/octet-stream",
	})
	if err != nil {
		return 0, s.wrap("writing", name, err)
	}
	return info.Size, nil
}

func (s *S3Store) Get(ctx context.Context, name string) (io.ReadCloser, error) {
	key, err := s.key(name)
	if err != nil {
		return nil, err
	}
	obj, err := s.client.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, s.wrap("reading", name, err)
	}
	// GetObject is lazy: Stat asks the server, so that a missing object is told at once.
	if _, err := obj.Stat(); err != nil {
		_ = obj.Close()
		if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
			return nil, fmt.Errorf("snapshot %s in bucket %s: %w", name, s.bucket, ErrNotFound)
		}
		return nil, s.wrap("reading", name, err)
	}
	return &s3Reader{Object: obj, store: s, name: name}, nil
}

// s3Reader keeps a read's errors free of credentials too.
type s3Reader struct {
	*minio.Object
	store *S3Store
	name  string
}

func (r *s3Reader) Read(p []byte) (int, error) {
	n, err := r.Object.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = r.store.wrap("reading", r.name, err)
	}
	return n, err
}

func (s *S3Store) List(ctx context.Context) ([]Object, error) {
	var objs []Object
	for info := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix, Recursive: true}) {
		if info.Err != nil {
			return nil, s.wrap("listing", "", info.Err)
		}
		name := strings.TrimPrefix(info.Key, s.prefix)
		if ValidName(name) != nil {
			continue // under the prefix, but not a name this store writes
		}
		objs = append(objs, Object{Name: name, Size: info.Size, ModTime: info.LastModified})
	}
	return objs, nil
}

func (s *S3Store) Delete(ctx context.Context, name string) error {
	key, err := s.key(name)
	if err != nil {
		return err
	}
	if err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil && minio.ToErrorResponse(err).Code != minio.NoSuchKey {
		return s.wrap("deleting", name, err)
	}
	return nil
}
