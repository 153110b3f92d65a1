package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
)

// The scale benchmark stores RootShards in steps up to the last, spread over namespaces.
var (
	scaleSteps      = []int{100, 250, 500, 1000}
	scaleNamespaces = 10
	// scaleCreators create the RootShards concurrently.
	scaleCreators = 8
	// quiet is how long the controllers must have nothing to do for them to count as settled.
	quiet = 5 * time.Second
	// idleWindow is how long the benchmark counts host writes with nothing changing.
	idleWindow = 15 * time.Second
	// settleTimeout bounds one wait for the controllers to settle.
	settleTimeout = 15 * time.Minute
)

// hostResources are the host cluster's resources the controllers write; kube-apiserver
// counts the writes to them (apiserver_request_total), whoever makes them.
var hostResources = []string{
	"configmaps", "secrets", "services", "serviceaccounts", "persistentvolumeclaims",
	"deployments", "statefulsets", "poddisruptionbudgets",
	"issuers", "certificates",
	"roles", "rolebindings", "clusterroles", "clusterrolebindings",
}

// writeVerbs are apiserver_request_total's verbs that change an object.
var writeVerbs = []string{"POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"}

// controllerKinds name the controllers' workqueues and the kind label of their metrics.
var controllerKinds = []string{"rootshard", "shard", "frontproxy", "cacheserver", "kubeconfig", "virtualworkspace"}

// step is what one step of the scale benchmark measured.
type step struct {
	setups int
	// created is how long creating the step's new RootShards took; settled is from the
	// first create until the controllers had nothing left to do.
	created, settled time.Duration
	// reconcile is the mean RootShard reconcile of the step, and reconciles how many
	// RootShard reconciles the step took per new setup.
	reconcile  time.Duration
	reconciles float64
	// failed are the step's reconciles of any kind that returned an error.
	failed float64
	// rss is the server's resident memory once settled, in MiB.
	rss float64
	// idleWrites are the host writes in idleWindow with nothing changing, as kube-apiserver
	// counted them.
	idleWrites float64
	// resync is from a restart of the server until its controllers settled again, having
	// reconciled every stored setup; resyncWrites are the host writes of that resync as
	// kube-apiserver counted them, resyncServerWrites as the server's own metric did.
	resync                           time.Duration
	resyncReconcile                  time.Duration
	resyncWrites, resyncServerWrites float64
	resyncRSS                        float64
}

// BenchmarkScale stores RootShards in steps of 100, 250, 500 and 1000 and measures at each
// the server's memory, how long its controllers take to settle, the mean reconcile, the host
// writes with nothing changing, and a resync after a restart of the server, which must
// write nothing to the host for setups that did not change.
//
// First, as far as cert-manager on 2 cores allows, setups are realized whole: one alone, the
// anchor, then realizedSetups at once, each to Running with every Certificate issued and its
// pods started by kwok (realizedStep).
//
// Then cert-manager is stopped: on 2 cores it would issue the certificates of 1000 setups for
// many minutes, and each issuance changes a setup. The stored setups are reconciled as far as
// they go without certificates: Issuers, Certificates and the rest the controllers apply are
// written, and they wait for cert-manager. No certificate, Deployment, pod or kcp is part of
// the stored steps' figures.
func BenchmarkScale(b *testing.B) {
	ctx := b.Context()
	steps := scaleSteps
	if quick {
		steps = []int{10, 25, 50, 100}
	}
	e := newEntry("scale")
	realizedStep(b, e)

	fmt.Printf("scale: measured: RootShards stored and reconciled up to their Certificates, with cert-manager stopped so that nothing is issued; " +
		"not measured: issuance, Deployments, pods and kcp, which 1000 setups would not reach on this machine\n")
	stack.StopCertManager()
	defer func() {
		if err := stack.StartCertManager(); err != nil {
			b.Errorf("starting cert-manager again: %v", err)
		}
	}()
	for i := range scaleNamespaces {
		if err := createNamespace(ctx, scaleNamespace(i)); err != nil {
			b.Fatal(err)
		}
	}
	background, err := backgroundReconciles(ctx)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("scale: background: %.2f reconciles/s before the first step (the health checks of earlier benchmarks' setups)\n", background)

	var done []step
	stored := 0
	for _, n := range steps {
		measured := len(done)
		b.Run(fmt.Sprintf("setups-%d", n), func(b *testing.B) {
			s, err := scaleStep(ctx, b, stored, n, background)
			stored = n
			if err != nil {
				b.Fatal(err)
			}
			done = append(done, s)
			name := fmt.Sprintf("setups-%d/", n)
			e.add(b, name+"create", s.created.Seconds(), "create-s")
			e.add(b, name+"settle", s.settled.Seconds(), "settle-s")
			e.add(b, name+"reconcile", ms(s.reconcile), "reconcile-ms")
			e.add(b, name+"reconciles-per-setup", s.reconciles, "reconciles/setup")
			e.add(b, name+"failed-reconciles", s.failed, "failed-reconciles")
			e.add(b, name+"rss", s.rss, "rss-MiB")
			e.add(b, name+"idle-writes", s.idleWrites, "idle-writes")
			e.add(b, name+"resync", s.resync.Seconds(), "resync-s")
			e.add(b, name+"resync-reconcile", ms(s.resyncReconcile), "resync-reconcile-ms")
			e.add(b, name+"resync-writes", s.resyncWrites, "resync-writes")
			e.add(b, name+"resync-server-writes", s.resyncServerWrites, "resync-server-writes")
			e.add(b, name+"resync-rss", s.resyncRSS, "resync-rss-MiB")
			fmt.Printf("scale: %4d setups: created in %5.1fs, settled %5.1fs after the first create, RootShard reconcile %6.1f ms (%.1f per setup, %.0f failed), "+
				"RSS %4.0f MiB; %.0f host writes in %s idle; resync after a restart %5.1fs (reconcile %5.1f ms), %.0f host writes (server: %.0f), RSS %4.0f MiB\n",
				n, s.created.Seconds(), s.settled.Seconds(), ms(s.reconcile), s.reconciles, s.failed, s.rss, s.idleWrites, idleWindow,
				s.resync.Seconds(), ms(s.resyncReconcile), s.resyncWrites, s.resyncServerWrites, s.resyncRSS)
			// The one figure with a required value: unchanged setups cost the host nothing.
			if s.idleWrites != 0 {
				b.Errorf("FAIL: %d setups: %.0f host writes in %s with nothing changing, want 0", n, s.idleWrites, idleWindow)
			}
			if s.resyncWrites != 0 || s.resyncServerWrites != 0 {
				b.Errorf("FAIL: %d setups: the resync after a restart wrote to the host (%.0f writes counted by kube-apiserver, %.0f by the server), want 0",
					n, s.resyncWrites, s.resyncServerWrites)
			}
		})
		if len(done) == measured {
			break // the step did not complete: the next would not measure what it says
		}
	}
	if len(done) >= 2 {
		first, last := done[0], done[len(done)-1]
		grow := func(a, b float64) string {
			if a == 0 {
				return "n/a"
			}
			return fmt.Sprintf("%.2f×", b/a)
		}
		e.ratio("%d → %d setups (%.0f×): RSS %.0f → %.0f MiB (%s), settle %.1f → %.1f s (%s), RootShard reconcile %.1f → %.1f ms (%s), "+
			"resync %.1f → %.1f s (%s), resync RSS %.0f → %.0f MiB (%s); host writes idle %.0f and %.0f, on resync %.0f and %.0f",
			first.setups, last.setups, float64(last.setups)/float64(first.setups),
			first.rss, last.rss, grow(first.rss, last.rss),
			first.settled.Seconds(), last.settled.Seconds(), grow(first.settled.Seconds(), last.settled.Seconds()),
			ms(first.reconcile), ms(last.reconcile), grow(ms(first.reconcile), ms(last.reconcile)),
			first.resync.Seconds(), last.resync.Seconds(), grow(first.resync.Seconds(), last.resync.Seconds()),
			first.resyncRSS, last.resyncRSS, grow(first.resyncRSS, last.resyncRSS),
			first.idleWrites, last.idleWrites, first.resyncWrites, last.resyncWrites)
	}
	e.save(b)
}

// realizedStep realizes one setup alone, then realizedSetups at once, and compares them.
func realizedStep(b *testing.B, e *entry) {
	n := realizedSetups
	if quick {
		n = 10
	}
	var done []realized
	for _, step := range []int{1, n} {
		b.Run(fmt.Sprintf("realized-%d", step), func(b *testing.B) {
			r, err := scaleRealized(b.Context(), b, strconv.Itoa(step), step)
			if err != nil {
				b.Fatal(err)
			}
			reportRealized(b, e, r)
			done = append(done, r)
		})
	}
	if len(done) == 2 {
		one, many := done[0], done[1]
		e.ratio("%d setups realized at once: all Running in %.1f s = %.1f× one alone (%.1f s), half in %.1f s; %d Certificates, resync %.1f s, deleted in %.1f s",
			many.setups, many.running.Seconds(), many.running.Seconds()/one.running.Seconds(), one.running.Seconds(), many.median.Seconds(),
			many.certificates, many.resync.Seconds(), many.deleted.Seconds())
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func scaleNamespace(i int) string { return "bench-scale-" + strconv.Itoa(i) }

// scaleStep creates RootShards from stored up to n and measures the step.
func scaleStep(ctx context.Context, b *testing.B, stored, n int, background float64) (step, error) {
	s := step{setups: n}
	before, err := serverMetrics(ctx)
	if err != nil {
		return s, err
	}
	start := time.Now()
	if err := createRootShards(ctx, stored, n); err != nil {
		return s, err
	}
	s.created = time.Since(start)
	settledAt, err := settle(ctx, background, rootShardReconciles(before)+float64(n-stored))
	if err != nil {
		return s, err
	}
	s.settled = settledAt.Sub(start)
	after, err := serverMetrics(ctx)
	if err != nil {
		return s, err
	}
	s.reconcile = meanReconcile(before, after)
	s.reconciles = (rootShardReconciles(after) - rootShardReconciles(before)) / float64(n-stored)
	failed := label("result", "error")
	s.failed = after.sum("kcp_setups_reconciles_total", failed) - before.sum("kcp_setups_reconciles_total", failed)
	if s.rss, err = serverRSS(); err != nil {
		return s, err
	}

	// Nothing changes now: the host must see no write.
	if s.idleWrites, err = countHostWrites(ctx, func() error { return idle(ctx) }); err != nil {
		return s, err
	}

	// A restart reconciles every stored setup again, none of which changed.
	if s.resync, s.resyncWrites, err = resyncAfterRestart(ctx, background, float64(n)); err != nil {
		return s, err
	}
	fresh, err := serverMetrics(ctx)
	if err != nil {
		return s, err
	}
	s.resyncReconcile = meanReconcile(nil, fresh)
	s.resyncServerWrites = fresh.sum("kcp_setups_host_writes_total", nil)
	if s.resyncRSS, err = serverRSS(); err != nil {
		return s, err
	}
	b.Logf("%d setups: the resync reconciled RootShards %.0f times", n, rootShardReconciles(fresh))
	return s, nil
}

// idle waits idleWindow, for a count of the writes made while nothing changes.
func idle(ctx context.Context) error {
	select {
	case <-time.After(idleWindow):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// resyncAfterRestart restarts the server and returns how long its controllers took to settle,
// having reconciled RootShards at least least times, and the host writes kube-apiserver
// counted meanwhile.
func resyncAfterRestart(ctx context.Context, background, least float64) (time.Duration, float64, error) {
	var resync time.Duration
	writes, err := countHostWrites(ctx, func() error {
		restarted := time.Now()
		if err := stack.RestartServer(ctx); err != nil {
			return err
		}
		settledAt, err := settle(ctx, background, least)
		resync = settledAt.Sub(restarted)
		return err
	})
	return resync, writes, err
}

// createRootShards creates the RootShards numbered from..to-1 through kube-apiserver, as a
// user would, from scaleCreators clients.
func createRootShards(ctx context.Context, from, to int) error {
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		mu      sync.Mutex
		firstEr error
	)
	next.Store(int64(from))
	for _, cfg := range connections(stack.AdminConfig, scaleCreators) {
		ops := clientset.NewForConfigOrDie(cfg).OperatorV1alpha1()
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= to || ctx.Err() != nil {
					return
				}
				rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("root-%04d", i)}, Spec: operatorv1alpha1.RootShardSpec{
					External:        operatorv1alpha1.ExternalConfig{Hostname: fmt.Sprintf("kcp-%04d.example.com", i)},
					CommonShardSpec: operatorv1alpha1.CommonShardSpec{Etcd: operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd:2379"}}},
				}}
				if _, err := ops.RootShards(scaleNamespace(i%scaleNamespaces)).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
					mu.Lock()
					if firstEr == nil {
						firstEr = fmt.Errorf("creating RootShard %d: %w", i, err)
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return firstEr
}

// serverMetrics scrapes the server's /metrics.
func serverMetrics(ctx context.Context) (metrics, error) {
	text, err := stack.ServerGet(ctx, "/metrics")
	if err != nil {
		return nil, err
	}
	return parseMetrics(text)
}

// hostMetrics scrapes kube-apiserver's /metrics.
func hostMetrics(ctx context.Context) (metrics, error) {
	raw, err := stack.Kube.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	return parseMetrics(string(raw))
}

// hostWrites are the writes kube-apiserver served to the objects of hostResources, by anyone:
// with cert-manager stopped and no namespace created, the controllers are the only writer
// of them. Subresources (status, scale) are not counted: the controllers write none.
func hostWrites(m metrics) float64 {
	resource, verb := label("resource", hostResources...), label("verb", writeVerbs...)
	return m.sum("apiserver_request_total", func(l map[string]string) bool {
		return l["subresource"] == "" && resource(l) && verb(l)
	})
}

// countHostWrites returns how many host writes kube-apiserver served while during ran.
func countHostWrites(ctx context.Context, during func() error) (float64, error) {
	before, err := hostMetrics(ctx)
	if err != nil {
		return 0, err
	}
	if err := during(); err != nil {
		return 0, err
	}
	after, err := hostMetrics(ctx)
	if err != nil {
		return 0, err
	}
	return hostWrites(after) - hostWrites(before), nil
}

func reconcileCount(m metrics) float64 {
	return m.sum("kcp_setups_reconciles_total", nil)
}

func rootShardReconciles(m metrics) float64 {
	return m.sum("kcp_setups_reconciles_total", label("kind", "rootshard"))
}

// meanReconcile is the mean RootShard reconcile between two scrapes of the same server
// (before nil: since it started).
func meanReconcile(before, after metrics) time.Duration {
	rootShard := label("kind", "rootshard")
	sum := after.sum("kcp_setups_reconcile_duration_seconds_sum", rootShard) - before.sum("kcp_setups_reconcile_duration_seconds_sum", rootShard)
	count := after.sum("kcp_setups_reconcile_duration_seconds_count", rootShard) - before.sum("kcp_setups_reconcile_duration_seconds_count", rootShard)
	if count == 0 {
		return 0
	}
	return time.Duration(sum / count * float64(time.Second))
}

// queued is how many keys wait in the controllers' workqueues.
func queued(m metrics) float64 {
	return m.sum("workqueue_depth", label("name", controllerKinds...))
}

// backgroundReconciles is the reconciles per second of a quiet server: the health checks of
// setups that earlier benchmarks left Running requeue them every few seconds.
func backgroundReconciles(ctx context.Context) (float64, error) {
	first, err := serverMetrics(ctx)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	select {
	case <-time.After(2 * quiet):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	last, err := serverMetrics(ctx)
	if err != nil {
		return 0, err
	}
	return (reconcileCount(last) - reconcileCount(first)) / time.Since(start).Seconds(), nil
}

// settle waits until the controllers reconciled RootShards at least least times (so that a
// server whose controllers have not started yet does not pass for a settled one) and then
// have nothing to do: for quiet, no key waited in their queues at any scrape and they
// reconciled no more than the background rate allows (twice it, and one more, for its
// jitter). It returns when it last saw them work: the last scrape with a key queued or, on a
// server with no background, with a reconcile more.
func settle(ctx context.Context, background, least float64) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	var (
		lastBusy = time.Now()
		// since is when the current quiet began, and base the reconciles then.
		since      time.Time
		base, prev float64
		first      = true
	)
	for {
		m, err := serverMetrics(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return lastBusy, fmt.Errorf("the controllers did not settle within %s", settleTimeout)
			}
			return lastBusy, err
		}
		now, reconciles := time.Now(), reconcileCount(m)
		busy := queued(m) > 0 || rootShardReconciles(m) < least || (background == 0 && !first && reconciles != prev)
		if !busy && !since.IsZero() && now.Sub(since) >= quiet {
			if reconciles-base <= 2*background*now.Sub(since).Seconds()+1 {
				return lastBusy, nil
			}
			busy = true
		}
		if busy || since.IsZero() {
			if busy {
				lastBusy = now
			}
			since, base = now, reconciles
		}
		prev, first = reconciles, false
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return lastBusy, fmt.Errorf("the controllers did not settle within %s", settleTimeout)
		}
	}
}

// serverRSS is the resident memory of the server's process, in MiB, from /proc.
func serverRSS() (float64, error) {
	pid := stack.ServerPID()
	if pid == 0 {
		return 0, fmt.Errorf("the kcp-setups server is not running")
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			fields := strings.Fields(rest)
			if len(fields) != 2 || fields[1] != "kB" {
				return 0, fmt.Errorf("unexpected VmRSS line %q", line)
			}
			kb, err := strconv.ParseFloat(fields[0], 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
