package etcdbackup

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewS3StoreRefusesWhatItCannotTrust(t *testing.T) {
	valid := S3Config{Endpoint: "https://s3.example:9000", Bucket: "b", AccessKeyID: "AKID", SecretAccessKey: "SECRET"}
	_, err := NewS3Store(valid)
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		change func(*S3Config)
		want   string
	}{
		{"plain http", func(c *S3Config) { c.Endpoint = "http://s3.example:9000" }, "must be https"},
		{"no scheme", func(c *S3Config) { c.Endpoint = "s3.example:9000" }, "must be https"},
		{"credentials in the URL", func(c *S3Config) { c.Endpoint = "https://u:p@s3.example" }, "must not carry credentials"},
		{"a path", func(c *S3Config) { c.Endpoint = "https://s3.example/bucket" }, "scheme, host and port alone"},
		{"no bucket", func(c *S3Config) { c.Bucket = "" }, "bucket must be set"},
		{"no secret", func(c *S3Config) { c.SecretAccessKey = "" }, "credentials must be set"},
		{"a prefix leaving the bucket", func(c *S3Config) { c.Prefix = "../x/" }, "prefix"},
		{"a CA bundle of no certificate", func(c *S3Config) { c.CABundle = []byte("not PEM") }, "no PEM certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := valid
			tc.change(&cfg)
			_, err := NewS3Store(cfg)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func TestS3ErrorsNeverHoldCredentials(t *testing.T) {
	s, err := NewS3Store(S3Config{Endpoint: "https://s3.example", Bucket: "b", AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI"})
	require.NoError(t, err)
	err = s.wrap("writing", "root-20261128-101500", errors.New("signature of AKIDEXAMPLE with wJalrXUtnFEMI refused"))
	assert.NotContains(t, err.Error(), "AKIDEXAMPLE")
	assert.NotContains(t, err.Error(), "wJalrXUtnFEMI")
	assert.ErrorContains(t, err, "writing snapshot root-20261128-101500 in bucket b")
}
