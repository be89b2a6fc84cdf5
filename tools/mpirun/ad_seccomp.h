#ifndef DCFA_AD_SECCOMP_H
#define DCFA_AD_SECCOMP_H

#include <stddef.h>

/* ad_seccomp.c: 1 when this architecture has the filter; in the child before exec, install it
 * (after PR_SET_NO_NEW_PRIVS): 0, or -errno with err */
int ad_seccomp_supported(void);
int ad_seccomp_install(char *err, size_t cap);

#endif
