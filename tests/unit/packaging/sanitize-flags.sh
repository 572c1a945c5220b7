#!/bin/sh
# SPDX-License-Identifier: MIT
# sanitize-flags.sh BUILD - the -fsanitize= flag of meson build BUILD, or
# nothing: a program linked against a sanitizer build's library needs the
# same runtime, linked first.  meson reports b_sanitize as a string up to
# 1.7 and as a list from 1.8 on; both are read here.
set -eu
meson introspect --buildoptions "${1:?usage: sanitize-flags.sh BUILD}" | python3 -c '
import json, sys
v = next(o["value"] for o in json.load(sys.stdin) if o["name"] == "b_sanitize")
if isinstance(v, str):
    v = [] if v == "none" else v.split(",")
v = [x for x in v if x != "none"]
print("-fsanitize=" + ",".join(v) if v else "")'
