// Package etcdmaint keeps a managed etcd's members in shape (docs/etcd.md, "Defragmentation
// and alarms"): it asks every member for its maintenance status and the cluster for its
// alarms, once a health interval, defragments a fragmented member, one member at a time across
// the cluster, and recovers from NOSPACE (compaction, defragmentation, disarm). It speaks to
// the members through etcd's JSON gateway on their client port, over the server's kcp dialer
// with kcp's client certificate, as EtcdReady's /health does: each member is reached by its own
// endpoint, since status and defragmentation are a member's own.
package etcdmaint

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kcp-setups/apiserver/pkg/controller/kcphealth"
)

// The alarms etcd raises, as its gateway names them.
const (
	AlarmNoSpace = "NOSPACE"
	AlarmCorrupt = "CORRUPT"
)

// Status is what a member says of itself (etcd's Maintenance.Status).
type Status struct {
	// MemberID is the member's etcd ID, which alarms name.
	MemberID uint64
	// Revision is the cluster's current revision as the member knows it.
	Revision int64
	// DBSize and DBSizeInUse are the member's database file size and the part of it in use.
	DBSize, DBSizeInUse int64
	// Leader is the ID of the member the member follows (its own when it leads).
	Leader uint64
}

// Alarm is an alarm raised on a member.
type Alarm struct {
	MemberID uint64
	Type     string
}

// jsonInt is an integer as etcd's gateway writes it: a string (64-bit), or a number.
type jsonInt string

func (n *jsonInt) UnmarshalJSON(b []byte) error {
	*n = jsonInt(strings.Trim(string(b), `"`))
	return nil
}

func (n jsonInt) int64() (int64, error) {
	if n == "" {
		return 0, nil
	}
	return strconv.ParseInt(string(n), 10, 64)
}

func (n jsonInt) uint64() (uint64, error) {
	if n == "" {
		return 0, nil
	}
	return strconv.ParseUint(string(n), 10, 64)
}

// MemberStatus asks the member config reaches for its maintenance status.
func MemberStatus(ctx context.Context, config kcphealth.Config) (Status, error) {
	var out struct {
		Header struct {
			MemberID jsonInt `json:"member_id"`
			Revision jsonInt `json:"revision"`
		} `json:"header"`
		DBSize      jsonInt `json:"dbSize"`
		DBSizeInUse jsonInt `json:"dbSizeInUse"`
		Leader      jsonInt `json:"leader"`
	}
	if err := call(ctx, config, "/v3/maintenance/status", struct{}{}, &out, 0); err != nil {
		return Status{}, err
	}
	var s Status
	var errs [5]error
	s.MemberID, errs[0] = out.Header.MemberID.uint64()
	s.Revision, errs[1] = out.Header.Revision.int64()
	s.DBSize, errs[2] = out.DBSize.int64()
	s.DBSizeInUse, errs[3] = out.DBSizeInUse.int64()
	s.Leader, errs[4] = out.Leader.uint64()
	for _, err := range errs {
		if err != nil {
			return Status{}, fmt.Errorf("etcd's maintenance status: %w", err)
		}
	}
	return s, nil
}

// Alarms lists the cluster's alarms.
func Alarms(ctx context.Context, config kcphealth.Config) ([]Alarm, error) {
	var out struct {
		Alarms []struct {
			MemberID jsonInt `json:"memberID"`
			Alarm    string  `json:"alarm"`
		} `json:"alarms"`
	}
	if err := call(ctx, config, "/v3/maintenance/alarm", map[string]string{"action": "GET"}, &out, 0); err != nil {
		return nil, err
	}
	alarms := make([]Alarm, 0, len(out.Alarms))
	for _, a := range out.Alarms {
		id, err := a.MemberID.uint64()
		if err != nil {
			return nil, fmt.Errorf("etcd's alarm list: %w", err)
		}
		if a.Alarm == "" || a.Alarm == "NONE" {
			continue
		}
		alarms = append(alarms, Alarm{MemberID: id, Type: a.Alarm})
	}
	return alarms, nil
}

// Disarm disarms alarm on the member whose ID is member.
func Disarm(ctx context.Context, config kcphealth.Config, member uint64, alarm string) error {
	return call(ctx, config, "/v3/maintenance/alarm",
		map[string]string{"action": "DEACTIVATE", "memberID": strconv.FormatUint(member, 10), "alarm": alarm}, nil, 0)
}

// Compact compacts the cluster's history up to revision, and waits until the compaction is
// applied to the database (physical), which a defragmentation then gives back. A revision
// compacted already is no error.
func Compact(ctx context.Context, config kcphealth.Config, revision int64, timeout time.Duration) error {
	err := call(ctx, config, "/v3/kv/compaction",
		map[string]any{"revision": strconv.FormatInt(revision, 10), "physical": true}, nil, timeout)
	if err != nil && strings.Contains(err.Error(), "required revision has been compacted") {
		return nil
	}
	return err
}

// Defragment defragments the member config reaches, which is unavailable meanwhile; it may
// take long on a large database, within timeout.
func Defragment(ctx context.Context, config kcphealth.Config, timeout time.Duration) error {
	return call(ctx, config, "/v3/maintenance/defragment", struct{}{}, nil, timeout)
}

// call POSTs in as JSON to path on etcd's gateway and decodes the answer into out (unless
// nil). timeout, when set, replaces the client's own request timeout.
func call(ctx context.Context, config kcphealth.Config, path string, in, out any, timeout time.Duration) error {
	cfg, err := config()
	if err != nil {
		return err
	}
	if timeout > 0 {
		cfg = rest.CopyConfig(cfg)
		cfg.Timeout = timeout
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(cfg.Host, "/")+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var failure struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(data, &failure) == nil && failure.Message != "" {
			return fmt.Errorf("etcd answered %s %d: %s", path, resp.StatusCode, failure.Message)
		}
		return fmt.Errorf("etcd answered %s %d: %.200q", path, resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("etcd's answer to %s: %w", path, err)
	}
	return nil
}

// Healthy says whether the member config reaches is healthy, but for a NOSPACE alarm (etcd's
// /health?exclude=NOSPACE): a member defragmented while NOSPACE is being recovered is back
// once it answers so.
func Healthy(ctx context.Context, config kcphealth.Config) bool {
	cfg, err := config()
	if err != nil {
		return false
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return false
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/health?exclude="+AlarmNoSpace, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	defer func() { _ = resp.Body.Close() }()
	var health struct {
		Health string `json:"health"`
	}
	err = json.NewDecoder(io.LimitReader(resp.Body, 4<<10)).Decode(&health)
	return err == nil && resp.StatusCode == http.StatusOK && health.Health == "true"
}
