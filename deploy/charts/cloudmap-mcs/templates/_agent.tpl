{{/*
The objects every agent gets: ServiceAccount, leader-election Role, Deployment, PDB, metrics
Service and ServiceMonitor. Called with (dict "root" $ "component" ... "agent" ...).
The cluster-wide RBAC differs per agent and lives in export-agent.yaml / import-agent.yaml.
*/}}

{{- define "cloudmap-mcs.agent.serviceAccount" -}}
{{- if .agent.serviceAccount.create }}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "cloudmap-mcs.agent.serviceAccountName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "cloudmap-mcs.agent.labels" . | nindent 4 }}
  {{- with .agent.serviceAccount.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
automountServiceAccountToken: true
{{- end }}
{{- end }}

{{- define "cloudmap-mcs.agent.leaderElectionRbac" -}}
{{- if .agent.leaderElection.enabled }}
---
# Leader election: one Lease per agent, in the release namespace. `create` cannot be limited
# by name; get/update are limited to this agent's Lease.
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ include "cloudmap-mcs.agent.fullname" . }}-leader-election
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "cloudmap-mcs.agent.labels" . | nindent 4 }}
rules:
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: [create]
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    resourceNames: [{{ include "cloudmap-mcs.agent.leaseName" . | quote }}]
    verbs: [get, update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ include "cloudmap-mcs.agent.fullname" . }}-leader-election
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "cloudmap-mcs.agent.labels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ include "cloudmap-mcs.agent.fullname" . }}-leader-election
subjects:
  - kind: ServiceAccount
    name: {{ include "cloudmap-mcs.agent.serviceAccountName" . }}
    namespace: {{ .root.Release.Namespace }}
{{- end }}
{{- end }}

{{- define "cloudmap-mcs.agent.clusterRoleBinding" -}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ include "cloudmap-mcs.agent.fullname" . }}
  labels:
    {{- include "cloudmap-mcs.agent.labels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ include "cloudmap-mcs.agent.fullname" . }}
subjects:
  - kind: ServiceAccount
    name: {{ include "cloudmap-mcs.agent.serviceAccountName" . }}
    namespace: {{ .root.Release.Namespace }}
{{- end }}

{{- define "cloudmap-mcs.agent.deployment" -}}
{{- $v := .root.Values }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "cloudmap-mcs.agent.fullname" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "cloudmap-mcs.agent.labels" . | nindent 4 }}
spec:
  replicas: {{ .agent.replicas }}
  revisionHistoryLimit: 5
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: 0
      maxSurge: 1
  selector:
    matchLabels:
      {{- include "cloudmap-mcs.agent.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "cloudmap-mcs.agent.labels" . | nindent 8 }}
        {{- with .agent.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with .agent.podAnnotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      serviceAccountName: {{ include "cloudmap-mcs.agent.serviceAccountName" . }}
      automountServiceAccountToken: true
      enableServiceLinks: false
      terminationGracePeriodSeconds: {{ .agent.terminationGracePeriodSeconds }}
      {{- with .agent.priorityClassName }}
      priorityClassName: {{ . | quote }}
      {{- end }}
      {{- with $v.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml .agent.podSecurityContext | nindent 8 }}
      containers:
        - name: {{ .component }}
          image: {{ include "cloudmap-mcs.agent.image" . | quote }}
          imagePullPolicy: {{ .agent.image.pullPolicy }}
          {{- with .agent.extraArgs }}
          args:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          env:
            {{- include "cloudmap-mcs.agent.env" . | nindent 12 }}
          {{- with .agent.envFrom }}
          envFrom:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          ports:
            - name: health
              containerPort: {{ $v.healthPort }}
              protocol: TCP
            {{- if and $v.metrics.enabled (eq (include "cloudmap-mcs.agent.metricsPortName" .) "metrics") }}
            - name: metrics
              containerPort: {{ $v.metrics.port }}
              protocol: TCP
            {{- end }}
          {{- with .agent.startupProbe }}
          startupProbe:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          {{- with .agent.livenessProbe }}
          livenessProbe:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          {{- with .agent.readinessProbe }}
          readinessProbe:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          resources:
            {{- toYaml .agent.resources | nindent 12 }}
          securityContext:
            {{- toYaml .agent.securityContext | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            {{- if $v.aws.caBundle.configMap }}
            - name: aws-ca-bundle
              mountPath: /etc/cloudmap-mcs/aws-ca
              readOnly: true
            {{- end }}
            {{- with .agent.extraVolumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
      volumes:
        # The root filesystem is read-only; Node.js and the AWS SDK get a small scratch dir.
        - name: tmp
          emptyDir:
            sizeLimit: 16Mi
        {{- with $v.aws.caBundle.configMap }}
        - name: aws-ca-bundle
          configMap:
            name: {{ . | quote }}
        {{- end }}
        {{- with .agent.extraVolumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with .agent.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .agent.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with (include "cloudmap-mcs.agent.affinity" . | trim) }}
      affinity:
        {{- . | nindent 8 }}
      {{- end }}
      {{- with .agent.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end }}

{{/*
The user's affinity as given, or the anti-affinity preset: replicas on different nodes, so one
node's loss or drain does not take the leader and its standby at once.
*/}}
{{- define "cloudmap-mcs.agent.affinity" -}}
{{- if .agent.affinity }}
{{- toYaml .agent.affinity }}
{{- else if eq .agent.podAntiAffinity "soft" }}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- include "cloudmap-mcs.agent.selectorLabels" . | nindent 12 }}
{{- else if eq .agent.podAntiAffinity "hard" }}
podAntiAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: kubernetes.io/hostname
      labelSelector:
        matchLabels:
          {{- include "cloudmap-mcs.agent.selectorLabels" . | nindent 10 }}
{{- end }}
{{- end }}

{{- define "cloudmap-mcs.agent.pdb" -}}
{{- if .agent.podDisruptionBudget.enabled }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "cloudmap-mcs.agent.fullname" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "cloudmap-mcs.agent.labels" . | nindent 4 }}
spec:
  {{- if not (kindIs "invalid" .agent.podDisruptionBudget.minAvailable) }}
  minAvailable: {{ .agent.podDisruptionBudget.minAvailable }}
  {{- else }}
  maxUnavailable: {{ .agent.podDisruptionBudget.maxUnavailable }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "cloudmap-mcs.agent.selectorLabels" . | nindent 6 }}
{{- end }}
{{- end }}

{{- define "cloudmap-mcs.agent.metrics" -}}
{{- $v := .root.Values }}
{{- if $v.metrics.enabled }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ include "cloudmap-mcs.agent.fullname" . }}-metrics
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "cloudmap-mcs.agent.labels" . | nindent 4 }}
spec:
  type: ClusterIP
  selector:
    {{- include "cloudmap-mcs.agent.selectorLabels" . | nindent 4 }}
  ports:
    - name: metrics
      port: {{ $v.metrics.port }}
      targetPort: {{ include "cloudmap-mcs.agent.metricsPortName" . }}
      protocol: TCP
{{- with $v.metrics.serviceMonitor }}
{{- if .enabled }}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "cloudmap-mcs.agent.fullname" $ }}
  namespace: {{ default $.root.Release.Namespace .namespace }}
  labels:
    {{- include "cloudmap-mcs.agent.labels" $ | nindent 4 }}
    {{- with .labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "cloudmap-mcs.agent.selectorLabels" $ | nindent 6 }}
  namespaceSelector:
    matchNames: [{{ $.root.Release.Namespace | quote }}]
  endpoints:
    - port: metrics
      path: /metrics
      {{- include "cloudmap-mcs.monitorEndpoint" . | nindent 6 }}
{{- end }}
{{- end }}
{{- with $v.metrics.podMonitor }}
{{- if .enabled }}
---
# Scrapes the pods' metrics port directly, not through the metrics Service.
apiVersion: monitoring.coreos.com/v1
kind: PodMonitor
metadata:
  name: {{ include "cloudmap-mcs.agent.fullname" $ }}
  namespace: {{ default $.root.Release.Namespace .namespace }}
  labels:
    {{- include "cloudmap-mcs.agent.labels" $ | nindent 4 }}
    {{- with .labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "cloudmap-mcs.agent.selectorLabels" $ | nindent 6 }}
  namespaceSelector:
    matchNames: [{{ $.root.Release.Namespace | quote }}]
  podMetricsEndpoints:
    - port: {{ include "cloudmap-mcs.agent.metricsPortName" $ }}
      path: /metrics
      {{- include "cloudmap-mcs.monitorEndpoint" . | nindent 6 }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* interval, scrapeTimeout and relabelings of a ServiceMonitor or PodMonitor endpoint. */}}
{{- define "cloudmap-mcs.monitorEndpoint" -}}
interval: {{ .interval }}
{{- with .scrapeTimeout }}
scrapeTimeout: {{ . }}
{{- end }}
{{- with .relabelings }}
relabelings:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .metricRelabelings }}
metricRelabelings:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{- define "cloudmap-mcs.agent.all" -}}
{{- if and (gt (int .agent.replicas) 1) (not .agent.leaderElection.enabled) }}
{{- fail (printf "%s.replicas is %d but %s.leaderElection.enabled is false: more than one replica needs leader election" (include "cloudmap-mcs.agent.valuesKey" .) (int .agent.replicas) (include "cloudmap-mcs.agent.valuesKey" .)) }}
{{- end }}
{{ include "cloudmap-mcs.agent.serviceAccount" . }}
{{ include "cloudmap-mcs.agent.clusterRoleBinding" . }}
{{ include "cloudmap-mcs.agent.leaderElectionRbac" . }}
{{ include "cloudmap-mcs.agent.deployment" . }}
{{ include "cloudmap-mcs.agent.pdb" . }}
{{ include "cloudmap-mcs.agent.metrics" . }}
{{ include "cloudmap-mcs.agent.networkPolicy" . }}
{{- end }}

{{/*
Ingress only to the health port (probes; the export agent's /metrics) and the metrics port.
No egress rules: the API server and Cloud Map cannot be named by a NetworkPolicy.
*/}}
{{- define "cloudmap-mcs.agent.networkPolicy" -}}
{{- $v := .root.Values }}
{{- if $v.networkPolicy.enabled }}
{{- $metricsPort := include "cloudmap-mcs.agent.metricsPortName" . }}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "cloudmap-mcs.agent.fullname" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "cloudmap-mcs.agent.labels" . | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "cloudmap-mcs.agent.selectorLabels" . | nindent 6 }}
  policyTypes: [Ingress]
  ingress:
    {{- if and $v.metrics.enabled (eq $metricsPort "health") }}
    # /metrics is served on the health port: the port admits both lists (any source when
    # either is empty).
    - ports:
        - port: health
          protocol: TCP
      {{- if and $v.networkPolicy.healthFrom $v.networkPolicy.metricsFrom }}
      from:
        {{- toYaml (concat $v.networkPolicy.healthFrom $v.networkPolicy.metricsFrom) | nindent 8 }}
      {{- end }}
    {{- else }}
    - ports:
        - port: health
          protocol: TCP
      {{- with $v.networkPolicy.healthFrom }}
      from:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- end }}
    {{- if and $v.metrics.enabled (ne $metricsPort "health") }}
    - ports:
        - port: {{ $metricsPort }}
          protocol: TCP
      {{- with $v.networkPolicy.metricsFrom }}
      from:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- end }}
{{- end }}
{{- end }}
