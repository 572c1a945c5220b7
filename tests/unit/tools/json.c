// SPDX-License-Identifier: MIT
/* json.c - the JSON writer: nesting, commas, escaping, numbers */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "json.h"

int main(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct gdcli_json j;

	if (!f)
		return 1;
	gdcli_json_init(&j, f);
	gdcli_json_obj(&j, NULL);
	gdcli_json_str(&j, "s", "a\"b\\c\nd\x01");
	gdcli_json_u64(&j, "u", 18446744073709551615ULL);
	gdcli_json_int(&j, "i", -1);
	gdcli_json_dbl(&j, "d", 1.5);
	gdcli_json_dbl(&j, "nan", NAN);
	gdcli_json_bool(&j, "t", 1);
	gdcli_json_str(&j, "n", NULL);
	gdcli_json_arr(&j, "a");
	gdcli_json_str(&j, NULL, "x");
	gdcli_json_obj(&j, NULL);
	gdcli_json_end(&j, '}');
	gdcli_json_end(&j, ']');
	gdcli_json_arr(&j, "empty");
	gdcli_json_end(&j, ']');
	gdcli_json_end(&j, '}');
	gdcli_json_done(&j);
	fclose(f);
	CHECK_STR(buf,
		  "{\n"
		  "  \"s\": \"a\\\"b\\\\c\\nd\\u0001\",\n"
		  "  \"u\": 18446744073709551615,\n"
		  "  \"i\": -1,\n"
		  "  \"d\": 1.5,\n"
		  "  \"nan\": null,\n"
		  "  \"t\": true,\n"
		  "  \"n\": null,\n"
		  "  \"a\": [\n"
		  "    \"x\",\n"
		  "    {}\n"
		  "  ],\n"
		  "  \"empty\": []\n"
		  "}\n");
	free(buf);

	/* Not UTF-8 (a lone continuation, a truncated sequence, an overlong
	 * '/', a surrogate, past U+10FFFF) becomes U+FFFD; valid UTF-8 passes;
	 * ESC, BEL and DEL are escaped. */
	f = open_memstream(&buf, &len);
	if (!f)
		return 1;
	gdcli_json_init(&j, f);
	gdcli_json_str(&j, NULL, "\x80|\xc3|\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|"
		    "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|\x1b]0;x\x07\x7f|\xff");
	gdcli_json_done(&j);
	fclose(f);
	CHECK_STR(buf, "\"\\ufffd|\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|"
		  "\\ufffd\\ufffd\\ufffd\\ufffd|\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|"
		  "\\u001b]0;x\\u0007\\u007f|\\ufffd\"\n");
	free(buf);
	return tap_done();
}
