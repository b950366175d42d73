/* SPDX-License-Identifier: MIT */
/* AITER's version as the `version` kind reads it, for the manifest too. */
#ifndef AP_KINDS_VERSION_H
#define AP_KINDS_VERSION_H

#include <stddef.h>

#include "engine/reader.h"

/* AITER's version as aiter/_version.py states it, read through r (so that
 * it is one of the manifest's inputs), or NULL. */
char *ap_aiter_version(ap_reader *r);
/* The version aiter/_version.py's text states (setuptools_scm's
 * `__version__ = version = '0.1.20'`), at *line; NULL when none. */
char *ap_version_in(const char *data, size_t len, unsigned *line);

#endif
