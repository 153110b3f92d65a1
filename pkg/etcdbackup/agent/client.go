package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/kcp-setups/apiserver/pkg/etcdbackup"
)

// Client calls an agent's API: the server (through its dialer, with kcp's etcd client
// certificate) and the members' restore (with the member's serving certificate, which the
// etcd client CA issued for client use too).
type Client struct {
	// HTTP carries the TLS toward the agent.
	HTTP *http.Client
	// URL is the agent's base URL, https://<host>:2390.
	URL string
}

// Take asks for a snapshot now, under name (empty: the agent names it from the time). The
// error wraps ErrBusy while another is taken, etcdbackup.ErrExists when the store holds name.
func (c Client) Take(ctx context.Context, name string) (Snapshot, error) {
	var s Snapshot
	var body []byte
	if name != "" {
		body, _ = json.Marshal(TakeRequest{Name: name})
	}
	return s, c.doWith(ctx, http.MethodPost, "/snapshots", body, http.StatusCreated, &s)
}

// List answers the store's snapshots, newest first.
func (c Client) List(ctx context.Context) ([]Snapshot, error) {
	var s []Snapshot
	return s, c.do(ctx, http.MethodGet, "/snapshots", http.StatusOK, &s)
}

// Verify runs etcd's hash check on the stored snapshot name; the error wraps
// etcdbackup.ErrCorrupt when it fails, etcdbackup.ErrNotFound when there is none.
func (c Client) Verify(ctx context.Context, name string) (Snapshot, error) {
	var s Snapshot
	return s, c.do(ctx, http.MethodGet, "/snapshots/"+url.PathEscape(name)+"/verification", http.StatusOK, &s)
}

// Open streams the stored snapshot name.
func (c Client) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	resp, err := c.request(ctx, http.MethodGet, "/snapshots/"+url.PathEscape(name))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer func() { _ = resp.Body.Close() }()
		return nil, answerError(resp)
	}
	return resp.Body, nil
}

func (c Client) request(ctx context.Context, method, path string) (*http.Response, error) {
	return c.requestWith(ctx, method, path, nil)
}

func (c Client) requestWith(ctx context.Context, method, path string, body []byte) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.URL, "/")+path, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("asking the backup agent: %w", err)
	}
	return resp, nil
}

func (c Client) do(ctx context.Context, method, path string, want int, out any) error {
	return c.doWith(ctx, method, path, nil, want, out)
}

func (c Client) doWith(ctx context.Context, method, path string, body []byte, want int, out any) error {
	resp, err := c.requestWith(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != want {
		return answerError(resp)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(out); err != nil {
		return fmt.Errorf("the backup agent's answer: %w", err)
	}
	return nil
}

// answerError is the agent's error answer as an error that says what kind it is.
func answerError(resp *http.Response) error {
	var e Error
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(body, &e) != nil || e.Error == "" {
		e.Error = strings.TrimSpace(string(body))
	}
	switch resp.StatusCode {
	case http.StatusNotFound:
		return fmt.Errorf("%w: %s", etcdbackup.ErrNotFound, e.Error)
	case http.StatusUnprocessableEntity:
		return fmt.Errorf("%w: %s", etcdbackup.ErrCorrupt, e.Error)
	case http.StatusConflict:
		if e.Reason == ReasonExists {
			return fmt.Errorf("%w: %s", etcdbackup.ErrExists, e.Error)
		}
		return fmt.Errorf("%w: %s", ErrBusy, e.Error)
	}
	return fmt.Errorf("the backup agent answered %d: %s", resp.StatusCode, e.Error)
}

// ErrBusy is wrapped by Take's error while another snapshot is being taken.
var ErrBusy = errorString("the backup agent is taking another snapshot")

type errorString string

func (e errorString) Error() string { return string(e) }

// ClientFor calls the agent config reaches: its host, TLS and dialer (the server's, through
// its etcd dialer with kcp's etcd client certificate).
func ClientFor(config *rest.Config) (Client, error) {
	hc, err := rest.HTTPClientFor(config)
	if err != nil {
		return Client{}, err
	}
	return Client{HTTP: hc, URL: config.Host}, nil
}
