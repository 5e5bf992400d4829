dnl config.m4 for redislock, a PHP extension written in Rust (ext-php-rs).
dnl
dnl `phpize && ./configure && make && make install` (what PIE runs) builds
dnl the extension with cargo: there is no C source. configure checks for
dnl cargo and a Rust toolchain that is recent enough; the make rule in
dnl Makefile.frag runs `cargo build --release --locked` for the binding crate
dnl against the PHP of this php-config, and copies the library to
dnl modules/redislock.so, which PHP's `make install` puts into the extension
dnl directory.
dnl
dnl Environment: CARGO (the cargo to use), RUSTC (the compiler, as cargo reads
dnl it), and at make time CARGO_TARGET_DIR (cargo's build directory; default
dnl target/ in this tree) and the other variables cargo reads.

PHP_ARG_ENABLE([redislock],
  [whether to enable redislock],
  [AS_HELP_STRING([--enable-redislock],
    [Enable redislock, the Redis lock extension (built with cargo)])],
  [yes])

if test "$PHP_REDISLOCK" != "no"; then
  dnl NTS and thread-safe (ZTS) PHP alike: ext-php-rs reads which one from
  dnl the php it builds against (scripts/zts-test.sh tests a ZTS build).

  dnl The rust-version of the workspace (Cargo.toml), the toolchain's minimum.
  REDISLOCK_SRCDIR=`cd "$srcdir" && pwd`
  REDISLOCK_RUST_MIN=`$SED -n 's/^rust-version *= *"\([[0-9.]]*\)".*/\1/p' "$REDISLOCK_SRCDIR/Cargo.toml" | head -n 1`
  test -n "$REDISLOCK_RUST_MIN" || REDISLOCK_RUST_MIN=1.88

  dnl A rustup install puts cargo in ~/.cargo/bin, which is not always on the
  dnl PATH of a build (sudo, a CI step): look there too.
  AC_ARG_VAR([CARGO], [the cargo program used to build redislock])
  AC_PATH_PROG([CARGO], [cargo], [no], [$PATH$PATH_SEPARATOR$HOME/.cargo/bin])
  if test "$CARGO" = "no" || test ! -x "$CARGO"; then
    AC_MSG_ERROR([cargo not found. redislock is written in Rust: install a Rust toolchain ($REDISLOCK_RUST_MIN or newer), for example from https://rustup.rs, and put cargo on the PATH (or run ./configure CARGO=/path/to/cargo)])
  fi

  dnl cargo runs $RUSTC if set, else the rustc of its own toolchain. A RUSTC
  dnl given to configure is also the one make passes to cargo.
  AC_ARG_VAR([RUSTC], [the Rust compiler cargo uses])
  REDISLOCK_RUSTC_ENV=
  test -n "$RUSTC" && REDISLOCK_RUSTC_ENV=yes
  REDISLOCK_CARGO_DIR=`dirname "$CARGO"`
  AC_PATH_PROG([RUSTC], [rustc], [no], [$REDISLOCK_CARGO_DIR$PATH_SEPARATOR$PATH])
  if test "$RUSTC" = "no" || test ! -x "$RUSTC"; then
    AC_MSG_ERROR([rustc (the Rust compiler) not found next to $CARGO nor on the PATH: install a Rust toolchain ($REDISLOCK_RUST_MIN or newer), for example from https://rustup.rs])
  fi

  dnl Compares "X.Y[.Z]" versions: true when $1 >= $2.
  redislock_version_ge() {
    echo "$1 $2" | $AWK '{
      n = split($1, a, "."); m = split($2, b, ".");
      for (i = 1; i <= 3; i++) {
        x = (i <= n) ? a[[i]] + 0 : 0; y = (i <= m) ? b[[i]] + 0 : 0;
        if (x > y) exit 0; if (x < y) exit 1;
      }
      exit 0 }'
  }

  AC_MSG_CHECKING([for the Rust compiler's version (need $REDISLOCK_RUST_MIN or newer)])
  REDISLOCK_RUSTC_VERSION=`"$RUSTC" --version 2>/dev/null | $SED -n 's/^rustc \([[0-9]][[0-9]]*\.[[0-9]][[0-9]]*\.[[0-9]][[0-9]]*\).*/\1/p'`
  AC_MSG_RESULT([${REDISLOCK_RUSTC_VERSION:-unknown}])
  if test -z "$REDISLOCK_RUSTC_VERSION"; then
    AC_MSG_ERROR([$RUSTC --version printed no version: is a Rust toolchain installed? (with rustup: rustup default stable)])
  fi
  if ! redislock_version_ge "$REDISLOCK_RUSTC_VERSION" "$REDISLOCK_RUST_MIN"; then
    AC_MSG_ERROR([Rust $REDISLOCK_RUSTC_VERSION is too old: redislock needs Rust $REDISLOCK_RUST_MIN or newer (rust-version in Cargo.toml). Update it (rustup update stable) or set RUSTC to a newer rustc])
  fi

  AC_MSG_CHECKING([for cargo's version])
  REDISLOCK_CARGO_VERSION=`"$CARGO" --version 2>/dev/null | $SED -n 's/^cargo \([[0-9]][[0-9]]*\.[[0-9]][[0-9]]*\.[[0-9]][[0-9]]*\).*/\1/p'`
  AC_MSG_RESULT([${REDISLOCK_CARGO_VERSION:-unknown}])
  if test -z "$REDISLOCK_CARGO_VERSION"; then
    AC_MSG_ERROR([$CARGO --version printed no version: is a Rust toolchain installed? (with rustup: rustup default stable)])
  fi
  if ! redislock_version_ge "$REDISLOCK_CARGO_VERSION" "$REDISLOCK_RUST_MIN"; then
    AC_MSG_ERROR([cargo $REDISLOCK_CARGO_VERSION is too old: redislock needs Rust $REDISLOCK_RUST_MIN or newer (rust-version in Cargo.toml). Update it (rustup update stable)])
  fi

  dnl ext-php-rs's build script finds the PHP to build against through the
  dnl PHP_CONFIG (headers) and PHP (version, ZTS, debug) variables. Both must
  dnl be absolute paths, and they must be the PHP this configure is for.
  AC_MSG_CHECKING([for the php-config that cargo builds against])
  case "$PHP_CONFIG" in
    */*) REDISLOCK_PHP_CONFIG="$PHP_CONFIG" ;;
    *) REDISLOCK_PHP_CONFIG=`command -v "$PHP_CONFIG" 2>/dev/null` ;;
  esac
  if test -n "$REDISLOCK_PHP_CONFIG"; then
    REDISLOCK_PHP_CONFIG=$(cd "$(dirname "$REDISLOCK_PHP_CONFIG")" && pwd)/$(basename "$REDISLOCK_PHP_CONFIG")
  fi
  AC_MSG_RESULT([$REDISLOCK_PHP_CONFIG])
  if test -z "$REDISLOCK_PHP_CONFIG" || test ! -x "$REDISLOCK_PHP_CONFIG"; then
    AC_MSG_ERROR([cannot find php-config ($PHP_CONFIG): use --with-php-config=PATH])
  fi
  AC_MSG_CHECKING([for the PHP binary of that php-config])
  REDISLOCK_PHP="$PHP_EXECUTABLE"
  AC_MSG_RESULT([$REDISLOCK_PHP])
  if test -z "$REDISLOCK_PHP" || test ! -x "$REDISLOCK_PHP"; then
    AC_MSG_ERROR([$REDISLOCK_PHP_CONFIG --php-binary names no executable PHP ($REDISLOCK_PHP): ext-php-rs runs it to learn the PHP version])
  fi

  dnl ext-php-rs generates its bindings with bindgen, which needs libclang.
  dnl Checked by the build itself (the message names the missing library).

  if test "$REDISLOCK_RUSTC_ENV" = "yes"; then
    REDISLOCK_RUSTC_ENV="RUSTC='$RUSTC'"
  fi

  PHP_SUBST(CARGO)
  PHP_SUBST(REDISLOCK_RUSTC_ENV)
  PHP_SUBST(REDISLOCK_SRCDIR)
  PHP_SUBST(REDISLOCK_PHP_CONFIG)
  PHP_SUBST(REDISLOCK_PHP)
  dnl No C sources, so no build directories but modules/.
  PHP_ADD_BUILD_DIR([modules])
  PHP_ADD_MAKEFILE_FRAGMENT([$REDISLOCK_SRCDIR/Makefile.frag], [$REDISLOCK_SRCDIR], [$REDISLOCK_SRCDIR])
fi
