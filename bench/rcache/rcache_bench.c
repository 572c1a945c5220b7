/* SPDX-License-Identifier: MIT */
/*
 * rcache_bench - libgdirect's registration cache against UCX's ucs_rcache,
 * side by side in one run: same traces, same emulated pin/unpin costs,
 * both warmed, medians over repeats.  See docs/performance.md.
 *
 *   rcache_bench [--repeats N] [--quick] [--only 1,2,3,4] [--md FILE]
 *                [--data DIR]
 *
 * Scenarios (--only, default 1234): 1 hits (with, where libgdirect has
 * its verbs API, the NIC registration's hit over the fake libibverbs
 * beside the BAR hit), 2 hits during a pin, 3 a reuse trace at gdrcopy's
 * costs, 4 twice the BAR budget; 5 registrations alone, to profile
 * (stdout only).
 *
 * Needs GDIRECT_LIBCUDA=<build>/tests/fakes/libfakecuda.so (bench/rcache/run.sh
 * sets it): libgdirect's miss path classifies the pointer through "CUDA".
 * Progress goes to stderr, tables to stdout, the report to FILE, and the
 * figures the plots are drawn from (bench/plot.sh) into DIR, which must
 * exist: hits-{random,locality,reuse}-{1,2}.dat and contended-{gdirect,ucx}.dat.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fake_cuda.h"
#include "harness.h"

struct summary summary;

/*
 * Whether 3x ucs_rcache is within reach of the lookup path's loads at
 * size i, one thread: UCX's time / 3 against the serial floor (s_hits.c).
 */
static void floor_verdict(FILE *f, int i)
{
	const struct summary *s = &summary;
	double need = s->random1[i][1] / 3;

	fprintf(f, "; 3x needs at most %.1f ns, the serial floor is %.1f ns "
		"(%s), the hit took %.2fx the floor", need, s->floor[i],
		need >= s->floor[i] ? "within reach" :
		"below it: reachable only by overlapping consecutive hits' "
		"loads, or with fewer lines to load",
		s->random1[i][0] / s->floor[i]);
}

/* Each target, met or missed and by how much, from this run's figures. */
static void targets(FILE *f)
{
	const struct summary *s = &summary;

	fprintf(f, "\n### Targets, from this run\n\n");
	if (s->hits) {
		for (int i = 0; i < 3; i++)
			for (int t = 0; t < 2; t++) {
				double r = t ? s->hit_ratio2[i] : s->hit_ratio[i];
				double rc = t ? s->hit_ratio2_cpu[i] :
						s->hit_ratio_cpu[i];

				fprintf(f, "- Random hits at least 3x faster than "
					"ucs_rcache at %zu regions, %d thread%s "
					"(gdirect/UCX time at most 0.33): %.2f, "
					"%s (thread CPU time: %.2f, %s)",
					s->nreg[i], t + 1, t ? "s" : "", r,
					r <= 1.0 / 3 ? "met" : "missed", rc,
					rc <= 1.0 / 3 ? "met" : "missed");
				if (!t)
					floor_verdict(f, i);
				fprintf(f, ".\n");
			}
		fprintf(f, "- A thread's own reuse answered in at most 5 ns "
			"(get alone, reuse trace, 1 thread): gdirect %.2f / %.2f "
			"/ %.2f ns at %zu / %zu / %zu regions (%s; UCX %.1f / "
			"%.1f / %.1f ns).\n", s->reuse_get[0][0],
			s->reuse_get[1][0], s->reuse_get[2][0], s->nreg[0],
			s->nreg[1], s->nreg[2],
			s->reuse_get[0][0] <= 5 && s->reuse_get[1][0] <= 5 &&
			s->reuse_get[2][0] <= 5 ? "met" : "missed",
			s->reuse_get[0][1], s->reuse_get[1][1],
			s->reuse_get[2][1]);
		fprintf(f, "- Near-linear scaling from 1 to 2 threads (2.00 = "
			"linear): gdirect %.2f / %.2f / %.2f at %zu / %zu / %zu "
			"regions by wall clock, %.2f / %.2f / %.2f from thread "
			"CPU time (UCX: %.2f / %.2f / %.2f and %.2f / %.2f / "
			"%.2f).\n", s->scaling[0][0], s->scaling[1][0],
			s->scaling[2][0], s->nreg[0], s->nreg[1], s->nreg[2],
			s->scaling_cpu[0][0], s->scaling_cpu[1][0],
			s->scaling_cpu[2][0], s->scaling[0][1], s->scaling[1][1],
			s->scaling[2][1], s->scaling_cpu[0][1],
			s->scaling_cpu[1][1], s->scaling_cpu[2][1]);
	}
	if (s->hits && s->nic) {
		static const char *const tn[3] = { "random", "locality", "reuse" };

		for (int tr = 0; tr < 3; tr++) {
			bool met = true;

			for (int i = 0; i < 3; i++)
				met &= s->nic_ratio[tr][i] <= 1.2;
			fprintf(f, "- The NIC-registration hit at most 1.2x the "
				"BAR hit, %s trace, 1 thread (NIC/BAR): %.2f / "
				"%.2f / %.2f at %zu / %zu / %zu regions, %s.\n",
				tn[tr], s->nic_ratio[tr][0], s->nic_ratio[tr][1],
				s->nic_ratio[tr][2], s->nreg[0], s->nreg[1],
				s->nreg[2], met ? "met" : "missed");
		}
	}
	if (s->contended)
		fprintf(f, "- Hits during another thread's 1.3 ms registration "
			"within 2x of uncontended: gdirect's median hit is %.2fx, "
			"its mean %.2fx its uncontended value (%s).\n",
			s->in_pin_median, s->in_pin_mean,
			s->in_pin_median <= 2 && s->in_pin_mean <= 2 ? "met" :
			"missed");
	if (s->bar)
		fprintf(f, "- No failed operation at twice the BAR budget: "
			"gdirect %.0f failed (%s), UCX %.0f.\n", s->bar_fails[0],
			s->bar_fails[0] == 0 ? "met" : "missed", s->bar_fails[1]);
}

int main(int argc, char **argv)
{
	struct opts o = { .repeats = 7 };
	const char *only = "1234";

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--repeats") && i + 1 < argc) {
			char *end;
			long v;

			errno = 0;
			v = strtol(argv[++i], &end, 10);
			/* "7x" is a typo, not 7. */
			if (errno || end == argv[i] || *end || v < 1 || v > 64) {
				fprintf(stderr, "--repeats %s: a number from 1 "
					"to 64\n", argv[i]);
				return 2;
			}
			o.repeats = (int)v;
		} else if (!strcmp(argv[i], "--quick")) {
			o.quick = true;
		} else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
			only = argv[++i];
			if (only[strspn(only, "12345,")] || !strpbrk(only, "12345")) {
				fprintf(stderr, "--only %s: scenario numbers, "
					"1 to 5 (e.g. 13 or 1,3)\n", only);
				return 2;
			}
		} else if (!strcmp(argv[i], "--data") && i + 1 < argc) {
			o.data = argv[++i];
		} else if (!strcmp(argv[i], "--md") && i + 1 < argc) {
			o.md = fopen(argv[++i], "w");
			if (!o.md) {
				perror(argv[i]);
				return 1;
			}
		} else {
			fprintf(stderr, "usage: %s [--repeats N] [--quick] "
				"[--only 12345] [--md FILE] [--data DIR]\n", argv[0]);
			return 2;
		}
	}
	if (o.data) {
		struct stat st;

		/* Said now, not after minutes of measuring. */
		if (stat(o.data, &st) || !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "--data %s: not a directory\n", o.data);
			return 2;
		}
	}
	if (!getenv("GDIRECT_LIBCUDA")) {
		fprintf(stderr, "set GDIRECT_LIBCUDA to libfakecuda.so "
			"(bench/rcache/run.sh does)\n");
		return 2;
	}
	/* Address space only, never touched (the benchmark never copies),
	 * enough for every scenario's buffers and their gaps. */
	if (fake_cuda_set_arena(64ULL << 30, true)) {
		fprintf(stderr, "the fake CUDA driver's arena exists already\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strchr(only, '1'))
		scenario_hits(&o);
	if (strchr(only, '2'))
		scenario_contended(&o);
	if (strchr(only, '3'))
		scenario_reuse(&o);
	if (strchr(only, '4'))
		scenario_bar(&o);
	if (strchr(only, '5'))
		scenario_registration(&o);
	if (o.md) {
		targets(o.md);
		fclose(o.md);
	}
	return 0;
}
