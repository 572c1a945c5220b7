// SPDX-License-Identifier: MIT
/*
 * cmd_demo.c - gdirect demo: run the guide's walk-through
 *
 * Inside the emulated machine the walk-through is the demo-flow program,
 * on PATH there; this command runs it.  Elsewhere it says to run `make demo`
 * in a source tree: an installed command neither knows where the tree it
 * was built from went nor runs scripts out of it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"

int gdcli_cmd_demo(int argc, char **argv, struct gdcli_roots *r)
{
	static char *const flow[] = { "demo-flow", NULL };

	(void)r;
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: gdirect demo\n"
		       "Runs the guide's walk-through, demo-flow, in gdirect's emulated\n"
		       "machine; elsewhere run 'make demo' in gdirect's source tree.\n");
		return 0;
	}
	/* In the guest, demo-flow is on PATH (/tests). */
	execvp(flow[0], flow);
	if (errno != ENOENT) {
		fprintf(stderr, "gdirect demo: %s: %s\n", flow[0], strerror(errno));
		return 1;
	}
	fprintf(stderr, "gdirect demo: demo-flow is not here (it runs inside gdirect's "
		"emulated machine); run 'make demo' in gdirect's source tree\n");
	return 1;
}
