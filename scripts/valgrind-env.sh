# How memcheck runs the phpt tests: sourced by scripts/valgrind.sh (the
# whole suite) and scripts/test.sh (its subset).
#
# Memcheck follows the tests' php children (they load the extension) but
# not the servers and tools they start (redis-server's own reports, e.g.
# lzf_compress during a replica sync, are not ours); definite leaks count as
# errors (run-tests -m alone does not check leaks); no vgdb pipes (FPM
# workers, switched to another user, could not remove them).
# shellcheck shell=bash
export VALGRIND_OPTS="--trace-children-skip=*redis-fixture,*redis-server,*redis-check-rdb,*redis-sentinel,*redis-cli,*valkey-server,*valkey-check-rdb,*valkey-cli,*cgi-fcgi --vgdb=no --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite --suppressions=$PWD/scripts/valgrind.supp"
# Extensions stay loaded at shutdown, as PHP's own docs advise for valgrind:
# an unloaded library's statics vanish, so every value kept for the life of
# the process (the ini table, the Rust runtime's own) would show as a leak.
export ZEND_DONT_UNLOAD_MODULES=1
