# Sourced helper: start and stop a private redis-server on a free loopback
# port (never a system Redis). Sets REDIS_PORT and REDIS_PID.
redis_free_port() {
  php -n -r '$s = stream_socket_server("tcp://127.0.0.1:0"); $n = stream_socket_get_name($s, false); echo substr($n, strrpos($n, ":") + 1);'
}

redis_start() {
  REDIS_PORT=$(redis_free_port)
  REDIS_DIR=$(mktemp -d)
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$REDIS_DIR" "$@" >"$REDIS_DIR/redis.log" 2>&1 &
  REDIS_PID=$!
  for _ in $(seq 1 200); do
    redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "redis-server did not start on port $REDIS_PORT" >&2
  cat "$REDIS_DIR/redis.log" >&2
  return 1
}

redis_stop() {
  if [ -n "${REDIS_PID:-}" ]; then
    kill -9 "$REDIS_PID" 2>/dev/null || true
    wait "$REDIS_PID" 2>/dev/null || true
    rm -rf "$REDIS_DIR"
    REDIS_PID=
  fi
}
