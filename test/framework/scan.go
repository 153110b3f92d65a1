package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ScanInput is where a leak scan looks, and which keys it looks for.
type ScanInput struct {
	// Keys are known keys by origin: each a PEM block, or text holding some (a kubeconfig, a
	// Secret's data), or its base64.
	Keys map[string][]byte
	// Logs are component log files.
	Logs []string
	// Events and Statuses are files of recorded objects, one a line: what, a tab, the JSON.
	Events, Statuses string
	// Responses is a directory of recorded responses, one a file whose first line names it.
	Responses string
	// Excluded counts the responses left out of Responses, by reason.
	Excluded map[string]int
}

// ScanForKeys looks for private keys in every place of in, and reports where it looked and
// each finding by its place, never the key itself.
func ScanForKeys(in ScanInput) (*Report, error) {
	keys := newKeySet()
	for origin, data := range in.Keys {
		keys.harvest(origin, data)
	}
	return scan(in, keys)
}

func scan(in ScanInput, keys *keySet) (*Report, error) {
	s := newScanner(keys)
	r := &Report{Keys: s.Keys()}

	logs := Place{Name: "component logs (files)", Items: len(in.Logs)}
	for _, file := range in.Logs {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		logs.Bytes += int64(len(data))
		base := filepath.Base(file)
		r.Findings = append(r.Findings, s.scanLines(data, func(n int, _ []byte) string {
			return fmt.Sprintf("log %s:%d", base, n)
		})...)
	}
	r.Places = append(r.Places, logs)

	for _, recorded := range []struct{ name, file string }{
		{"Events (every version seen)", in.Events},
		{"statuses (every version seen)", in.Statuses},
	} {
		data, err := os.ReadFile(recorded.file)
		if err != nil {
			return nil, err
		}
		r.Places = append(r.Places, Place{Name: recorded.name, Items: strings.Count(string(data), "\n"), Bytes: int64(len(data))})
		r.Findings = append(r.Findings, s.scanLines(data, func(_ int, line []byte) string { return firstField(line) })...)
	}

	responses, err := s.scanResponses(in.Responses)
	if err != nil {
		return nil, err
	}
	var notes []string
	for _, why := range sortedKeys(in.Excluded) {
		notes = append(notes, fmt.Sprintf("%d %s not scanned", in.Excluded[why], why))
	}
	responses.place.Note = strings.Join(notes, ", ")
	r.Places = append(r.Places, responses.place)
	r.Findings = append(r.Findings, responses.findings...)
	return r, nil
}

type scannedResponses struct {
	place    Place
	findings []Finding
}

// scanResponses scans every recorded response in dir, and names each finding by its file,
// line and first line (the request or the kubectl command), unless that line itself leaks.
func (s *Scanner) scanResponses(dir string) (scannedResponses, error) {
	out := scannedResponses{place: Place{Name: "API responses the tests saw"}}
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		return out, err
	}
	sort.Strings(files)
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return out, err
		}
		out.place.Items++
		out.place.Bytes += int64(len(data))
		label, _, _ := strings.Cut(string(data), "\n")
		label = strings.TrimPrefix(label, "# ")
		if len(s.Scan([]byte(label))) > 0 {
			label = "(its command line is withheld: it holds a key)"
		}
		if strings.HasSuffix(file, ".unrecorded") {
			out.findings = append(out.findings, Finding{Place: filepath.Base(file) + " " + label, What: "a response that could not be recorded"})
		}
		base := filepath.Base(file)
		out.findings = append(out.findings, s.scanLines(data, func(n int, _ []byte) string {
			return fmt.Sprintf("response %s:%d %s", base, n, label)
		})...)
	}
	return out, nil
}

// ScanForLeaks scans the whole stack: every component log, every Event and status seen
// since it started, and every response the tests received through the framework, for any
// private key and for every key the stack has held.
func (s *Stack) ScanForLeaks(ctx context.Context) (*Report, error) {
	if s.witness == nil {
		return nil, fmt.Errorf("the stack was started without Options.RecordForLeakScan")
	}
	keys := s.witness.keys
	// The stack's own keys, and the Secrets of now: the witness has seen them, but a
	// Secret written just before the scan may not have reached it yet.
	if err := filepath.WalkDir(s.Dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".key") || strings.HasSuffix(path, "kubeconfig")) {
			return err
		}
		data, err := os.ReadFile(path)
		if err == nil {
			rel, _ := filepath.Rel(s.Dir, path)
			keys.harvest("file "+rel, data)
		}
		return err
	}); err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(s.UnobservedConfig)
	if err != nil {
		return nil, err
	}
	secrets, err := kube.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, sec := range secrets.Items {
		for name, value := range sec.Data {
			keys.harvest(fmt.Sprintf("Secret %s/%s[%s]", sec.Namespace, sec.Name, name), value)
		}
	}
	logs, err := filepath.Glob(s.Path("logs", "*.log"))
	if err != nil {
		return nil, err
	}
	return scan(ScanInput{
		Logs:      logs,
		Events:    s.Path("recorded", "events.log"),
		Statuses:  s.Path("recorded", "statuses.log"),
		Responses: s.Path("recorded", "responses"),
		Excluded:  s.Recorder.Excluded(),
	}, keys)
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
