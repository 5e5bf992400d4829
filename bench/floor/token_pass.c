/*
 * The hand-over floor: two processes pass a token back and forth through
 * the same Redis, one round trip per pass (LPUSH to the other's list, the
 * other blocked in BLPOP on it), the least a hand-over through Redis can
 * cost. Each pass is timed from just before the sender's LPUSH to just
 * after the receiver's BLPOP returned (CLOCK_MONOTONIC, one clock for
 * both processes), the way bench/lib/Intervals.php times a lock's
 * hand-over from one holder's exit to the next holder's entry.
 *
 *   token_pass PORT PASSES
 *
 * Prints one JSON line: {"passes":N,"p50_us":X,"p99_us":Y}. No library:
 * plain sockets and the few RESP replies these commands give.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int connect_to(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        perror("token_pass: connect");
        exit(1);
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void send_all(int fd, const char *buf, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n <= 0) {
            perror("token_pass: write");
            exit(1);
        }
        buf += n;
        len -= (size_t)n;
    }
}

/* Reads one whole reply: an integer (":1\r\n") or BLPOP's two-element
 * array of bulk strings; anything else (an error) ends the program. */
static void read_reply(int fd, int array) {
    char buf[512];
    size_t have = 0;
    int lines = array ? 5 : 1; /* *2, $len, key, $len, value */
    int seen = 0;
    while (seen < lines) {
        ssize_t n = read(fd, buf + have, sizeof buf - have);
        if (n <= 0) {
            perror("token_pass: read");
            exit(1);
        }
        for (ssize_t i = 0; i < n; i++) {
            if (buf[have + i] == '\n') {
                seen++;
            }
        }
        have += (size_t)n;
        if (buf[0] == '-' || have == sizeof buf) {
            fprintf(stderr, "token_pass: unexpected reply: %.*s\n", (int)have, buf);
            exit(1);
        }
    }
}

static void command(int fd, const char *name, const char *key, const char *arg) {
    char buf[256];
    int len = snprintf(buf, sizeof buf, "*3\r\n$%zu\r\n%s\r\n$%zu\r\n%s\r\n$%zu\r\n%s\r\n",
                       strlen(name), name, strlen(key), key, strlen(arg), arg);
    send_all(fd, buf, (size_t)len);
}

static int by_value(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* One side: receives on `mine`, passes to `theirs`; `first` sends first.
 * Each pass's time lands in times[i] (of this side's receptions). */
static void side(int port, const char *mine, const char *theirs, int first, int passes,
                 long long *sent_at, long long *times) {
    int fd = connect_to(port);
    for (int i = 0; i < passes; i++) {
        if (!(first && i == 0)) {
            command(fd, "BLPOP", mine, "0");
            read_reply(fd, 1);
            times[i] = now_ns() - *sent_at;
        }
        *sent_at = now_ns();
        command(fd, "LPUSH", theirs, "t");
        read_reply(fd, 0);
    }
    close(fd);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: token_pass PORT PASSES\n");
        return 2;
    }
    int port = atoi(argv[1]);
    int passes = atoi(argv[2]);
    if (port <= 0 || passes < 10) {
        fprintf(stderr, "token_pass: PORT must be a port, PASSES at least 10\n");
        return 2;
    }
    /* Shared with the child: the last send's time, and both sides' times. */
    size_t size = sizeof(long long) * (size_t)(1 + 2 * passes);
    long long *shared = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) {
        perror("token_pass: mmap");
        return 1;
    }
    memset(shared, 0, size);
    char a[64], b[64];
    snprintf(a, sizeof a, "bench:floor:%d:a", (int)getpid());
    snprintf(b, sizeof b, "bench:floor:%d:b", (int)getpid());
    pid_t child = fork();
    if (child == 0) {
        side(port, b, a, 0, passes, shared, shared + 1 + passes);
        _exit(0);
    }
    side(port, a, b, 1, passes, shared, shared + 1);
    int status = 0;
    waitpid(child, &status, 0);
    /* The parent's first pass sends without receiving: it has no time. */
    long long *times = malloc(sizeof(long long) * (size_t)(2 * passes));
    int n = 0;
    for (int i = 1; i < passes; i++) {
        times[n++] = shared[1 + i];
    }
    for (int i = 0; i < passes; i++) {
        times[n++] = shared[1 + passes + i];
    }
    qsort(times, (size_t)n, sizeof *times, by_value);
    /* The child's last LPUSH went to nobody: drop it. */
    int fd = connect_to(port);
    command(fd, "UNLINK", a, b);
    read_reply(fd, 0);
    close(fd);
    printf("{\"passes\":%d,\"p50_us\":%.1f,\"p99_us\":%.1f}\n", n, times[n / 2] / 1000.0,
           times[(n * 99) / 100] / 1000.0);
    free(times);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
