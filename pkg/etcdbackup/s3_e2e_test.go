//go:build e2e

package etcdbackup

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/internal/localstack"
)

// startS3 runs versitygw from _output/bin (make tools); a missing binary fails the test.
func startS3(t *testing.T) *localstack.S3 {
	t.Helper()
	s3, err := localstack.StartS3(t.Context(), localstack.S3Options{Dir: t.TempDir(), Bucket: "backups"})
	require.NoError(t, err)
	t.Cleanup(s3.Stop)
	return s3
}

func s3Config(s3 *localstack.S3) S3Config {
	return S3Config{
		Endpoint: s3.Endpoint, Bucket: s3.Bucket, Prefix: "root/", Region: s3.Region,
		AccessKeyID: s3.AccessKeyID, SecretAccessKey: s3.SecretAccessKey, CABundle: s3.CAPEM,
	}
}

// TestSaveToS3AndVerify saves a real member's snapshot to a real S3 server (versitygw over
// TLS, SigV4), verifies it there, keeps the newest, and refuses a corrupted copy.
func TestSaveToS3AndVerify(t *testing.T) {
	s3 := startS3(t)
	store, err := NewS3Store(s3Config(s3))
	require.NoError(t, err)
	c, url := etcdWithKeys(t, 3000)

	snap, err := Save(t.Context(), c.Maintenance, url, store, "root")
	require.NoError(t, err)
	assert.Greater(t, snap.Size, int64(3000*1000))
	require.NoError(t, Verify(t.Context(), store, snap.Name))
	// It is an object of the bucket, under the prefix, on the server's disk.
	info, err := os.Stat(filepath.Join(s3.DataDir, s3.Bucket, "root", snap.Name))
	require.NoError(t, err)
	assert.Equal(t, snap.Size, info.Size())

	again, err := Save(t.Context(), c.Maintenance, url, store, "root")
	require.NoError(t, err)
	objs, err := store.List(t.Context())
	require.NoError(t, err)
	require.Len(t, objs, 2)
	deleted, err := Retain(t.Context(), store, "root", 1)
	require.NoError(t, err)
	assert.Equal(t, []string{snap.Name}, deleted)
	_, err = store.Get(t.Context(), snap.Name)
	assert.ErrorIs(t, err, ErrNotFound)

	// A copy with one byte flipped, written in its place through S3: refused.
	rc, err := store.Get(t.Context(), again.Name)
	require.NoError(t, err)
	data, err := io.ReadAll(rc)
	require.NoError(t, rc.Close())
	require.NoError(t, err)
	data[len(data)/3] ^= 0x01
	_, err = store.Put(t.Context(), again.Name, bytes.NewReader(data))
	require.NoError(t, err)
	err = Verify(t.Context(), store, again.Name)
	require.ErrorIs(t, err, ErrCorrupt)

	// Truncated on the server's disk: refused too.
	path := filepath.Join(s3.DataDir, s3.Bucket, "root", again.Name)
	require.NoError(t, os.Truncate(path, int64(len(data)-100)))
	require.ErrorIs(t, Verify(t.Context(), store, again.Name), ErrCorrupt)
}

// TestS3StoreRefusals: no plain http, a server whose certificate does not chain to the
// bundle is not trusted, and a refused sign-in never shows the credentials.
func TestS3StoreRefusals(t *testing.T) {
	s3 := startS3(t)

	plain := s3Config(s3)
	plain.Endpoint = strings.Replace(s3.Endpoint, "https://", "http://", 1)
	_, err := NewS3Store(plain)
	assert.ErrorContains(t, err, "must be https")

	otherCA := s3Config(s3)
	other, err := localstack.LoadOrCreateCA(t.TempDir(), "other")
	require.NoError(t, err)
	otherCA.CABundle = other.CertPEM
	store, err := NewS3Store(otherCA)
	require.NoError(t, err)
	_, err = store.Put(t.Context(), "root-20261128-101500", strings.NewReader("x"))
	assert.ErrorContains(t, err, "certificate")

	wrong := s3Config(s3)
	wrong.SecretAccessKey = "not-" + s3.SecretAccessKey
	store, err = NewS3Store(wrong)
	require.NoError(t, err)
	_, err = store.Put(t.Context(), "root-20261128-101500", strings.NewReader("x"))
	require.Error(t, err)
	_, err2 := store.List(t.Context())
	require.Error(t, err2)
	for _, e := range []error{err, err2} {
		assert.NotContains(t, e.Error(), s3.SecretAccessKey)
		assert.NotContains(t, e.Error(), s3.AccessKeyID)
	}
	t.Logf("a refused sign-in reads: %v", err)
}
