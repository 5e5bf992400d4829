/*
 * A threaded PHP host for the ZTS tests: PHP's embed SAPI (libphp from
 * scripts/zts-build.sh) with the extension loaded at module startup, and
 * THREADS threads that each run requests one after another, as a threaded
 * web server (FrankenPHP, Apache's worker MPM) does: each thread has its
 * own TSRM context (ts_resource), and every request is
 * php_request_startup(), one script, php_request_shutdown().
 *
 *   zts-host EXTENSION.so DIR THREADS REQUESTS ROUNDS
 *
 * The extension is loaded by PHP's own loader (an `extension=` ini entry),
 * as a PHP installation loads it. With ZTS_HOST_LINK=1 the host loads it
 * itself and hands its module entry to module startup, as for a module
 * built into PHP: ThreadSanitizer refuses libraries loaded with
 * RTLD_DEEPBIND, which PHP's loader uses.
 *
 * DIR holds the scripts (zts/request.php, zts/final.php). The main thread
 * runs a "setup" request first. Thread 0 runs one
 * long "holder" request; threads 1.. run REQUESTS "worker" requests each,
 * then one "tail" request (which says that all the thread's requests before
 * it have ended); each request gets its role, thread, request number and
 * the run's sizes in $argv. When every thread is done, the main thread runs
 * final.php, whose exit status is the host's. The Redis server comes from
 * $REDISLOCK_TEST_URL (scripts/zts-test.sh starts a private one).
 */

#define _GNU_SOURCE /* memrchr, which PHP's headers use */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sapi/embed/php_embed.h>

static const char *dir;
static int threads, requests, rounds;

/* One request of the calling thread, running DIR/SCRIPT with $argv =
 * [SCRIPT, role, thread, request, threads, requests, rounds]. Returns the
 * script's exit status (255 when the request could not start). */
static int run_request(const char *script, const char *role, int thread, int request)
{
	char path[4096], t[16], r[16], n[16], m[16], k[16];
	char *argv[] = {path, (char *) role, t, r, n, m, k, NULL};
	volatile int status = 255; /* survives a bailout's longjmp */

	snprintf(path, sizeof path, "%s/%s", dir, script);
	snprintf(t, sizeof t, "%d", thread);
	snprintf(r, sizeof r, "%d", request);
	snprintf(n, sizeof n, "%d", threads);
	snprintf(m, sizeof m, "%d", requests);
	snprintf(k, sizeof k, "%d", rounds);

	/* The SAPI globals are this thread's own. */
	SG(options) |= SAPI_OPTION_NO_CHDIR;
	SG(request_info).argc = 7;
	SG(request_info).argv = argv;

	zend_first_try {
		if (php_request_startup() == FAILURE) {
			fprintf(stderr, "zts-host: thread %d: request startup failed\n", thread);
			return 255;
		}
		SG(headers_sent) = 1;
		SG(request_info).no_headers = 1;

		zend_file_handle file;
		zend_stream_init_filename(&file, path);
		php_execute_script(&file);
		zend_destroy_file_handle(&file);
		status = EG(exit_status);
	} zend_end_try();

	/* Request end: the extension's RSHUTDOWN runs here, on this thread. */
	php_request_shutdown(NULL);
	SG(request_info).argc = 0;
	SG(request_info).argv = NULL;
	return status;
}

static void *thread_main(void *arg)
{
	int thread = (int) (intptr_t) arg;

	/* This thread's TSRM context: its own executor, compiler and SAPI
	 * globals, built by every module's globals constructor. */
	(void) ts_resource(0);
	if (thread == 0) {
		run_request("request.php", "holder", thread, 0);
	} else {
		for (int r = 0; r < requests; r++) {
			run_request("request.php", "worker", thread, r);
		}
		run_request("request.php", "tail", thread, requests);
	}
	ts_free_thread();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: %s EXTENSION.so DIR THREADS REQUESTS ROUNDS\n", argv[0]);
		return 2;
	}
	dir = argv[2];
	threads = atoi(argv[3]);
	requests = atoi(argv[4]);
	rounds = atoi(argv[5]);
	if (threads < 2 || requests < 1 || rounds < 1) {
		fprintf(stderr, "zts-host: needs THREADS >= 2, REQUESTS >= 1, ROUNDS >= 1\n");
		return 2;
	}

	/* php_embed_init() without its request: the process-wide start-up
	 * (TSRM, signals, SAPI, module startup with the extension), on the
	 * main thread. */
	zend_module_entry *linked = NULL;
	const char *link = getenv("ZTS_HOST_LINK");
	if (link && strcmp(link, "1") == 0) {
		void *library = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
		zend_module_entry *(*get_module)(void) =
			library ? (zend_module_entry * (*)(void)) dlsym(library, "get_module") : NULL;
		if (!get_module) {
			fprintf(stderr, "zts-host: cannot load %s: %s\n", argv[1], dlerror());
			return 1;
		}
		linked = get_module();
	}

	php_tsrm_startup();
	zend_signal_startup();
	sapi_startup(&php_embed_module);
	char ini[8192];
	snprintf(ini, sizeof ini,
		"html_errors=0\nregister_argc_argv=1\nimplicit_flush=1\n"
		"output_buffering=0\nmax_execution_time=0\nmax_input_time=-1\n"
		"display_errors=stderr\n%s%s\n", linked ? "" : "extension=", linked ? "" : argv[1]);
	php_embed_module.ini_entries = ini;
	php_embed_module.executable_location = argv[0];
	if (php_module_startup(&php_embed_module, linked) == FAILURE) {
		fprintf(stderr, "zts-host: module startup failed\n");
		return 1;
	}

	/* A clean slate in Redis (the keys of an earlier run), on the main
	 * thread, before any other thread exists. */
	if (run_request("request.php", "setup", -1, 0) != 0) {
		fprintf(stderr, "zts-host: the setup request failed\n");
		return 1;
	}

	pthread_t *ids = calloc((size_t) threads, sizeof *ids);
	for (int t = 0; t < threads; t++) {
		if (pthread_create(&ids[t], NULL, thread_main, (void *) (intptr_t) t) != 0) {
			fprintf(stderr, "zts-host: pthread_create failed\n");
			return 1;
		}
	}
	for (int t = 0; t < threads; t++) {
		pthread_join(ids[t], NULL);
	}
	free(ids);

	int status = run_request("final.php", "final", -1, 0);

	php_module_shutdown();
	sapi_shutdown();
	tsrm_shutdown();
	return status;
}
