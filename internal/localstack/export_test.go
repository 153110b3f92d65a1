package localstack

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// PlanEtcdMembers plans the members of sts in dir without starting them, with ports from
// allocate, for the tests of the mapping.
func PlanEtcdMembers(dir string, sts *appsv1.StatefulSet, secrets map[string]*corev1.Secret, allocate func() (int, error)) (*EtcdMembers, error) {
	return planEtcdMembers(etcdMembersEnv{dir: dir}, sts, secrets, allocate)
}
