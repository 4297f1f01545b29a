{{/* The release's prefix of every name: the release's name, with the chart's after it unless it holds it already. */}}
{{- define "tarrare.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The labels of a component's objects; called with (dict "root" $ "component" NAME). */}}
{{- define "tarrare.labels" -}}
{{ include "tarrare.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{/* The labels a component's Service and controller select its pods by. */}}
{{- define "tarrare.selectorLabels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* An image from {repository, tag}, an empty tag being imageTag; called with (dict "root" $ "image" VALUES). */}}
{{- define "tarrare.image" -}}
{{- printf "%s:%s" .image.repository (.image.tag | default .root.Values.imageTag) -}}
{{- end -}}

{{/* The HTTP port of each service, as docker-compose.yml gives them and the gateway's routes expect. */}}
{{- define "tarrare.ports" -}}
accounts: 8081
places: 8082
matching: 8083
chat: 8084
notifications: 8085
media: 8086
{{- end -}}

{{/* The Service name of a component; called with (dict "root" $ "component" NAME). */}}
{{- define "tarrare.componentName" -}}
{{- printf "%s-%s" (include "tarrare.fullname" .root) .component -}}
{{- end -}}

{{- define "tarrare.postgresHost" -}}
{{- if .Values.postgresql.enabled -}}
{{- include "tarrare.componentName" (dict "root" . "component" "postgresql") -}}
{{- else -}}
{{- required "postgresql.external.host: the server, or postgresql.enabled=true" .Values.postgresql.external.host -}}
{{- end -}}
{{- end -}}

{{- define "tarrare.postgresPort" -}}
{{- if .Values.postgresql.enabled }}5432{{ else }}{{ .Values.postgresql.external.port }}{{ end -}}
{{- end -}}

{{/*
The environment of a service's container, and of the import's: compose's, with the database and broker URLs'
passwords taken from the Secret (Kubernetes expands $(NAME) from the variables before it) and the keys read from
where serviceKeyFiles puts them, as compose mounts its secrets. Called with (dict "root" $ "service" NAME).
*/}}
{{- define "tarrare.serviceEnvironment" -}}
{{- $root := .root -}}
{{- $name := .service -}}
{{- $upper := upper $name -}}
{{- $ports := include "tarrare.ports" $root | fromYaml -}}
{{- $settings := index $root.Values.services $name -}}
- name: TARRARE_DB_PASSWORD
  valueFrom:
    secretKeyRef: {name: {{ $root.Values.secrets.passwordsName }}, key: {{ $upper }}_DB_PASSWORD}
- name: TARRARE_AMQP_PASSWORD
  valueFrom:
    secretKeyRef: {name: {{ $root.Values.secrets.passwordsName }}, key: {{ $upper }}_AMQP_PASSWORD}
- {name: HTTP_HOST, value: 0.0.0.0}
- {name: HTTP_PORT, value: {{ index $ports $name | quote }}}
- {name: ENVIRONMENT, value: production}
- {name: LOG_FORMAT, value: json}
- {name: TRUST_FORWARDED_FOR, value: "true"}
- {name: JWT_PUBLIC_KEY_FILE, value: /run/secrets/jwt-public-key}
- {name: DATABASE_WAIT_SECONDS, value: {{ $root.Values.databaseWaitSeconds | quote }}}
- {name: OTEL_EXPORTER_OTLP_ENDPOINT, value: {{ $root.Values.tracing.otlpEndpoint | quote }}}
{{- $parameters := "" }}
{{- if and (not $root.Values.postgresql.enabled) $root.Values.postgresql.external.parameters }}
{{- $parameters = printf "?%s" $root.Values.postgresql.external.parameters }}
{{- end }}
{{- $server := printf "%s:%s" (include "tarrare.postgresHost" $root) (include "tarrare.postgresPort" $root) }}
- name: POSTGRES_URL
  value: {{ printf "postgres://%s:$(TARRARE_DB_PASSWORD)@%s/%s%s" $name $server $name $parameters | quote }}
{{- $amqpURLs := list }}
{{- if $root.Values.rabbitmq.enabled }}
{{- $host := include "tarrare.componentName" (dict "root" $root "component" "rabbitmq") }}
{{- $amqpURLs = append $amqpURLs (printf "amqp://%s:$(TARRARE_AMQP_PASSWORD)@%s:5672/%%2F" $name $host) }}
{{- else }}
{{- $external := $root.Values.rabbitmq.external }}
{{- $vhost := urlquery $external.vhost }}
{{- range $host := required "rabbitmq.external.hosts: the broker's nodes, or rabbitmq.enabled=true" $external.hosts }}
{{- $url := printf "amqp://%s:$(TARRARE_AMQP_PASSWORD)@%s:%v/%s" $name $host $external.port $vhost }}
{{- $amqpURLs = append $amqpURLs $url }}
{{- end }}
{{- end }}
- name: AMQP_URL
  value: {{ join "," $amqpURLs | quote }}
{{- if eq $name "accounts" }}
- {name: JWT_PRIVATE_KEY_FILE, value: /run/secrets/jwt-private-key}
- name: SMTP_URL
  valueFrom:
    secretKeyRef: {name: {{ $root.Values.secrets.passwordsName }}, key: SMTP_URL, optional: true}
- {name: SMTP_FROM, value: {{ $settings.smtpFrom | quote }}}
- {name: PUBLIC_URL, value: {{ $settings.publicUrl | quote }}}
{{- else if eq $name "chat" }}
{{- $coturn := $root.Values.coturn }}
{{- $turn := printf "turn:%s:%v" $coturn.externalIP $coturn.port }}
{{- $turnUrls := $settings.turnUrls | default (printf "%s?transport=udp,%s?transport=tcp" $turn $turn) }}
- {name: TURN_URLS, value: {{ $turnUrls | quote }}}
- {name: TURN_SECRET_FILE, value: /run/secrets/turn-secret}
{{- else if eq $name "notifications" }}
- {name: VAPID_PRIVATE_KEY_FILE, value: /run/secrets/vapid-private-key}
- {name: VAPID_SUBJECT, value: {{ $settings.vapidSubject | quote }}}
- {name: APNS_KEY_FILE, value: /run/secrets/apns-key}
- {name: APNS_KEY_ID, value: {{ $settings.apns.keyId | quote }}}
- {name: APNS_TEAM_ID, value: {{ $settings.apns.teamId | quote }}}
- {name: APNS_TOPIC, value: {{ $settings.apns.topic | quote }}}
- {name: APNS_URL, value: {{ $settings.apns.url | quote }}}
- {name: FCM_SERVICE_ACCOUNT_FILE, value: /run/secrets/fcm-service-account}
{{- end }}
{{- range $key, $value := $settings.env }}
- {name: {{ $key }}, value: {{ $value | toString | quote }}}
{{- end }}
{{- end -}}

{{/* The keys a service reads as files: the Secret's key and the file name under /run/secrets, as compose's. */}}
{{- define "tarrare.serviceKeyFiles" -}}
- {key: jwt-public.pem, path: jwt-public-key}
{{- if eq .service "accounts" }}
- {key: jwt-private.pem, path: jwt-private-key}
{{- else if eq .service "chat" }}
- {key: turn-secret, path: turn-secret}
{{- else if eq .service "notifications" }}
- {key: vapid-private.pem, path: vapid-private-key}
- {key: apns-key.p8, path: apns-key}
- {key: fcm-service-account.json, path: fcm-service-account}
{{- end }}
{{- end -}}

{{/*
The pod-level fields every pod shares: pull secrets, no API token (nothing here talks to Kubernetes), where it runs.
Called with (dict "root" $ "nodeSelector" DICT), the component's nodeSelector added to the global one.
*/}}
{{- define "tarrare.podCommon" -}}
{{- $values := .root.Values -}}
automountServiceAccountToken: false
{{- with $values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with merge (deepCopy (.nodeSelector | default dict)) $values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
Annotations of every pod: podAnnotations, a digest of the Secrets the chart makes (changed secrets roll the pods),
and the caller's own. Called with (dict "root" $ "extra" DICT).
*/}}
{{- define "tarrare.podAnnotations" -}}
{{- $root := .root -}}
{{- $annotations := merge (deepCopy (.extra | default dict)) $root.Values.podAnnotations -}}
{{- if $root.Values.secrets.create -}}
{{- $secrets := include (print $root.Template.BasePath "/secrets.yaml") $root -}}
{{- $_ := set $annotations "checksum/secrets" ($secrets | sha256sum) -}}
{{- end -}}
{{- with $annotations -}}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* The gateway's upstreams: each route's variable names a group whose server is the service's Kubernetes Service,
with as many idle connections kept per worker as requests may be in flight (gateway/upstreams.local.conf says why). */}}
{{- define "tarrare.gatewayUpstreams" -}}
{{- $ports := include "tarrare.ports" . | fromYaml -}}
proxy_connect_timeout 2s;
{{- range $name := list "accounts" "places" "matching" "chat" "notifications" "media" }}
{{- $service := include "tarrare.componentName" (dict "root" $ "component" $name) }}
upstream {{ $name }} { server {{ $service }}:{{ index $ports $name }}; keepalive 256; }
{{- end }}
{{- $notifications := include "tarrare.componentName" (dict "root" $ "component" "notifications") }}
upstream notifications_stream { server {{ $notifications }}:{{ $ports.notifications }}; }
{{- range $name := list "accounts" "places" "matching" "chat" "notifications" "media" "notifications_stream" }}
map "" ${{ $name }}_upstream { default {{ $name }}; }
{{- end }}
{{- end -}}
