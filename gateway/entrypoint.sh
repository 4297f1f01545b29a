#!/bin/sh
# Writes nginx's configuration and runs it in the foreground. With a certificate and its key in $TLS_DIR (cert.pem,
# key.pem) the routes are served over HTTPS on 8443 and plain HTTP on 8080 redirects there (to HTTPS_PUBLIC_PORT,
# the port the host publishes); without one, the routes are served on 8080. `entrypoint.sh health` asks the running
# gateway for the campuses through whichever it serves (the compose health check). TILE_URL points the web client's
# maps at another tile server than the gateway's own /tiles/ (README, "Configuration").
set -eu
DIR=/etc/tarrare/gateway
RUN=/run/gateway
TLS_DIR=${TLS_DIR:-/etc/tarrare/tls}
HTTPS_PUBLIC_PORT=${HTTPS_PUBLIC_PORT:-8443}
DEFAULT_TILE_URL="/tiles/{z}/{x}/{y}.png"
TILE_URL=${TILE_URL:-$DEFAULT_TILE_URL}

# valid_tile_url URL: whether URL names {z}, {x} and {y}, and can go into nginx's configuration and a JavaScript string
# (no quotes, `$`, backslashes or spaces): a path on this gateway or a URL with its host, never one that starts with //
# and names another host (as scripts/up checks it).
valid_tile_url() {
  printf '%s\n' "$1" | grep -Eq '^(https?://[A-Za-z0-9.{}:-]+)?/[^/"'\''\\$[:space:]][^"'\''\\$[:space:]]*$' || return 1
  for part in "{z}" "{x}" "{y}"; do
    case $1 in *"$part"*) ;; *) return 1 ;; esac
  done
}
valid_tile_url "$TILE_URL" ||
  { echo "gateway: TILE_URL=$TILE_URL is not a tile URL like https://tiles.example.org/{z}/{x}/{y}.png" >&2; exit 1; }

tls=false
if [ -f "$TLS_DIR/cert.pem" ] || [ -f "$TLS_DIR/key.pem" ]; then
  [ -r "$TLS_DIR/cert.pem" ] || { echo "gateway: $TLS_DIR/key.pem is there but not a readable $TLS_DIR/cert.pem" >&2; exit 1; }
  [ -r "$TLS_DIR/key.pem" ] || { echo "gateway: $TLS_DIR/cert.pem is there but not a readable $TLS_DIR/key.pem" >&2; exit 1; }
  tls=true
fi

if [ "${1:-}" = health ]; then
  if $tls; then
    exec curl -fsSk -o /dev/null https://127.0.0.1:8443/v1/campuses
  fi
  exec curl -fsS -o /dev/null http://127.0.0.1:8080/v1/campuses
fi

if $tls; then
  GATEWAY_PORT="8443 ssl"
  port_suffix=":$HTTPS_PUBLIC_PORT"
  [ "$HTTPS_PUBLIC_PORT" = 443 ] && port_suffix=""
  secure="ssl_certificate $TLS_DIR/cert.pem; ssl_certificate_key $TLS_DIR/key.pem; ssl_protocols TLSv1.2 TLSv1.3;
    server { listen 8080; server_tokens off; location / { return 308 https://\$host$port_suffix\$request_uri; } }"
else
  GATEWAY_PORT=8080
  secure=""
fi
GATEWAY_UPSTREAMS=$DIR/upstreams.compose.conf
GATEWAY_ACCESS_LOG=/dev/stdout
GATEWAY_WEB_ROOT=/usr/share/tarrare/web
GATEWAY_WEB_CONF=$DIR/web.conf
GATEWAY_LEAFLET_ROOT=/usr/share/javascript/leaflet
GATEWAY_TILES_ROOT=/usr/share/tarrare/tiles
GATEWAY_TILE_URL=$TILE_URL
# The origin of a tile server elsewhere, for the page's Content-Security-Policy (Leaflet's {s} subdomains as a
# wildcard); nothing for the gateway's own tiles.
GATEWAY_TILE_ORIGIN=$(printf '%s\n' "$TILE_URL" | sed -nE 's|^(https?://[^/]+)/.*|\1|p' | sed 's|//{s}\.|//*.|')
export GATEWAY_PORT GATEWAY_UPSTREAMS GATEWAY_ACCESS_LOG GATEWAY_WEB_ROOT GATEWAY_WEB_CONF GATEWAY_LEAFLET_ROOT \
  GATEWAY_TILES_ROOT GATEWAY_TILE_URL GATEWAY_TILE_ORIGIN
# Only these names: nginx's own variables in the template ($host, $uri, ...) stay as they are.
envsubst '${GATEWAY_PORT} ${GATEWAY_UPSTREAMS} ${GATEWAY_ACCESS_LOG} ${GATEWAY_WEB_ROOT} ${GATEWAY_WEB_CONF}
  ${GATEWAY_LEAFLET_ROOT} ${GATEWAY_TILES_ROOT} ${GATEWAY_TILE_URL} ${GATEWAY_TILE_ORIGIN}' \
  <"$DIR/routes.conf.template" >"$RUN/routes.conf"
cat >"$RUN/nginx.conf" <<CONF
worker_processes auto;
pid $RUN/nginx.pid;
error_log stderr warn;
events { worker_connections 4096; }
http {
    client_body_temp_path $RUN/body;
    proxy_temp_path $RUN/proxy;
    fastcgi_temp_path $RUN/fastcgi;
    uwsgi_temp_path $RUN/uwsgi;
    scgi_temp_path $RUN/scgi;
    $secure
    include $RUN/routes.conf;
}
CONF
exec nginx -c "$RUN/nginx.conf" -g 'daemon off;'
