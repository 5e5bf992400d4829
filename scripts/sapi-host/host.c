/*
 * sapi-host: a stand-in for FrankenPHP on PHP's embed SAPI, to test the
 * extension's per-request SAPI hook (src/sapi_hook.rs) with a real engine.
 * FrankenPHP itself needs a thread-safe PHP, Go and Caddy; what matters
 * here is only how it drives the engine, which this host does the same way:
 *
 * - the SAPI is named as the test asks (--name frankenphp, or another name
 *   for the control run), and PHP starts once, loading the extension from
 *   the start-up ini (extension=..., never dl());
 * - worker mode (default): one PHP request runs the worker script; its
 *   host_handle_request(callable $cb) ends the start-up request the first
 *   time it is called, then around each "HTTP request" runs the SAPI's own
 *   request start (output layer on, sapi_activate()) and end (output
 *   flushed and off, sapi_deactivate()), calling $cb(int $number) in
 *   between, as FrankenPHP's frankenphp_handle_request() does. RINIT and
 *   RSHUTDOWN run once, for the whole worker. After --requests requests it
 *   starts one more request (the worker's own end) and returns false;
 * - classic mode (--classic N): the script runs N times, each in a full PHP
 *   request (php_request_startup() .. php_request_shutdown(), so both
 *   RSHUTDOWN and sapi_deactivate() run for each), as FrankenPHP runs a
 *   script outside worker mode; host_request_number() tells which.
 *
 * usage: sapi-host [--name NAME] [--ini LINE]... [--requests N | --classic N]
 *                  SCRIPT
 * Exit status: the script's (255 after a fatal error), 2 on a host error.
 */

/* PHP's headers first: they define _GNU_SOURCE, which they need. */
#include <sapi/embed/php_embed.h>
#include <main/php_output.h>
#include <Zend/zend_exceptions.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *host_ini; /* the --ini lines */
static long requests = 3;
static long request_number = 0;
static bool booting = true;

/* The end of one worker request: what sapi_deactivate() and the output
 * layer do at the end of a request, without RSHUTDOWN. */
static void worker_request_end(void)
{
	zend_try { php_output_end_all(); } zend_end_try();
	zend_try { php_output_deactivate(); } zend_end_try();
	zend_try { sapi_deactivate(); } zend_end_try();
}

/* The start of one worker request, without RINIT. */
static void worker_request_start(void)
{
	zend_try {
		php_output_activate();
		PG(header_is_being_sent) = 0;
		PG(connection_status) = PHP_CONNECTION_NORMAL;
		sapi_activate();
		/* As php_embed_init() sets for its one request. */
		SG(headers_sent) = 1;
		SG(request_info).no_headers = 1;
		php_output_set_implicit_flush(1);
	} zend_end_try();
}

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_host_handle_request, 0, 1, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, callback, IS_CALLABLE, 0)
ZEND_END_ARG_INFO()

ZEND_FUNCTION(host_handle_request)
{
	zend_fcall_info fci;
	zend_fcall_info_cache fcc;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_FUNC(fci, fcc)
	ZEND_PARSE_PARAMETERS_END();

	if (booting) {
		/* The worker script's start-up ran in a request of its own. */
		booting = false;
		worker_request_end();
	}
	worker_request_start();
	if (request_number >= requests) {
		/* No more requests: the worker's PHP request goes on to its end. */
		RETURN_FALSE;
	}

	zval number, retval;
	ZVAL_LONG(&number, request_number++);
	ZVAL_UNDEF(&retval);
	fci.retval = &retval;
	fci.params = &number;
	fci.param_count = 1;
	zend_call_function(&fci, &fcc);
	zval_ptr_dtor(&retval);
	if (EG(exception)) {
		if (zend_is_unwind_exit(EG(exception)) || zend_is_graceful_exit(EG(exception))) {
			zend_bailout(); /* exit(): the worker ends */
		}
		zend_exception_error(EG(exception), E_ERROR);
	}

	worker_request_end();
	RETURN_TRUE;
}

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_host_request_number, 0, 0, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_FUNCTION(host_request_number)
{
	ZEND_PARSE_PARAMETERS_NONE();
	RETURN_LONG(request_number);
}

static const zend_function_entry host_functions[] = {
	ZEND_FE(host_handle_request, arginfo_host_handle_request)
	ZEND_FE(host_request_number, arginfo_host_request_number)
	ZEND_FE_END
};

/* The SAPI's startup: php_embed_init() sets its own ini (a malloc'd
 * string, freed by php_embed_shutdown()) and functions just before it
 * calls this; the test's ini lines are added to its ini and our functions
 * replace its own (dl()), before the engine reads them. */
static int host_startup(sapi_module_struct *sf)
{
	size_t had = sf->ini_entries ? strlen(sf->ini_entries) : 0, more = strlen(host_ini);
	char *ini = realloc(sf->ini_entries, had + more + 1);
	if (!ini) {
		return FAILURE;
	}
	memcpy(ini + had, host_ini, more + 1);
	sf->ini_entries = ini;
	sf->additional_functions = host_functions;
	return php_module_startup(sf, NULL) == SUCCESS ? SUCCESS : FAILURE;
}

static void usage(void)
{
	fprintf(stderr, "usage: sapi-host [--name NAME] [--ini LINE]... "
		"[--requests N | --classic N] SCRIPT\n");
	exit(2);
}

static void add_ini(const char *line)
{
	size_t had = strlen(host_ini), more = strlen(line);
	host_ini = realloc(host_ini, had + more + 2);
	if (!host_ini) {
		exit(2);
	}
	memcpy(host_ini + had, line, more);
	memcpy(host_ini + had + more, "\n", 2);
}

int main(int argc, char **argv)
{
	char *name = "frankenphp";
	const char *script = NULL;
	long classic = 0;

	host_ini = calloc(1, 1);
	if (!host_ini) {
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--name") && i + 1 < argc) {
			name = argv[++i];
		} else if (!strcmp(argv[i], "--ini") && i + 1 < argc) {
			add_ini(argv[++i]);
		} else if (!strcmp(argv[i], "--requests") && i + 1 < argc) {
			requests = strtol(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--classic") && i + 1 < argc) {
			classic = strtol(argv[++i], NULL, 10);
		} else if (argv[i][0] != '-' && !script) {
			script = argv[i];
		} else {
			usage();
		}
	}
	if (!script || requests < 0 || classic < 0) {
		usage();
	}

	php_embed_module.name = name;
	php_embed_module.startup = host_startup;
	php_embed_module.php_ini_ignore = 1; /* no php.ini, no conf.d (php -n) */
	php_embed_module.phpinfo_as_text = 1;
	if (php_embed_init(argc, argv) == FAILURE) {
		fprintf(stderr, "sapi-host: PHP did not start\n");
		return 2;
	}

	int status = 0;
	long runs = classic > 0 ? classic : 1;
	zend_first_try {
		for (long run = 0; run < runs; run++) {
			if (run > 0) {
				php_request_shutdown(NULL);
				request_number = run;
				if (php_request_startup() == FAILURE) {
					fprintf(stderr, "sapi-host: request %ld did not start\n", run);
					status = 2;
					break;
				}
				SG(headers_sent) = 1;
				SG(request_info).no_headers = 1;
			}
			zend_file_handle file;
			zend_stream_init_filename(&file, script);
			file.primary_script = 1;
			php_execute_script(&file);
			zend_destroy_file_handle(&file);
			if (EG(exit_status) != 0) {
				status = EG(exit_status);
			}
		}
	} zend_catch {
		status = EG(exit_status) != 0 ? EG(exit_status) : 255;
	} zend_end_try();

	php_embed_shutdown();
	free(host_ini);
	return status;
}
