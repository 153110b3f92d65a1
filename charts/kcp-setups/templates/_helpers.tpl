{{/* The labels every object carries, as the kustomization's `labels`. */}}
{{- define "kcp-setups.labels" -}}
app.kubernetes.io/part-of: kcp-setups
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The server's image: the digest when one is given, else the tag. */}}
{{- define "kcp-setups.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag }}
{{- end -}}
{{- end }}

{{/* The bundled etcd's client URLs, one per member. */}}
{{- define "kcp-setups.etcdServers" -}}
{{- if .Values.etcd.bundled.enabled -}}
{{- $urls := list -}}
{{- range $i := until (int .Values.etcd.bundled.replicas) -}}
{{- $urls = append $urls (printf "https://etcd-%d.etcd.%s.svc:2379" $i $.Release.Namespace) -}}
{{- end -}}
{{ join "," $urls }}
{{- else -}}
{{- if not .Values.etcd.external.endpoints -}}
{{- fail "etcd.external.endpoints is required when etcd.bundled.enabled is false" -}}
{{- end -}}
{{ join "," .Values.etcd.external.endpoints }}
{{- end -}}
{{- end }}

{{/* The bundled etcd's initial cluster: every member's peer URL. */}}
{{- define "kcp-setups.etcdInitialCluster" -}}
{{- $peers := list -}}
{{- range $i := until (int .Values.etcd.bundled.replicas) -}}
{{- $peers = append $peers (printf "etcd-%d=https://etcd-%d.etcd.%s.svc:2380" $i $i $.Release.Namespace) -}}
{{- end -}}
{{ join "," $peers }}
{{- end }}

{{/* The Secret with the server's etcd client certificate and CA. */}}
{{- define "kcp-setups.etcdClientSecret" -}}
{{- if .Values.etcd.bundled.enabled -}}
etcd-client
{{- else -}}
{{- required "etcd.external.clientSecret is required when etcd.bundled.enabled is false" .Values.etcd.external.clientSecret -}}
{{- end -}}
{{- end }}

{{/*
The rules of the controllers on the objects of the setups: in the ClusterRole
kcp-setups:apiserver, or, with watchNamespaces, in a Role of each namespace served.
*/}}
{{- define "kcp-setups.workloadRules" -}}
# The controllers: what they record, and the objects they realize setups with. They read
# through label-filtered informers (list, watch), write with server-side apply (patch, and
# create for an object that does not exist yet), and delete by label when a setup goes
# (deletecollection; Services have none: delete).
- apiGroups: [""]
  resources: [events]
  verbs: [create, patch]
- apiGroups: [""]
  resources: [secrets]
  # get: the Secrets a user names (CA bundles, a CA, a kubeconfig's target Secret), which
  # carry no label of ours; delete: a Kubeconfig's former Secret, and the Secret of a leaf
  # certificate its CA did not sign, which cert-manager then issues again.
  verbs: [get, list, watch, create, patch, delete, deletecollection]
- apiGroups: [""]
  resources: [configmaps]
  verbs: [list, watch, create, patch, deletecollection]
- apiGroups: [""]
  resources: [services]
  verbs: [list, watch, create, patch, delete]
- apiGroups: [apps]
  resources: [deployments, statefulsets]
  verbs: [list, watch, create, patch, deletecollection]
# A managed etcd's data: deleted only when its owner asks for it
# (operator.kcp.io/delete-etcd-volumes), each claim read by name for its owner UID first,
# read nowhere else; create: the backup agent's snapshot volume claim
# (spec.etcd.managed.backup), made once, never changed.
- apiGroups: [""]
  resources: [persistentvolumeclaims]
  verbs: [get, create, delete]
# delete: the budget of a Deployment scaled down to one replica.
- apiGroups: [policy]
  resources: [poddisruptionbudgets]
  verbs: [list, watch, create, patch, delete, deletecollection]
- apiGroups: [cert-manager.io]
  resources: [issuers, certificates]
  verbs: [list, watch, create, patch, deletecollection]
# delete: an identity the spec stopped needing, such as a VirtualWorkspace's generated one
# once it names its own kubeconfig, goes with its Certificate first, so that cert-manager does
# not issue its key again.
- apiGroups: [cert-manager.io]
  resources: [certificates]
  verbs: [delete]
# update certificates/status: an intermediate CA whose root CA rotated is marked Issuing, as
# cmctl renew does, so that cert-manager issues it again under the new root with its key.
- apiGroups: [cert-manager.io]
  resources: [certificates/status]
  verbs: [update]
# delete: taking over what kcp-operator made (operator.kcp.io/adopt): its Deployments, whose
# selector cannot change, are replaced, and its ConfigMaps and Issuers that nothing took over
# are removed once the setup is Available.
- apiGroups: [apps]
  resources: [deployments]
  verbs: [delete]
- apiGroups: [""]
  resources: [configmaps]
  verbs: [delete]
- apiGroups: [cert-manager.io]
  resources: [issuers]
  verbs: [delete]
{{- if .Values.link.enabled }}
# The link listener (docs/links.md) has a linked remote's CSR signed by a CertificateRequest
# against the RootShard's CA Issuer, reads it until it is signed, and deletes it; on the
# remote side, the LinkIssuer watches the linked consumers' CertificateRequests and writes
# their status.
- apiGroups: [cert-manager.io]
  resources: [certificaterequests]
  verbs: [create, get, delete, list, watch]
- apiGroups: [cert-manager.io]
  resources: [certificaterequests/status]
  verbs: [update]
{{- end }}
{{- end }}
