package framework

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
)

// EtcdTLSConfig is a client TLS config from a Secret of cert-manager's shape: ca.crt verifies
// the members' serving certificate, and tls.crt and tls.key, when the Secret has them, are
// the client certificate. A Secret with only ca.crt makes a client without a certificate.
func EtcdTLSConfig(secret *corev1.Secret) (*tls.Config, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(secret.Data["ca.crt"]) {
		return nil, fmt.Errorf("Secret %s has no CA certificate in ca.crt", secret.Name)
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if len(secret.Data[corev1.TLSCertKey]) > 0 || len(secret.Data[corev1.TLSPrivateKeyKey]) > 0 {
		pair, err := tls.X509KeyPair(secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey])
		if err != nil {
			return nil, fmt.Errorf("Secret %s's tls.crt and tls.key: %w", secret.Name, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// EtcdClient is an etcd v3 client of endpoints with cfg, which gives up dialing after a few
// seconds; Close it.
func EtcdClient(endpoints []string, cfg *tls.Config) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		TLS:         cfg,
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
}

// EtcdPutGet writes value under key through one client of endpoints with cfg and reads it
// back, each call bounded by a timeout: a refused client gets an error, not a hang.
func EtcdPutGet(ctx context.Context, endpoints []string, cfg *tls.Config, key, value string) (string, error) {
	c, err := EtcdClient(endpoints, cfg)
	if err != nil {
		return "", err
	}
	defer func() { _ = c.Close() }()
	putCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := c.Put(putCtx, key, value); err != nil {
		return "", fmt.Errorf("put %s: %w", key, err)
	}
	getCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := c.Get(getCtx, key)
	if err != nil {
		return "", fmt.Errorf("get %s: %w", key, err)
	}
	if len(resp.Kvs) != 1 {
		return "", fmt.Errorf("get %s: %d values", key, len(resp.Kvs))
	}
	return string(resp.Kvs[0].Value), nil
}

// EtcdMemberNames lists the cluster's members through endpoints: the names of the started
// members (an unstarted one has no name yet), and how many members there are.
func EtcdMemberNames(ctx context.Context, endpoints []string, cfg *tls.Config) (started []string, total int, err error) {
	c, err := EtcdClient(endpoints, cfg)
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = c.Close() }()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := c.MemberList(ctx)
	if err != nil {
		return nil, 0, err
	}
	for _, mem := range resp.Members {
		if mem.Name != "" {
			started = append(started, mem.Name)
		}
	}
	return started, len(resp.Members), nil
}

// EtcdHealth asks a member's client URL for /health, etcd's own health endpoint, over
// HTTPS with cfg, and returns its body when it answers 200.
func EtcdHealth(ctx context.Context, clientURL string, cfg *tls.Config) (string, error) {
	body, err := etcdHTTP(ctx, cfg, http.MethodGet, clientURL, "/health", nil)
	return string(body), err
}

// EtcdGatewayGet reads key through etcd's gRPC gateway (POST /v3/kv/range, JSON with base64
// keys) on a member's client URL: the gateway reaches the member's gRPC with the member's
// own server certificate as its client certificate, so this fails when that certificate
// cannot authenticate a client (no clientAuth usage, or no SAN for the loopback address the
// gateway dials from).
func EtcdGatewayGet(ctx context.Context, clientURL string, cfg *tls.Config, key string) (string, error) {
	request, err := json.Marshal(map[string]string{"key": base64.StdEncoding.EncodeToString([]byte(key))})
	if err != nil {
		return "", err
	}
	data, err := etcdHTTP(ctx, cfg, http.MethodPost, clientURL, "/v3/kv/range", request)
	if err != nil {
		return "", err
	}
	var out struct {
		Kvs []struct {
			Value string `json:"value"`
		} `json:"kvs"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return "", err
	}
	if len(out.Kvs) != 1 {
		return "", fmt.Errorf("POST /v3/kv/range %s: %d values", key, len(out.Kvs))
	}
	value, err := base64.StdEncoding.DecodeString(out.Kvs[0].Value)
	return string(value), err
}

// etcdHTTP sends a request to a member's client URL over HTTPS with cfg (JSON when it has a
// body), and returns the body of the answer, with an error unless it is 200.
func etcdHTTP(ctx context.Context, cfg *tls.Config, method, clientURL, path string, body []byte) ([]byte, error) {
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(clientURL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return data, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, data)
	}
	return data, nil
}
