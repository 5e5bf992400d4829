# Make rules for redislock (added to the Makefile by config.m4).
#
# The extension is a Rust cdylib: cargo builds it and this rule copies it to
# modules/redislock.so, where PHP's `make install` (install-modules) finds
# it. cargo decides what to rebuild; make runs it when a Rust source,
# Cargo.toml or Cargo.lock is newer than modules/redislock.so (with a make
# other than GNU make: when modules/redislock.so is missing), so that
# `make install`, often run with sudo, does not run cargo again after `make`.
#
# CARGO_TARGET_DIR (or cargo's own configuration) moves cargo's build
# directory as usual; `cargo metadata` reports where it is. There is no
# `cargo clean` in `make clean`. PHP's own clean rule deletes every *.so, *.a
# and *.o below the build tree, which includes some of cargo's files when its
# target directory is target/ here: the next `make` rebuilds those crates
# (about 40 s), not the whole tree.

REDISLOCK_MODULE = $(phplibdir)/redislock.so
REDISLOCK_SOURCES = $(shell find '$(REDISLOCK_SRCDIR)/Cargo.toml' '$(REDISLOCK_SRCDIR)/Cargo.lock' '$(REDISLOCK_SRCDIR)/src' '$(REDISLOCK_SRCDIR)/crates/core/Cargo.toml' '$(REDISLOCK_SRCDIR)/crates/core/src' '$(REDISLOCK_SRCDIR)/crates/core/scripts' -type f 2>/dev/null)

# Prints cargo's target directory.
REDISLOCK_PRINT_TARGET_DIR = cd '$(REDISLOCK_SRCDIR)' && '$(CARGO)' metadata --format-version 1 --no-deps --locked --manifest-path '$(REDISLOCK_SRCDIR)/Cargo.toml' | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p'

all: $(REDISLOCK_MODULE)
build-modules: $(REDISLOCK_MODULE)

# ext-php-rs's build script builds against the php-config in $PHP_CONFIG and
# the php in $PHP, else the ones on the PATH. They are passed only when the
# PATH would find another PHP than configure's: cargo rebuilds ext-php-rs
# whenever these variables change, so a build of the same PHP through
# scripts/build.sh and through make can share one target directory.
# `+`: cargo joins make's jobserver, so `make -jN` bounds cargo's jobs too.
$(REDISLOCK_MODULE): $(REDISLOCK_SOURCES)
	+@same() { a=`command -v "$$1" 2>/dev/null` && test -n "$$a" && test "$$a" -ef "$$2"; }; \
	if same php-config '$(REDISLOCK_PHP_CONFIG)' && same php '$(REDISLOCK_PHP)'; then \
	  php_env=; \
	else \
	  php_env="PHP_CONFIG=$(REDISLOCK_PHP_CONFIG) PHP=$(REDISLOCK_PHP)"; \
	fi; \
	echo "cd '$(REDISLOCK_SRCDIR)' && $$php_env $(REDISLOCK_RUSTC_ENV) $(CARGO) build --release --locked -p redislock"; \
	cd '$(REDISLOCK_SRCDIR)' && env $$php_env $(REDISLOCK_RUSTC_ENV) '$(CARGO)' build --release --locked -p redislock --manifest-path '$(REDISLOCK_SRCDIR)/Cargo.toml'
	@target_dir=`$(REDISLOCK_PRINT_TARGET_DIR)`; \
	lib="$$target_dir/release/libredislock.so"; \
	test -f "$$lib" || lib="$$target_dir/release/libredislock.dylib"; \
	if test ! -f "$$lib"; then echo "redislock: cargo built no library in $$target_dir/release" >&2; exit 1; fi; \
	mkdir -p '$(phplibdir)' && cp "$$lib" '$@.tmp' && mv -f '$@.tmp' '$@' && \
	echo "redislock: $$lib -> $@"

# `make test` runs the phpt suite (php-tests/, a folder per topic) against
# modules/redislock.so (PHP's own rule loads it from modules/ for tests that
# name it in --EXTENSIONS--; child processes find it through REDISLOCK_SO).
# The tests start their own redis-server processes through the test fixture
# redis-fixture (crates/fixture, built here; found through REDISLOCK_FIXTURE),
# so redis-server must be on the PATH.
# `make test TESTS=php-tests/api/010-acquire-release.phpt` runs one.
TESTS = $(REDISLOCK_SRCDIR)/php-tests
export REDISLOCK_FIXTURE = $(builddir)/redis-fixture
test: redislock-fixture
.PHONY: redislock-fixture
redislock-fixture:
	+cd '$(REDISLOCK_SRCDIR)' && '$(CARGO)' build --release --locked -p redislock-fixture --manifest-path '$(REDISLOCK_SRCDIR)/Cargo.toml'
	@target_dir=`$(REDISLOCK_PRINT_TARGET_DIR)`; \
	cp "$$target_dir/release/redis-fixture" '$(REDISLOCK_FIXTURE).tmp' && mv -f '$(REDISLOCK_FIXTURE).tmp' '$(REDISLOCK_FIXTURE)'
export REDISLOCK_SO = $(phplibdir)/redislock.so
export NO_INTERACTION = 1
