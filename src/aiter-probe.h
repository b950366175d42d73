/* aiter-probe: read capability manifests from C and C++. */
#ifndef AITER_PROBE_H
#define AITER_PROBE_H

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version, "MAJOR.MINOR.PATCH". */
const char *aiter_probe_version(void);

#ifdef __cplusplus
}
#endif

#endif
