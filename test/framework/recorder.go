package framework

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/rest"
)

// Recorder keeps every API response the tests see, through kubectl or the framework's client
// configs, so that the leak scan can read them at the end of the suite. Responses are
// written to files as they stream, one file each, so that memory stays flat however much
// the suite reads.
type Recorder struct {
	dir  string
	seq  atomic.Int64
	keys *keySet

	mu sync.Mutex
	// excluded counts the responses not scanned, by reason.
	excluded map[string]int
}

// Why a response is not scanned. The keys in it are harvested, so that the scan looks for
// them everywhere else.
const (
	// excludedMint is the kubeconfig subresource's answer to its own requester: the one
	// place a key is meant to go.
	excludedMint = "mint responses"
	// excludedSecret is a Secret read or written: Secrets are where keys are kept.
	excludedSecret = "Secret responses"
)

// harvestLimit bounds what an excluded response keeps in memory to harvest its keys.
const harvestLimit = 4 << 20

func newRecorder(dir string, keys *keySet) (*Recorder, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return &Recorder{dir: dir, keys: keys, excluded: map[string]int{}}, nil
}

var secretPath = regexp.MustCompile(`^/api/v1/(namespaces/[^/]+/)?secrets(/|$)`)

// exclusion is why a response to method on path is not scanned, or "".
func exclusion(method, path string) string {
	switch {
	case method == http.MethodPost && strings.HasSuffix(path, "/kubeconfig"):
		return excludedMint
	case secretPath.MatchString(path):
		return excludedSecret
	}
	return ""
}

// kubectlExclusion is why the output of kubectl with args is not scanned, or "": a mint with
// `create --raw …/kubeconfig`, or a command about Secrets.
func kubectlExclusion(args []string) string {
	for i, a := range args {
		if a == "--raw" && i+1 < len(args) {
			method := http.MethodGet
			if slices.Contains(args, "create") {
				method = http.MethodPost
			}
			if why := exclusion(method, args[i+1]); why != "" {
				return why
			}
		}
		for _, resource := range strings.Split(a, ",") {
			kind, _, _ := strings.Cut(resource, "/")
			if kind == "secret" || kind == "secrets" {
				return excludedSecret
			}
		}
	}
	return ""
}

// Wrap makes cfg record every response it receives, and returns cfg. A nil recorder
// records nothing.
func (r *Recorder) Wrap(cfg *rest.Config) *rest.Config {
	if r == nil {
		return cfg
	}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &recordingTransport{rt: rt, rec: r} })
	return cfg
}

// Excluded is how many responses were not scanned, by reason.
func (r *Recorder) Excluded() map[string]int {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for k, v := range r.excluded {
		out[k] = v
	}
	return out
}

// kubectl records the output of kubectl with args.
func (r *Recorder) Kubectl(args []string, output ...string) {
	if r == nil {
		return
	}
	label := "kubectl " + strings.Join(args, " ")
	body := r.open(label, kubectlExclusion(args))
	for _, o := range output {
		_, _ = io.WriteString(body, o)
	}
	_ = body.Close()
}

// response records a response read whole, labelled with its request.
func (r *Recorder) Response(label string, body []byte) {
	if r == nil {
		return
	}
	record := r.open(label, "")
	_, _ = record.Write(body)
	_ = record.Close()
}

// open starts the record of one response. What is written to it is recorded; Close ends it.
func (r *Recorder) open(label, excluded string) io.WriteCloser {
	if excluded != "" {
		return &harvester{rec: r, label: label, why: excluded}
	}
	name := filepath.Join(r.dir, fmt.Sprintf("%06d.txt", r.seq.Add(1)))
	f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		// A response that cannot be recorded is a hole in the scan: say so where it would be.
		f, err = os.OpenFile(name+".unrecorded", os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return nopWriteCloser{io.Discard}
		}
	}
	_, _ = fmt.Fprintf(f, "# %s\n", label)
	return f
}

// harvester keeps an excluded response in memory, up to a limit, to harvest its keys.
type harvester struct {
	rec        *Recorder
	label, why string
	buf        bytes.Buffer
}

func (h *harvester) Write(p []byte) (int, error) {
	if room := harvestLimit - h.buf.Len(); room > 0 {
		h.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (h *harvester) Close() error {
	h.rec.keys.harvest(h.label, h.buf.Bytes())
	h.rec.mu.Lock()
	h.rec.excluded[h.why]++
	h.rec.mu.Unlock()
	return nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// recordingTransport tees every response body into the recorder as the caller reads it.
type recordingTransport struct {
	rt  http.RoundTripper
	rec *Recorder
}

func (t *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	label := fmt.Sprintf("%s %s %d", req.Method, req.URL.Path, resp.StatusCode)
	resp.Body = &teeBody{body: resp.Body, record: t.rec.open(label, exclusion(req.Method, req.URL.Path))}
	return resp, nil
}

// teeBody passes a body through to its reader and into a record.
type teeBody struct {
	body   io.ReadCloser
	record io.WriteCloser
	once   sync.Once
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if n > 0 {
		_, _ = b.record.Write(p[:n])
	}
	return n, err
}

func (b *teeBody) Close() error {
	b.once.Do(func() { _ = b.record.Close() })
	return b.body.Close()
}
