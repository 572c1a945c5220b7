// SPDX-License-Identifier: MIT
// common.cu - TAP output and host helpers of the GPU tests
#include "gpu_test.h"

#include <chrono>
#include <cstdarg>

void check(bool ok, const char *fmt, ...)
{
	char what[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	tap_ok(ok, "%s", what);
}

void skip(const char *what, const char *why)
{
	tap_skip(what, why);
}

int summary(void)
{
	int rc = tap_done();

	if (tap_state.skips)
		printf("# %d skipped (not counted as passed)\n", tap_state.skips);
	printf("%d passed, %d failed\n",
	       tap_state.n - tap_state.failed - tap_state.skips, tap_state.failed);
	fflush(stdout);
	return rc;
}

double now_s(void)
{
	return std::chrono::duration<double>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

void show(const std::string &text)
{
	size_t i = 0;

	while (i < text.size()) {
		size_t nl = text.find('\n', i);
		if (nl == std::string::npos)
			nl = text.size();
		printf("# | %s\n", text.substr(i, nl - i).c_str());
		i = nl + 1;
	}
}

bool run_tool(const std::string &cmd, std::string &out)
{
	char line[512];
	FILE *p = popen((cmd + " 2>&1").c_str(), "r");

	out.clear();
	if (!p)
		return false;
	while (fgets(line, sizeof(line), p))
		out += line;
	return pclose(p) == 0;
}
