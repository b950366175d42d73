#include "config.h"

#include "aiter-probe.h"

const char *aiter_probe_version(void)
{
	return PACKAGE_VERSION;
}
