package framework

import (
	"context"
	"crypto/tls"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kcp-setups/apiserver/internal/localstack"
)

// CheckEtcdClusterServes is issue 14's proof that the members form a cluster and serve only
// the right clients, each check against every member: they list themselves as started members
// of one cluster (which they could only have formed over peer TLS, the only peer transport
// their args give them); a client with the client certificate of client (tls.crt, tls.key,
// ca.crt) writes through one member and reads through each, through etcd's gRPC and its
// gateway, and /health says true; a client with foreign's certificate (trusting the members'
// CA, so that it is the member that says no) and a client without a certificate are refused
// in the TLS handshake.
func CheckEtcdClusterServes(ctx context.Context, m *EtcdMembers, client, foreign *corev1.Secret) error {
	members := m.Members()
	good, err := EtcdTLSConfig(client)
	if err != nil {
		return err
	}
	var pods []string
	for _, e := range members {
		pods = append(pods, e.Name)
	}
	for _, e := range members {
		started, total, err := EtcdMemberNames(ctx, []string{e.ClientURL}, good)
		if err != nil {
			return fmt.Errorf("listing the members through %s: %w", e.Name, err)
		}
		slices.Sort(started)
		if total != len(members) || !slices.Equal(started, pods) {
			return fmt.Errorf("%s lists %d members, started: %q; want %q", e.Name, total, started, pods)
		}
		if body, err := EtcdHealth(ctx, e.ClientURL, good); err != nil || !strings.Contains(body, `"health":"true"`) {
			return fmt.Errorf("/health of %s: %q, %v", e.Name, body, err)
		}
	}

	key, value := "/harness/"+m.StatefulSet, "written at "+time.Now().Format(time.RFC3339Nano)
	if _, err := EtcdPutGet(ctx, []string{members[0].ClientURL}, good, key, value); err != nil {
		return fmt.Errorf("writing through %s with %s: %w", members[0].Name, client.Name, err)
	}
	for _, e := range members {
		if err := readBack(ctx, e, good, key, value); err != nil {
			return err
		}
	}

	strangers, err := strangerConfigs(good, foreign)
	if err != nil {
		return err
	}
	for who, cfg := range strangers {
		for _, e := range members {
			if err := refused(ctx, e, cfg); err != nil {
				return fmt.Errorf("a client %s: %w", who, err)
			}
		}
	}
	return nil
}

// readBack reads key through member e alone, by gRPC (a linearizable read, which the member
// serves only as part of a cluster with a leader) and by the gateway.
func readBack(ctx context.Context, e EtcdMember, cfg *tls.Config, key, want string) error {
	c, err := EtcdClient([]string{e.ClientURL}, cfg)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	getCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := c.Get(getCtx, key)
	if err != nil {
		return fmt.Errorf("reading %s through %s: %w", key, e.Name, err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != want {
		return fmt.Errorf("reading %s through %s: %v, want %q", key, e.Name, resp.Kvs, want)
	}
	got, err := EtcdGatewayGet(ctx, e.ClientURL, cfg, key)
	if err != nil || got != want {
		return fmt.Errorf("reading %s through %s's gateway: %q, %v; want %q", key, e.Name, got, err, want)
	}
	return nil
}

// strangerConfigs are the clients that must be refused: with foreign's certificate, and
// without one, both trusting the members' serving CA as good does.
func strangerConfigs(good *tls.Config, foreign *corev1.Secret) (map[string]*tls.Config, error) {
	foreignCfg, err := EtcdTLSConfig(foreign)
	if err != nil {
		return nil, err
	}
	if len(foreignCfg.Certificates) == 0 {
		return nil, fmt.Errorf("Secret %s has no client certificate", foreign.Name)
	}
	withForeign := good.Clone()
	withForeign.Certificates = foreignCfg.Certificates
	without := good.Clone()
	without.Certificates = nil
	return map[string]*tls.Config{"with the certificate of " + foreign.Name: withForeign, "without a certificate": without}, nil
}

// refused checks that member e refuses a client with cfg in the TLS handshake (an alert from
// the member: the client trusts it), on /health and on a write.
func refused(ctx context.Context, e EtcdMember, cfg *tls.Config) error {
	body, err := EtcdHealth(ctx, e.ClientURL, cfg)
	if err == nil || !strings.Contains(err.Error(), "remote error: tls:") {
		return fmt.Errorf("/health of %s answered %q, %v; want a TLS alert from the member", e.Name, body, err)
	}
	// gRPC retries a failed handshake until its deadline; a short one is enough to tell.
	putCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := EtcdPutGet(putCtx, []string{e.ClientURL}, cfg, "/harness/stranger", "x"); err == nil {
		return fmt.Errorf("%s took a write", e.Name)
	}
	return nil
}

// CheckEtcdSurvivesMemberLoss kills member i and shows the cluster stays writable through
// the others; then starts it again and shows it rejoined and caught up: it serves, alone, a
// linearizable read of what was written while it was down. client is as for
// CheckEtcdClusterServes.
func CheckEtcdSurvivesMemberLoss(ctx context.Context, m *EtcdMembers, client *corev1.Secret, i int) error {
	good, err := EtcdTLSConfig(client)
	if err != nil {
		return err
	}
	members := m.Members()
	var others []string
	for j, e := range members {
		if j != i {
			others = append(others, e.ClientURL)
		}
	}
	m.Kill(i)
	if m.Members()[i].Running {
		return fmt.Errorf("%s still runs after Kill", members[i].Name)
	}
	key, value := "/harness/"+m.StatefulSet+"/while-"+members[i].Name+"-is-down", time.Now().Format(time.RFC3339Nano)
	// When the member led, the others elect a new leader first (a second or two): the write
	// is retried meanwhile, as a client would, and never succeeds without a quorum.
	if err := localstack.Poll(ctx, "a write with "+members[i].Name+" down", time.Minute, nil, func(ctx context.Context) (bool, error) {
		got, err := EtcdPutGet(ctx, others, good, key, value)
		if err == nil && got != value {
			err = fmt.Errorf("read back %q", got)
		}
		return err == nil, err
	}); err != nil {
		return err
	}
	if _, err := EtcdHealth(ctx, members[i].ClientURL, good); err == nil {
		return fmt.Errorf("%s answers /health after Kill", members[i].Name)
	}
	if err := m.Start(ctx, i); err != nil {
		return err
	}
	return readBack(ctx, m.Members()[i], good, key, value)
}
