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
      volumes:
        # The root filesystem is read-only; Node.js and the AWS SDK get a small scratch dir.
        - name: tmp
          emptyDir:
            sizeLimit: 16Mi
      {{- with .agent.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .agent.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .agent.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .agent.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- toYaml . | nindent 8 }}
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
{{- if $v.metrics.serviceMonitor.enabled }}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "cloudmap-mcs.agent.fullname" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "cloudmap-mcs.agent.labels" . | nindent 4 }}
    {{- with $v.metrics.serviceMonitor.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "cloudmap-mcs.agent.selectorLabels" . | nindent 6 }}
  namespaceSelector:
    matchNames: [{{ .root.Release.Namespace | quote }}]
  endpoints:
    - port: metrics
      path: /metrics
      interval: {{ $v.metrics.serviceMonitor.interval }}
      {{- with $v.metrics.serviceMonitor.scrapeTimeout }}
      scrapeTimeout: {{ . }}
      {{- end }}
{{- end }}
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
{{- end }}
