# Sourced helper: start and stop a private redis-server on a loopback port
# (never a system Redis) through the one fixture, target/release/redis-fixture
# (crates/fixture; built by scripts/build.sh, here when missing): a claimed
# random port below the ephemeral range, its own directory, ready only when
# it answers with its own pid, stopped by that pid. Sets REDIS_PORT,
# REDIS_PID (the server's) and REDIS_DIR. Extra arguments go to
# redis-server (they must not set a password).

REDIS_FIXTURE=${REDIS_FIXTURE:-target/release/redis-fixture}

redis_start() {
  [ -x "$REDIS_FIXTURE" ] || cargo build --release --locked -p redislock-fixture
  coproc REDIS_FIXTURE_PROC { exec "$REDIS_FIXTURE" server "$@"; }
  REDIS_FIXTURE_PID=$REDIS_FIXTURE_PROC_PID
  # Own copies of the coprocess's pipes: bash closes its own in subshells.
  exec {REDIS_FIXTURE_IN}>&"${REDIS_FIXTURE_PROC[1]}" {REDIS_FIXTURE_OUT}<&"${REDIS_FIXTURE_PROC[0]}"
  exec {REDIS_FIXTURE_PROC[1]}>&- {REDIS_FIXTURE_PROC[0]}<&-
  local line
  REDIS_PORT= REDIS_PID= REDIS_DIR=
  # The fixture bounds its own start-up (20 ports, 10 s each at most).
  while read -r -t 300 line <&"$REDIS_FIXTURE_OUT"; do
    case $line in
      port=*) REDIS_PORT=${line#port=} ;;
      pid=*) REDIS_PID=${line#pid=} ;;
      dir=*) REDIS_DIR=${line#dir=} ;;
      ready) return 0 ;;
    esac
  done
  echo "redis-fixture: no server came up" >&2
  redis_stop
  return 1
}

# Closing its stdin stops the fixture, which stops its server by pid.
redis_stop() {
  if [ -n "${REDIS_FIXTURE_PID:-}" ]; then
    exec {REDIS_FIXTURE_IN}>&- {REDIS_FIXTURE_OUT}<&-
    wait "$REDIS_FIXTURE_PID" 2>/dev/null || true
    REDIS_FIXTURE_PID= REDIS_PID=
  fi
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
