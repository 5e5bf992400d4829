# Sourced helper: start and stop a private redis-server on a loopback port
# (never a system Redis). Sets REDIS_PORT, REDIS_PID and REDIS_DIR.
#
# Safe beside other suites running at the same time: the port is drawn at
# random from 20000-31999, below the kernel's ephemeral range (Linux default
# 32768-60999), so outgoing connections do not take it; the server is ready
# only when INFO on that port reports the pid of the child we started
# (someone else's server may answer there); if our child exits (port taken)
# or another process answers, it is killed and another port is tried. The
# port is claimed until redis_stop (flock on a file per port in
# /tmp/redislock-test-ports, shared with the Rust and PHP test launchers),
# so no other suite starts a server there meanwhile.
# Extra arguments go to redis-server (they must not set a password).

REDIS_CLAIMS=/tmp/redislock-test-ports

# Claims $REDIS_PORT (fd REDIS_CLAIM_FD) unless another launcher holds it;
# where claims cannot be made, goes on unclaimed.
redis_claim() {
  { mkdir -p "$REDIS_CLAIMS" && chmod 1777 "$REDIS_CLAIMS"; } 2>/dev/null || true
  exec {REDIS_CLAIM_FD}>>"$REDIS_CLAIMS/$REDIS_PORT" 2>/dev/null || { REDIS_CLAIM_FD=; return 0; }
  flock -n "$REDIS_CLAIM_FD" && return 0
  redis_unclaim
  return 1
}

redis_unclaim() {
  if [ -n "${REDIS_CLAIM_FD:-}" ]; then
    exec {REDIS_CLAIM_FD}>&-
    REDIS_CLAIM_FD=
  fi
}

redis_start() {
  REDIS_DIR=$(mktemp -d)
  local try
  for try in $(seq 1 20); do
    REDIS_PORT=$((20000 + RANDOM % 12000))
    redis_claim || continue
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
      --dir "$REDIS_DIR" "$@" >"$REDIS_DIR/redis.log" 2>&1 &
    REDIS_PID=$!
    redis_wait_ours && return 0
    kill -9 "$REDIS_PID" 2>/dev/null || true
    wait "$REDIS_PID" 2>/dev/null || true
    redis_unclaim
  done
  echo "redis-server: none of ours came up on $try random ports (last: $REDIS_PORT)" >&2
  cat "$REDIS_DIR/redis.log" >&2
  rm -rf "$REDIS_DIR"
  REDIS_PID=
  return 1
}

# Waits at most 10 s until INFO on $REDIS_PORT reports process_id $REDIS_PID;
# fails at once when that child exited or another server answers.
redis_wait_ours() {
  local pid end=$((SECONDS + 10))
  while [ "$SECONDS" -lt "$end" ]; do
    kill -0 "$REDIS_PID" 2>/dev/null || return 1
    pid=$(timeout 2 redis-cli -p "$REDIS_PORT" INFO server 2>/dev/null | tr -d '\r' |
      sed -n 's/^process_id://p') || true
    [ -z "$pid" ] || { [ "$pid" = "$REDIS_PID" ]; return; }
    sleep 0.05
  done
  return 1
}

redis_stop() {
  if [ -n "${REDIS_PID:-}" ]; then
    kill -9 "$REDIS_PID" 2>/dev/null || true
    wait "$REDIS_PID" 2>/dev/null || true
    rm -rf "$REDIS_DIR"
    REDIS_PID=
  fi
  redis_unclaim
}

# redis_session SO: what the soak and stress commands share. Sets SO to
# the absolute path of the built extension (built first when missing),
# starts a private redis-server (REDIS_PORT) and makes a temp dir (WORK);
# both go when the script exits.
redis_session() {
  [ -f "$1" ] || bash scripts/build.sh
  SO=$(realpath "$1")
  redis_start
  WORK=$(mktemp -d)
  trap 'redis_stop; rm -rf "$WORK"' EXIT
}
