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
