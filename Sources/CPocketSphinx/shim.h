// System-library module for pocketsphinx; the Debian -dev package provides the header.
#pragma once
#include <stdio.h>
#include <pocketsphinx.h>
#include <sphinxbase/err.h>
#include <sphinxbase/cmd_ln.h>
#include <sphinxbase/fsg_model.h>
#include <sphinxbase/jsgf.h>

/// cmd_ln_init() is variadic and cannot be called from Swift; this builds the
/// same configuration from an argv-style array ("-hmm", "/path", ...).
static inline cmd_ln_t *parley_ps_config(int argc, char **argv) {
    return cmd_ln_parse_r(NULL, ps_args(), argc, argv, 0);
}

/// Silences the library's own logging (it otherwise writes to stderr).
static inline void parley_ps_quiet(void) {
    err_set_logfp(NULL);
}
