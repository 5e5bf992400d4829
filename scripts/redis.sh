# Sourced helper: private redis-servers on loopback ports (never a system
# Redis) through the one fixture, target/release/redis-fixture
# (crates/fixture; built by scripts/build.sh, here when missing): claimed
# random ports below the ephemeral range, each server in its own
# directory, ready only when it answers with its own pid, stopped by that
# pid when the fixture's stdin closes.
#
# redis_start [ARGS]: one redis-server (extra arguments go to it; they must
#   not set a password). Sets REDIS_PORT, REDIS_PID (the server's) and
#   REDIS_DIR.
# redis_topology NAME: `redis-fixture topology NAME`. Sets REDIS_SERVERS
#   (the lock's URLs), REDIS_OPTIONS (name=value lock options) and
#   REDIS_NODES (the servers holding locks), each comma-separated.
# redis_stop: stops whichever is running.

REDIS_FIXTURE=${REDIS_FIXTURE:-target/release/redis-fixture}

# Runs `redis-fixture "$@"` as a coprocess and reads what it prints until
# `ready` into REDIS_FIXTURE_LINES.
redis_fixture() {
  [ -x "$REDIS_FIXTURE" ] || cargo build --release --locked -p redislock-fixture
  coproc REDIS_FIXTURE_PROC { exec "$REDIS_FIXTURE" "$@"; }
  REDIS_FIXTURE_PID=$REDIS_FIXTURE_PROC_PID
  # Own copies of the coprocess's pipes: bash closes its own in subshells.
  exec {REDIS_FIXTURE_IN}>&"${REDIS_FIXTURE_PROC[1]}" {REDIS_FIXTURE_OUT}<&"${REDIS_FIXTURE_PROC[0]}"
  exec {REDIS_FIXTURE_PROC[1]}>&- {REDIS_FIXTURE_PROC[0]}<&-
  local line
  REDIS_FIXTURE_LINES=()
  # The fixture bounds its own start-up; this bounds a hung one.
  while read -r -t 300 line <&"$REDIS_FIXTURE_OUT"; do
    [ "$line" = ready ] && return 0
    REDIS_FIXTURE_LINES+=("$line")
  done
  echo "redis-fixture $*: not ready" >&2
  redis_stop
  return 1
}

# The values of KEY in REDIS_FIXTURE_LINES, comma-separated.
redis_fixture_values() {
  local line out=
  for line in "${REDIS_FIXTURE_LINES[@]}"; do
    case $line in "$1="*) out+=${out:+,}${line#"$1="} ;; esac
  done
  echo "$out"
}

redis_start() {
  redis_fixture server "$@" || return 1
  REDIS_PORT=$(redis_fixture_values port)
  REDIS_PID=$(redis_fixture_values pid)
  REDIS_DIR=$(redis_fixture_values dir)
}

redis_topology() {
  redis_fixture topology "$1" || return 1
  REDIS_SERVERS=$(redis_fixture_values server)
  REDIS_NODES=$(redis_fixture_values node)
  local line
  REDIS_OPTIONS=
  for line in "${REDIS_FIXTURE_LINES[@]}"; do
    case $line in option.*) REDIS_OPTIONS+=${REDIS_OPTIONS:+,}${line#option.} ;; esac
  done
}

# Closing its stdin stops the fixture, which stops its servers by pid.
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
