// common.cu - TAP output and host helpers of the GPU tests
#include "gpu_test.h"

#include <chrono>
#include <cstdarg>

int passed, failed, skipped;
static int test_no;

void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", ok ? "ok" : "not ok", ++test_no);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		passed++;
	else
		failed++;
}

void skip(const char *what, const char *why)
{
	printf("ok %d - %s # SKIP %s\n", ++test_no, what, why);
	fflush(stdout);
	skipped++;
}

void summary(void)
{
	printf("1..%d\n", test_no);
	if (skipped)
		printf("# %d skipped (not counted as passed)\n", skipped);
	printf("%d passed, %d failed\n", passed, failed);
	fflush(stdout);
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
