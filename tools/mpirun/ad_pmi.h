#ifndef DCFA_AD_PMI_H
#define DCFA_AD_PMI_H

#include "ad.h"

/* ad_pmi.c: reads once from the rank's channel and handles every complete
 * message. Returns 1 if data was read, 0 if none was waiting or it closed. */
int ad_pmi_input(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p);
/* the ranks' PMI channels are read through ad_pmi_input (ad_reactor_handle) */
void ad_pmi_attach(void);

#endif
