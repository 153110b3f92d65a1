package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// The Lease the server's replicas elect the one that runs the controllers on (the server's
// defaults, which the stack keeps), and the identity the benchmark holds it under.
const (
	controllersLeaseNamespace = metav1.NamespaceSystem
	controllersLease          = "kcp-setups-controllers"
	benchHolder               = "bench"
	// leaseRenewal is how often the benchmark renews the Lease it took: more often than the
	// server's lease duration (15 s), after which the server would take the Lease back.
	leaseRenewal = 2 * time.Second
	// leaderStops is how long after losing the Lease the server has stopped its
	// controllers at the latest: its renew deadline (10 s), its retry period (2 s), a margin.
	leaderStops = 15 * time.Second
)

// pauseControllers stops the server's controllers by taking their Lease, and holds it until
// resume is called; resume deletes the Lease, which the server then takes again (within its
// retry period, 2 s) and reconciles every object there is. It checks that the controllers
// stopped: a RootShard created then has no finalizer after a few seconds.
func pauseControllers(ctx context.Context) (resume func(), err error) {
	leases := stack.Kube.CoordinationV1().Leases(controllersLeaseNamespace)
	take := func(ctx context.Context) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			l, err := leases.Get(ctx, controllersLease, metav1.GetOptions{})
			if err != nil {
				return err
			}
			now := metav1.NewMicroTime(time.Now())
			if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != benchHolder {
				l.Spec.HolderIdentity = ptr.To(benchHolder)
				l.Spec.AcquireTime = &now
				l.Spec.LeaseTransitions = ptr.To(ptr.Deref(l.Spec.LeaseTransitions, 0) + 1)
			}
			l.Spec.RenewTime = &now
			_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
			return err
		})
	}
	if err := take(ctx); err != nil {
		return nil, fmt.Errorf("taking the controllers' Lease %s/%s: %w", controllersLeaseNamespace, controllersLease, err)
	}
	renewCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-renewCtx.Done():
				return
			case <-time.After(leaseRenewal):
				if err := take(renewCtx); err != nil && renewCtx.Err() == nil {
					fmt.Printf("crud: renewing the controllers' Lease: %v\n", err)
				}
			}
		}
	})
	resume = func() {
		stop()
		wg.Wait()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := leases.Delete(ctx, controllersLease, metav1.DeleteOptions{}); err != nil {
			fmt.Printf("crud: deleting the controllers' Lease, which the server takes again once it expires: %v\n", err)
			return
		}
		fmt.Println("crud: controllers resumed (the benchmark released their Lease)")
	}
	fmt.Printf("crud: pausing the controllers: the benchmark holds their Lease; waiting %s for the server to stop them\n", leaderStops)
	select {
	case <-time.After(leaderStops):
	case <-ctx.Done():
		resume()
		return nil, ctx.Err()
	}
	if err := checkPaused(ctx); err != nil {
		resume()
		return nil, err
	}
	return resume, nil
}

// checkPaused creates a RootShard and fails when a controller put its finalizer on it.
func checkPaused(ctx context.Context) error {
	probe := (&crudKind{gvr: rootShards}).rootShard("probe")
	client := stack.Dynamic.Resource(rootShards).Namespace(bigListNamespace)
	if _, err := client.Create(ctx, probe, metav1.CreateOptions{}); err != nil {
		return err
	}
	defer func() { _ = client.Delete(context.WithoutCancel(ctx), "probe", metav1.DeleteOptions{}) }()
	time.Sleep(3 * time.Second)
	got, err := client.Get(ctx, "probe", metav1.GetOptions{})
	if err != nil {
		return err
	}
	if f := got.GetFinalizers(); len(f) > 0 {
		return fmt.Errorf("the controllers still run after the benchmark took their Lease: a RootShard got the finalizers %v", f)
	}
	fmt.Println("crud: controllers paused (a RootShard created now is not reconciled)")
	return nil
}
