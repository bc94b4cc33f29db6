{{/*
Names, labels and the per-agent building blocks. Every per-agent template is called with a
context dict: (dict "root" $ "component" "export-agent"|"import-agent" "agent" <values block>).
*/}}

{{- define "cloudmap-mcs.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "cloudmap-mcs.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "cloudmap-mcs.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "cloudmap-mcs.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: cloudmap-mcs
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Agent-level helpers: ctx = (dict "root" $ "component" ... "agent" ...) */}}

{{- define "cloudmap-mcs.agent.fullname" -}}
{{- printf "%s-%s" (include "cloudmap-mcs.fullname" .root) .component | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "cloudmap-mcs.agent.selectorLabels" -}}
app.kubernetes.io/name: {{ include "cloudmap-mcs.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "cloudmap-mcs.agent.labels" -}}
{{ include "cloudmap-mcs.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "cloudmap-mcs.agent.serviceAccountName" -}}
{{- if .agent.serviceAccount.create }}
{{- default (include "cloudmap-mcs.agent.fullname" .) .agent.serviceAccount.name }}
{{- else }}
{{- required (printf "%s.serviceAccount.name is required when %s.serviceAccount.create is false" (include "cloudmap-mcs.agent.valuesKey" .) (include "cloudmap-mcs.agent.valuesKey" .)) .agent.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "cloudmap-mcs.agent.valuesKey" -}}
{{- if eq .component "export-agent" }}exportAgent{{ else }}importAgent{{ end }}
{{- end }}

{{- define "cloudmap-mcs.agent.leaseName" -}}
{{- default (include "cloudmap-mcs.agent.fullname" .) .agent.leaderElection.leaseName }}
{{- end }}

{{- define "cloudmap-mcs.agent.image" -}}
{{- if .agent.image.digest }}
{{- printf "%s@%s" .agent.image.repository .agent.image.digest }}
{{- else }}
{{- printf "%s:%s" .agent.image.repository (default .root.Chart.AppVersion .agent.image.tag) }}
{{- end }}
{{- end }}

{{/*
Configuration as MCS_* environment variables (the agents' yargs flags read the same names).
Only what is set is passed, so the agents' own defaults apply otherwise.
*/}}
{{- define "cloudmap-mcs.agent.env" -}}
{{- $v := .root.Values }}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: MCS_LOG_LEVEL
  value: {{ $v.logLevel | quote }}
- name: MCS_LOG_FORMAT
  value: {{ $v.logFormat | quote }}
- name: MCS_HEALTH_PORT
  value: {{ $v.healthPort | quote }}
{{- if $v.metrics.enabled }}
- name: MCS_METRICS_PORT
  value: {{ $v.metrics.port | quote }}
{{- else }}
- name: MCS_METRICS_PORT
  value: "0"
{{- end }}
{{- if not $v.cluster.createClusterProperties }}
{{- with $v.cluster.clusterId }}
- name: MCS_CLUSTER_ID
  value: {{ . | quote }}
{{- end }}
{{- with $v.cluster.clusterSetId }}
- name: MCS_CLUSTERSET_ID
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- with $v.aws.region }}
- name: AWS_REGION
  value: {{ . | quote }}
{{- end }}
{{- with $v.aws.assumeRoleArn }}
- name: MCS_ASSUME_ROLE_ARN
  value: {{ . | quote }}
{{- end }}
{{- with $v.aws.externalId }}
- name: MCS_ASSUME_ROLE_EXTERNAL_ID
  value: {{ . | quote }}
{{- end }}
{{- with $v.aws.cloudMapEndpoint }}
- name: MCS_CLOUDMAP_ENDPOINT
  value: {{ . | quote }}
{{- end }}
{{- with $v.cloudMap.rateLimits }}
- name: MCS_RATE_LIMITS
  value: {{ toJson . | quote }}
{{- end }}
- name: MCS_LEADER_ELECT
  value: {{ .agent.leaderElection.enabled | quote }}
{{- if .agent.leaderElection.enabled }}
- name: MCS_LEADER_ELECTION_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: MCS_LEADER_ELECTION_LEASE_NAME
  value: {{ include "cloudmap-mcs.agent.leaseName" . | quote }}
- name: MCS_LEADER_ELECTION_LEASE_DURATION
  value: {{ .agent.leaderElection.leaseDuration | quote }}
- name: MCS_LEADER_ELECTION_RENEW_DEADLINE
  value: {{ .agent.leaderElection.renewDeadline | quote }}
- name: MCS_LEADER_ELECTION_RETRY_PERIOD
  value: {{ .agent.leaderElection.retryPeriod | quote }}
{{- end }}
{{- if eq .component "export-agent" }}
- name: MCS_RESYNC_PERIOD
  value: {{ .agent.resyncPeriod | quote }}
- name: MCS_HEARTBEAT_PERIOD
  value: {{ .agent.heartbeatPeriod | quote }}
{{- else }}
- name: MCS_SERVICES_POLL_PERIOD
  value: {{ .agent.poll.servicesPeriod | quote }}
- name: MCS_REVISION_POLL_PERIOD
  value: {{ .agent.poll.revisionPeriod | quote }}
- name: MCS_STALE_CLUSTER_TTL
  value: {{ .agent.staleClusterTtl | quote }}
{{- with .agent.allowedCidrs }}
- name: MCS_ALLOWED_CIDRS
  value: {{ join "," . | quote }}
{{- end }}
{{- end }}
{{- with .agent.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}
