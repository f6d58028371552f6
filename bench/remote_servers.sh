# Sourced by bench/remote_latency.sh and bench/remote_fanout.sh: starts a redis-server and an nginx
# (WebDAV PUT under /cache/, plain HTTP and HTTPS with a self-signed certificate) on free loopback
# ports, and s3rver (S3) where it is installed, config and files in $work, stopped (and $work
# removed) when the script exits. Sets redis_url, http_url, https_url, ca_file and s3_url (empty
# without s3rver; its endpoint and keys are exported as JITCACHE_REMOTE_S3_* settings).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
redis-server --port "$port" --bind 127.0.0.1 --dir "$work" --save "" --appendonly no \
  --logfile "$work/redis.log" &
redis_pid=$!
http_port=$(free_port)
https_port=$(free_port)
mkdir -p "$work/www/cache"
ca_file=$work/cert.pem
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$work/key.pem" \
  -out "$ca_file" -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null
user_line=""
[ "$(id -u)" = 0 ] && user_line="user root;"
cat >"$work/nginx.conf" <<NGINX
daemon off; master_process off; worker_processes 1; $user_line
pid $work/nginx.pid; error_log $work/nginx-error.log;
events { worker_connections 256; }
http {
  access_log off; client_max_body_size 0; client_body_temp_path $work/body; proxy_temp_path $work/proxy;
  fastcgi_temp_path $work/fastcgi; uwsgi_temp_path $work/uwsgi; scgi_temp_path $work/scgi;
  server {
    listen 127.0.0.1:$http_port; listen 127.0.0.1:$https_port ssl;
    ssl_certificate $ca_file; ssl_certificate_key $work/key.pem;
    location /cache/ { root $work/www; dav_methods PUT; create_full_put_path on; dav_access user:rw; }
  }
}
NGINX
nginx -p "$work" -e "$work/nginx-error.log" -c "$work/nginx.conf" &
nginx_pid=$!
trap 'kill $redis_pid $nginx_pid 2>/dev/null; wait $redis_pid $nginx_pid 2>/dev/null; rm -rf "$work"' EXIT
until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.05; done
until curl -s -o /dev/null "http://127.0.0.1:$http_port/cache/"; do sleep 0.05; done
# S3: s3rver (npm; scripts/install-deps.sh --tests installs it) with one bucket, where it is installed.
s3rver=${JITCACHE_TEST_S3RVER:-${XDG_CACHE_HOME:-$HOME/.cache}/jitcache-tests/s3rver/node_modules/.bin/s3rver}
s3_url=""
if [ -x "$s3rver" ]; then
  s3_port=$(free_port)
  mkdir -p "$work/s3"
  "$s3rver" -d "$work/s3" -a 127.0.0.1 -p "$s3_port" --configure-bucket bench >"$work/s3rver.log" 2>&1 &
  s3_pid=$!
  # (node ends by the signal: its wait fails, and under set -e the folder would be left behind)
  trap 'kill $redis_pid $nginx_pid $s3_pid 2>/dev/null; wait $redis_pid $nginx_pid $s3_pid 2>/dev/null || true; rm -rf "$work"' EXIT
  until curl -s -o /dev/null "http://127.0.0.1:$s3_port/bench"; do sleep 0.05; done
  export JITCACHE_REMOTE_S3_ENDPOINT=http://127.0.0.1:$s3_port JITCACHE_REMOTE_S3_ACCESS_KEY_ID=S3RVER \
    JITCACHE_REMOTE_S3_SECRET_ACCESS_KEY=S3RVER
  s3_url=s3://bench
else
  echo "no s3rver at $s3rver: S3 rows left out (scripts/install-deps.sh --tests installs it)" >&2
fi
redis_url=redis://127.0.0.1:$port
http_url=http://127.0.0.1:$http_port/cache
https_url=https://127.0.0.1:$https_port/cache
