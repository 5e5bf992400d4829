/*
 * sapi-host: a stand-in for FrankenPHP on PHP's embed SAPI, to test the
 * extension's per-request SAPI hook (src/sapi_hook.rs) with a real engine.
 * FrankenPHP itself (Go, Caddy) is not installed here; what matters is only
 * how it drives the engine, which this host does the same way:
 *
 * - the SAPI is named as the test asks (--name frankenphp, or another name
 *   for the control run), and PHP starts once, loading the extension from
 *   the php.ini the test wrote (--ini-file: extension=..., never dl(); no
 *   other php.ini, no conf.d);
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
 * usage: sapi-host --ini-file PHP.INI [--name NAME]
 *                  [--requests N | --classic N] SCRIPT
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

/* The SAPI's startup: php_embed_init() sets its own functions (dl()) just
 * before it calls this; ours replace them here, before the engine
 * registers them. */
static int host_startup(sapi_module_struct *sf)
{
	sf->additional_functions = host_functions;
	return php_module_startup(sf, NULL) == SUCCESS ? SUCCESS : FAILURE;
}

static void usage(void)
{
	fprintf(stderr, "usage: sapi-host --ini-file PHP.INI [--name NAME] "
		"[--requests N | --classic N] SCRIPT\n");
	exit(2);
}

int main(int argc, char **argv)
{
	char *name = "frankenphp";
	char *ini_file = NULL;
	const char *script = NULL;
	long classic = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--name") && i + 1 < argc) {
			name = argv[++i];
		} else if (!strcmp(argv[i], "--ini-file") && i + 1 < argc) {
			ini_file = argv[++i];
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
	if (!script || !ini_file || requests < 0 || classic < 0) {
		usage();
	}

	php_embed_module.name = name;
	php_embed_module.startup = host_startup;
	/* This php.ini only (as php -c FILE), no conf.d. */
	php_embed_module.php_ini_path_override = ini_file;
	php_embed_module.php_ini_ignore = 0;
	setenv("PHP_INI_SCAN_DIR", "", 1);
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
	return status;
}
