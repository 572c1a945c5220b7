// SPDX-License-Identifier: MIT
/*
 * cmd_demo.c - gdirect demo: run the guide's walk-through
 *
 * Inside the emulated machine the walk-through is the demo-flow program;
 * on the host it is the source tree's scripts/demo.sh (make demo), which
 * boots that machine.  This command finds whichever is there and runs it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"

#ifndef GDIRECT_SOURCE_DIR
#define GDIRECT_SOURCE_DIR ""
#endif
#ifndef GDIRECT_BUILD_DIR
#define GDIRECT_BUILD_DIR ""
#endif

int gd_cmd_demo(int argc, char **argv, struct gd_roots *r)
{
	char script[GD_PATH_MAX];
	static char *const flow[] = { "demo-flow", NULL };

	(void)r;
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: gdirect demo\n"
		       "Runs the guide's walk-through: demo-flow in the emulated machine,\n"
		       "else the source tree's scripts/demo.sh (make demo).\n");
		return 0;
	}
	/* In the guest, demo-flow is on PATH (/tests). */
	execvp(flow[0], flow);
	if (GDIRECT_SOURCE_DIR[0] &&
	    !gd_path(script, sizeof(script), "%s/scripts/demo.sh", GDIRECT_SOURCE_DIR) &&
	    !access(script, X_OK)) {
		char *const args[] = { script, GDIRECT_BUILD_DIR, NULL };

		execv(script, args);
		fprintf(stderr, "gdirect demo: %s: %s\n", script, strerror(errno));
		return 1;
	}
	fprintf(stderr, "gdirect demo: the walk-through is not installed here; run 'make demo' "
		"in gdirect's source tree\n");
	return 1;
}
