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
Configuration as MCS_<FLAG> environment variables: each agent's yargs flag `--x-y` reads
MCS_X_Y. The agents parse strictly, so each gets only the variables it knows. What Kubernetes
and AWS define a variable for is passed as that variable: AWS_REGION,
AWS_ENDPOINT_URL_SERVICEDISCOVERY, AWS_USE_FIPS_ENDPOINT, POD_NAMESPACE and POD_NAME (downward
API); Node.js' own for the proxy and CA bundle (NODE_USE_ENV_PROXY, HTTPS_PROXY, NO_PROXY,
NODE_EXTRA_CA_CERTS); AWS_ENDPOINT_URL_SERVICEDISCOVERY_DATA is the agents' own. The agents log
JSON (their stdout is no terminal).
*/}}
{{- define "cloudmap-mcs.agent.env" -}}
{{- $v := .root.Values }}
{{- $export := eq .component "export-agent" }}
- name: MCS_LOG_LEVEL
  value: {{ $v.logLevel | quote }}
- name: MCS_HEALTH_PORT
  value: {{ $v.healthPort | quote }}
{{- if not $export }}
- name: MCS_METRICS_PORT
  value: {{ ternary $v.metrics.port $v.healthPort $v.metrics.enabled | quote }}
{{- end }}
- name: MCS_WORKERS
  value: {{ .agent.workers | quote }}
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
{{- with $v.aws.cloudMapEndpoint }}
- name: AWS_ENDPOINT_URL_SERVICEDISCOVERY
  value: {{ . | quote }}
{{- end }}
{{- with $v.aws.cloudMapDataEndpoint }}
- name: AWS_ENDPOINT_URL_SERVICEDISCOVERY_DATA
  value: {{ . | quote }}
{{- end }}
{{- if $v.aws.useFipsEndpoint }}
- name: AWS_USE_FIPS_ENDPOINT
  value: "true"
{{- end }}
{{- with $v.aws.proxy.httpsProxy }}
- name: NODE_USE_ENV_PROXY
  value: "1"
- name: HTTPS_PROXY
  value: {{ . | quote }}
- name: NO_PROXY
  value: {{ $v.aws.proxy.noProxy | quote }}
{{- end }}
{{- if $v.aws.caBundle.configMap }}
- name: NODE_EXTRA_CA_CERTS
  value: {{ printf "/etc/cloudmap-mcs/aws-ca/%s" $v.aws.caBundle.key | quote }}
{{- end }}
{{- with (default $v.aws.assumeRoleArn .agent.assumeRoleArn) }}
- name: MCS_ASSUME_ROLE_ARN
  value: {{ . | quote }}
{{- end }}
{{- if $v.aws.externalId }}
- name: MCS_ASSUME_ROLE_EXTERNAL_ID
  value: {{ $v.aws.externalId | quote }}
{{- end }}
- name: MCS_LEADER_ELECT
  value: {{ .agent.leaderElection.enabled | quote }}
{{- /* Both agents: the Lease's namespace, and this replica in the Lease and in Events. */}}
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
{{- if .agent.leaderElection.enabled }}
- name: MCS_LEASE_NAME
  value: {{ include "cloudmap-mcs.agent.leaseName" . | quote }}
- name: MCS_LEASE_DURATION_SECONDS
  value: {{ .agent.leaderElection.leaseDurationSeconds | quote }}
- name: MCS_RENEW_DEADLINE_SECONDS
  value: {{ .agent.leaderElection.renewDeadlineSeconds | quote }}
- name: MCS_RETRY_PERIOD_SECONDS
  value: {{ .agent.leaderElection.retryPeriodSeconds | quote }}
{{- end }}
{{- if $export }}
- name: MCS_RESYNC_SECONDS
  value: {{ .agent.resyncSeconds | quote }}
- name: MCS_BACKGROUND_BUDGET
  value: {{ .agent.backgroundBudget | quote }}
- name: MCS_PEER_CHECK_SECONDS
  value: {{ .agent.peerCheckSeconds | quote }}
- name: MCS_PEER_CHECK_BUDGET
  value: {{ .agent.peerCheckBudget | quote }}
- name: MCS_CHANGE_FEED
  value: {{ .agent.changeFeed | quote }}
- name: MCS_REGISTER_RATE
  value: {{ .agent.registerRate | quote }}
{{- with .agent.podLabelAttributes }}
- name: MCS_POD_LABEL_ATTRIBUTES
  value: {{ . | quote }}
{{- end }}
{{- with .agent.dns }}
{{- if .records }}
- name: MCS_DNS_RECORDS
  value: "true"
- name: MCS_DNS_TTL
  value: {{ .ttlSeconds | quote }}
{{- with .namespaceVpc }}
- name: MCS_DNS_NAMESPACE_VPC
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- else }}
- name: MCS_POLL_FEED_SECONDS
  value: {{ .agent.poll.feedSeconds | quote }}
- name: MCS_POLL_FAST_SECONDS
  value: {{ .agent.poll.fastSeconds | quote }}
- name: MCS_POLL_BACKGROUND_BUDGET
  value: {{ .agent.poll.backgroundBudget | quote }}
- name: MCS_HEARTBEAT_TTL_SECONDS
  value: {{ .agent.heartbeatTtlSeconds | quote }}
{{- with .agent.requestBudget }}
- name: MCS_REQUEST_BUDGET
  value: {{ . | quote }}
{{- end }}
{{- with .agent.allowedCidrs }}
- name: MCS_ALLOWED_CIDRS
  value: {{ join "," . | quote }}
{{- end }}
{{- with .agent.namespaces.allowed }}
- name: MCS_ALLOWED_NAMESPACES
  value: {{ join "," . | quote }}
{{- end }}
- name: MCS_DENIED_NAMESPACES
  value: {{ join "," .agent.namespaces.denied | quote }}
- name: MCS_MAX_IMPORTS_PER_NAMESPACE
  value: {{ .agent.maxImportsPerNamespace | quote }}
- name: MCS_MAX_IMPORTS
  value: {{ .agent.maxImports | quote }}
{{- with .agent.localServiceCidrs }}
- name: MCS_LOCAL_SERVICE_CIDRS
  value: {{ join "," . | quote }}
{{- end }}
{{- end }}
{{- with .agent.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The container port /metrics is served on: the export agent serves it on its health port. */}}
{{- define "cloudmap-mcs.agent.metricsPortName" -}}
{{- if eq .component "export-agent" }}health{{ else }}metrics{{ end }}
{{- end }}
