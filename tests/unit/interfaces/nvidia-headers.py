#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""nvidia-headers.py ROOT - our include/nvidia/ against NVIDIA's headers.

Compares declarations, not text: for each header of include/nvidia/ (and
each nv-p2p page-table flavour) against each real header it stands for,
  - every macro we define: an object-like one by its value and C type
    (evaluated by a probe program), an empty one by being empty, one that
    names another identifier (cuMemAlloc -> cuMemAlloc_v2) by that name, a
    function-like one by its parameters and tokens;
  - every enum constant: its value and its enum;
  - every typedef: the type it names, typedefs resolved;
  - every struct, union and named enum: size and alignment, every member's
    offset, size and type (nested anonymous members by path);
  - every function: return and parameter types, typedefs resolved.
Facts come from clang (the AST as JSON for declarations, a compiled probe
for values and layouts), both sides built with the same shim for the
kernel's types (u64, struct pci_dev, ...).

Real headers: NVIDIA's released nv-p2p.h in the peers directory
($GDIRECT_PEERS_DIR, which must then exist, else ROOT/../shared/peers,
nvidia-nv-p2p/nv-p2p-<release>.h) and the CUDA toolkit's headers
(scripts/find-cuda.sh root).  A missing reference is a SKIP that says so.

Our cuda*.h and nvml.h are subsets: only what we declare is checked.  Our
nv-p2p.h is the whole API: a declaration of the real header that we lack
must be listed as an omission in nvidia-headers.known, as must any other
accepted difference (each with its reason); a listed difference that no
longer occurs fails too.  A self-check plants differences in a copy of our
nv-p2p.h and expects each to be reported.

One TAP line per header x reference; differences as '#' diagnostics.
"""

import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
KNOWN = os.path.join(HERE, "nvidia-headers.known")

# The kernel types both sides of nv-p2p.h need, in user space.  Our headers
# include <linux/types.h> (and the Tegra one more); NVIDIA's rely on the
# includer, so the shim is forced in (-include) on both sides.
SHIM = """\
#ifndef GD_SHIM_H
#define GD_SHIM_H
#include <stddef.h>
#include <stdint.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;
typedef uint64_t dma_addr_t;
struct pci_dev;
struct device;
struct page;
struct mm_struct;
struct sg_table;
#endif
"""

CLANG = os.environ.get("CLANG") or shutil.which("clang") or "/usr/bin/clang"


class Fail(Exception):
    pass


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, **kw)
    return p.returncode, p.stdout, p.stderr


# --- one side: a header compiled with flags -> its declarations as data ---

class Side:
    def __init__(self, label, header, flags, mine, work):
        self.label = label          # for messages
        self.header = header        # the file to #include
        self.flags = flags          # -I, -D
        self.mine = mine            # predicate: is this file one of "ours"
        self.work = work
        self.macros = {}            # name -> (params or None, body tokens)
        self.macro_file = {}
        self.typedefs = {}          # name -> spelled type
        self.records = {}           # "struct x" / typedef name -> info
        self.enums = {}             # constant -> enum name
        self.named_enums = set()    # "enum x" / typedef name
        self.functions = {}         # name -> spelled type
        self.decl_file = {}         # (kind, name) -> file
        self.values = {}            # probe results: key -> string
        self.expansions = {}        # macro -> tokens it finally expands to

    def cc(self):
        return [CLANG, "-x", "c", "-std=gnu11", "-w",
                "-include", os.path.join(self.work, "shim", "gd-shim.h"),
                "-I", os.path.join(self.work, "shim")] + self.flags

    def load(self):
        self._macros()
        self._ast()

    def _macros(self):
        src = '#include "%s"\n' % self.header
        rc, out, err = run(self.cc() + ["-E", "-dD", "-"], input=src)
        if rc:
            raise Fail("%s: clang -E failed: %s" % (self.label, err.strip()[:2000]))
        cur = None
        for line in out.splitlines():
            m = re.match(r'# \d+ "([^"]*)"', line)
            if m:
                cur = m.group(1)
                continue
            m = re.match(r"#define (\w+)(\(([^)]*)\))?(?:\s+(.*))?$", line)
            if not m or cur in ("<built-in>", "<command line>"):
                continue
            name = m.group(1)
            params = None
            if m.group(2) is not None:
                params = [p.strip() for p in m.group(3).split(",") if p.strip()]
            self.macros[name] = (params, tokens(m.group(4) or ""))
            self.macro_file[name] = cur

    def _ast(self):
        src = '#include "%s"\n' % self.header
        rc, out, err = run(self.cc() + ["-fsyntax-only", "-Xclang",
                                        "-ast-dump=json", "-"], input=src)
        if rc:
            raise Fail("%s: clang -ast-dump failed: %s" % (self.label, err.strip()[:2000]))
        ast = json.loads(out)
        state = {"file": None}
        for node in ast.get("inner", []):
            f = node_file(node, state)
            self._decl(node, f, toplevel=True)

    def _decl(self, node, f, toplevel=False):
        kind = node.get("kind")
        name = node.get("name")
        if kind == "TypedefDecl" and toplevel and not node.get("isImplicit"):
            self.typedefs[name] = node["type"]["qualType"]
            self.decl_file[("typedef", name)] = f
            # typedef struct { ... } name: the record is known by the typedef
            inner = node["type"]
            m = re.match(r"(struct|union|enum) \(unnamed", inner.get("qualType", ""))
            if m and self._pending_anon is not None:
                anon_kind, anon = self._pending_anon
                if anon_kind in ("struct", "union"):
                    self.records[name] = anon
                    self.decl_file[("record", name)] = f
                else:
                    for c in anon:
                        self.enums[c] = name
                    self.named_enums.add(name)
                    self.decl_file[("enum", name)] = f
            self._pending_anon = None
            return
        self._pending_anon = None
        if kind == "FunctionDecl":
            self.functions[name] = node["type"]["qualType"]
            self.decl_file.setdefault(("function", name), f)
        elif kind == "RecordDecl":
            tag = node.get("tagUsed", "struct")
            if not node.get("completeDefinition"):
                return
            fields = self._fields(node)
            if name:
                key = "%s %s" % (tag, name)
                self.records[key] = fields
                self.decl_file[("record", key)] = f
            else:
                self._pending_anon = (tag, fields)
            # named records nested in this one are file-scope in C
            for c in node.get("inner", []):
                if c.get("kind") == "RecordDecl" and c.get("name"):
                    self._decl(c, f)
        elif kind == "EnumDecl":
            consts = [c["name"] for c in node.get("inner", [])
                      if c.get("kind") == "EnumConstantDecl"]
            if name:
                key = "enum " + name
                for c in consts:
                    self.enums[c] = key
                self.named_enums.add(key)
                self.decl_file[("enum", key)] = f
            else:
                for c in consts:
                    self.enums[c] = "(anonymous enum)"
                self._pending_anon = ("enum", consts)
            for c in consts:
                self.decl_file[("enumconst", c)] = f

    _pending_anon = None

    def _fields(self, rec, prefix=""):
        """[(path, spelled type, bitfield)] of a record, anonymous members
        flattened by path."""
        out = []
        anon = None
        for c in rec.get("inner", []):
            k = c.get("kind")
            if k == "RecordDecl":
                anon = c if not c.get("name") else None
                continue
            if k != "FieldDecl":
                continue
            qt = c["type"]["qualType"]
            n = c.get("name")
            if not n:                       # C11 anonymous member
                if anon is not None:
                    out += self._fields(anon, prefix)
                continue
            path = prefix + n
            out.append((path, qt, bool(c.get("isBitfield"))))
            if "(unnamed" in qt and anon is not None:
                sub = path + ("[0]" if re.search(r"\[\d+\]$", qt) else "")
                out += self._fields(anon, sub + ".")
            anon = None
        return out

    def mine_names(self):
        """The declarations this side makes in its own files."""
        sel = {}
        for n, f in self.macro_file.items():
            if self.mine(f):
                sel[("macro", n)] = True
        for (kind, n), f in self.decl_file.items():
            if f and self.mine(f):
                sel[(kind, n)] = True
        return sel

    def expand(self, names):
        """What each object-like macro finally expands to, as tokens."""
        src = ['#include "%s"' % self.header, "gd_probe_start"]
        src += ["gd_probe_x_%d %s" % (i, n) for i, n in enumerate(names)]
        rc, out, err = run(self.cc() + ["-E", "-P", "-"], input="\n".join(src) + "\n")
        if rc:
            raise Fail("%s: clang -E failed: %s" % (self.label, err.strip()[:2000]))
        text = out.split("gd_probe_start", 1)[1]
        for m in re.finditer(r"gd_probe_x_(\d+)(.*)", text):
            self.expansions[names[int(m.group(1))]] = tokens(m.group(2))

    # -- values and layouts: a probe program --
    def probe(self, macros, consts, records, enums):
        lines = []
        emit = []   # (line index, key, C statement)
        for n in macros:
            emit.append(("macro:" + n,
                         'P_VAL("macro:%s", (%s));' % (n, n)))
        for n in consts:
            emit.append(("enumconst:" + n,
                         'printf("enumconst:%s\\t%%lld\\n", (long long)(%s));' % (n, n)))
        for r in enums:
            emit.append(("sizeof:" + r,
                         'printf("sizeof:%s\\t%%zu %%zu\\n", sizeof(%s), _Alignof(%s));' % (r, r, r)))
        for r in records:
            emit.append(("sizeof:" + r,
                         'printf("sizeof:%s\\t%%zu %%zu\\n", sizeof(%s), _Alignof(%s));' % (r, r, r)))
            for path, _qt, bit in self.records[r]:
                if bit:
                    continue
                emit.append(("field:%s.%s" % (r, path),
                             'printf("field:%s.%s\\t%%zu %%zu\\n", offsetof(%s, %s), sizeof(((%s *)0)->%s));'
                             % (r, path, r, path, r, path)))
        head = ['#include "%s"' % self.header, "#include <stdio.h>",
                "#include <stddef.h>",
                "#define P_TYPE(x) _Generic((x), int: \"int\", unsigned int: \"unsigned int\", "
                "long: \"long\", unsigned long: \"unsigned long\", long long: \"long long\", "
                "unsigned long long: \"unsigned long long\", char *: \"char *\", "
                "const char *: \"const char *\", double: \"double\", float: \"float\", "
                "default: \"other\")",
                "#define P_VAL(k, x) printf(\"%s\\t%s %llu\\n\", k, P_TYPE(x), "
                "(unsigned long long)(x))",
                "int main(void) {"]
        bad = set()
        for attempt in range(3):
            body = [s for k, s in emit if k not in bad]
            keys = [k for k, s in emit if k not in bad]
            src = "\n".join(head + body + ["return 0; }"]) + "\n"
            path = os.path.join(self.work, "probe.c")
            with open(path, "w") as fh:
                fh.write(src)
            exe = os.path.join(self.work, "probe")
            rc, out, err = run(self.cc() + ["-o", exe, path])
            if rc == 0:
                break
            errl = set(int(m.group(1)) for m in
                       re.finditer(r"probe\.c:(\d+):\d+: error", err))
            newbad = set(keys[i - len(head) - 1] for i in errl
                         if 0 <= i - len(head) - 1 < len(keys))
            if not newbad:
                raise Fail("%s: probe does not compile: %s" % (self.label, err.strip()[:2000]))
            bad |= newbad
        else:
            raise Fail("%s: probe does not compile: %s" % (self.label, err.strip()[:2000]))
        rc, out, err = run([exe])
        if rc:
            raise Fail("%s: probe exited %d" % (self.label, rc))
        for line in out.splitlines():
            k, v = line.split("\t", 1)
            self.values[k] = v
        for k in bad:
            self.values[k] = None     # not a C expression here


def node_file(node, state):
    """The file of a top-level node: clang's JSON names a file only where
    it changes, so the last one named (in print order) is carried along."""
    def walk(o):
        if isinstance(o, dict):
            if "file" in o and isinstance(o["file"], str):
                state["file"] = o["file"]
            for k, v in o.items():
                if k in ("loc", "range", "spellingLoc", "expansionLoc", "begin", "end"):
                    walk(v)
    loc = node.get("loc", {})
    # the expansion location is where the declaration is written
    walk(loc.get("spellingLoc", {}))
    walk(loc.get("expansionLoc", {}))
    walk({k: v for k, v in loc.items() if k not in ("spellingLoc", "expansionLoc")})
    f = state["file"]
    walk(node.get("range", {}))
    # nested nodes name files too; follow them so the next sibling is right
    def deep(o):
        if isinstance(o, dict):
            for k, v in o.items():
                if k in ("loc", "range"):
                    walk(v)
                elif k == "inner":
                    for c in v:
                        deep(c)
    for c in node.get("inner", []):
        deep(c)
    return f


def tokens(text):
    text = re.sub(r"/\*.*?\*/", " ", text)
    return re.findall(r"0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*|\w+|\S", text)


def canon(side, qt, depth=0):
    """A spelled type with every typedef replaced by what it names."""
    qt = re.sub(r"\((unnamed|anonymous) (struct|union|enum) at [^)]*\)",
                r"(\1 \2)", qt)
    if depth > 20:
        return qt
    out = []
    toks = re.findall(r"\w+|\.\.\.|\S", qt)
    prev = None
    for t in toks:
        if (t in side.typedefs and prev not in ("struct", "union", "enum")):
            out.append(canon(side, side.typedefs[t], depth + 1))
        else:
            out.append(t)
        prev = t
    s = " ".join(out)
    return s


# --- comparing two sides ---

def compare(ours, real, require_all=False, real_mine=None):
    """Differences between ours and real as {key: text}; counts of what
    was compared."""
    diffs = {}
    counts = {"macro": 0, "enumconst": 0, "typedef": 0, "record": 0,
              "field": 0, "function": 0}
    sel = ours.mine_names()
    guard = include_guards(ours)

    our_macros = sorted(n for k, n in sel if k == "macro" and n not in guard)
    our_consts = sorted(n for k, n in sel if k == "enumconst")
    our_recs = sorted(n for k, n in sel if k == "record")
    our_enums = sorted(n for k, n in sel if k == "enum")
    our_tds = sorted(n for k, n in sel if k == "typedef")
    our_funcs = sorted(n for k, n in sel if k == "function")

    objlike = [n for n in our_macros if ours.macros[n][0] is None and ours.macros[n][1]]
    ours.expand(objlike)
    real.expand([n for n in objlike if n in real.macros])

    def evaluable(side, n):
        params, body = side.macros[n]
        if params is not None or not body:
            return False
        body = side.expansions.get(n, body)
        if len(body) == 1 and re.match(r"[A-Za-z_]\w*$", body[0]) and (
                body[0] in side.functions or body[0] in side.typedefs):
            return False
        return True

    ev_o = [n for n in our_macros if evaluable(ours, n)]
    ev_r = [n for n in ev_o if n in real.macros and evaluable(real, n)]
    # a macro of ours that the real header has as an enum constant
    as_const = [n for n in our_macros if n not in real.macros and n in real.enums]
    rec_r = [r for r in our_recs if r in real.records]
    enum_r = [e for e in our_enums if e in real.named_enums]
    ours.probe(ev_o, our_consts, our_recs, our_enums)
    real.probe(ev_r, [c for c in our_consts if c in real.enums] + as_const,
               rec_r, enum_r)

    for n in our_macros:
        counts["macro"] += 1
        k = "macro:" + n
        if n in as_const:
            # same value, another kind: #ifdef and the type tell them apart
            vo = (ours.values.get(k) or "").split(" ")[-1]
            vr = real.values.get("enumconst:" + n)
            if vo != vr:
                diffs[k] = "macro %s = %s, real enum constant %s" % (n, vo, vr)
            diffs["kind:" + n] = "%s: a macro here (%s), an enum constant of %s there" % (
                n, ours.values.get(k), real.enums[n])
            continue
        if n not in real.macros:
            diffs[k] = "macro %s: not in the real header" % n
            continue
        po, bo = ours.macros[n]
        pr, br = real.macros[n]
        if (po is None) != (pr is None):
            diffs[k] = "macro %s: function-like in one header only" % n
        elif po is not None:
            if len(po) != len(pr) or rename(bo, po) != rename(br, pr):
                diffs[k] = "macro %s(%s): body %s, real %s(%s): %s" % (
                    n, ",".join(po), " ".join(bo), n, ",".join(pr), " ".join(br))
        elif not bo or not br:
            if bo or br:
                diffs[k] = "macro %s: '%s', real '%s'" % (n, " ".join(bo), " ".join(br))
        elif n in ev_o and n in ev_r and ours.values.get(k) and real.values.get(k):
            if ours.values[k] != real.values[k]:
                diffs[k] = "macro %s: %s, real %s" % (n, ours.values[k], real.values[k])
        else:
            # names another identifier (cuMemAlloc -> cuMemAlloc_v2), or
            # not an expression: what it finally expands to must be the same
            eo, er = ours.expansions.get(n, bo), real.expansions.get(n, br)
            if eo != er:
                diffs[k] = "macro %s: expands to '%s', real '%s'" % (
                    n, " ".join(eo), " ".join(er))

    for c in our_consts:
        counts["enumconst"] += 1
        k = "enumconst:" + c
        if c not in real.enums:
            diffs[k] = "enum constant %s: not in the real header" % c
            continue
        vo, vr = ours.values.get(k), real.values.get(k)
        if vo != vr:
            diffs[k] = "enum constant %s = %s, real %s" % (c, vo, vr)
        eo, er = ours.enums[c], real.enums[c]
        if eo != er and "(anonymous enum)" not in (eo, er):
            diffs[k + ":enum"] = "enum constant %s: in %s, real in %s" % (c, eo, er)

    for e in our_enums:
        k = "sizeof:" + e
        if e not in real.named_enums:
            diffs["enum:" + e] = "%s: not in the real header" % e
        elif ours.values.get(k) != real.values.get(k):
            diffs[k] = "%s: size/align %s, real %s" % (e, ours.values.get(k), real.values.get(k))

    for t in our_tds:
        counts["typedef"] += 1
        k = "typedef:" + t
        if t not in real.typedefs:
            diffs[k] = "typedef %s: not in the real header" % t
            continue
        co, cr = canon(ours, ours.typedefs[t]), canon(real, real.typedefs[t])
        if co != cr:
            diffs[k] = "typedef %s: %s, real %s" % (t, co, cr)

    for r in our_recs:
        counts["record"] += 1
        if r not in real.records:
            diffs["record:" + r] = "%s: not in the real header" % r
            continue
        k = "sizeof:" + r
        if ours.values.get(k) != real.values.get(k):
            diffs[k] = "%s: size/align %s, real %s" % (r, ours.values.get(k), real.values.get(k))
        fo = {p: (qt, b) for p, qt, b in ours.records[r]}
        fr = {p: (qt, b) for p, qt, b in real.records[r]}
        for p in [p for p, _, _ in ours.records[r]]:
            counts["field"] += 1
            k = "field:%s.%s" % (r, p)
            if p not in fr:
                diffs[k] = "%s: member %s not in the real header" % (r, p)
                continue
            if ours.values.get(k) != real.values.get(k):
                diffs[k] = "%s.%s: offset/size %s, real %s" % (
                    r, p, ours.values.get(k), real.values.get(k))
            to, tr = canon(ours, fo[p][0]), canon(real, fr[p][0])
            if to != tr:
                diffs[k + ":type"] = "%s.%s: type %s, real %s" % (r, p, to, tr)
        for p in [p for p, _, _ in real.records[r]]:
            if p not in fo:
                diffs["field:%s.%s" % (r, p)] = "%s: real member %s missing" % (r, p)
        order_o = [p for p, _, _ in ours.records[r] if p in fr]
        order_r = [p for p, _, _ in real.records[r] if p in fo]
        if order_o != order_r:
            diffs["order:" + r] = "%s: members in another order" % r

    for fn in our_funcs:
        counts["function"] += 1
        k = "function:" + fn
        if fn not in real.functions:
            diffs[k] = "function %s: not in the real header" % fn
            continue
        co, cr = canon(ours, ours.functions[fn]), canon(real, real.functions[fn])
        if co != cr:
            diffs[k] = "function %s: %s\n      real %s" % (fn, co, cr)

    if require_all:
        # the real header's own declarations that we lack
        have = set(sel)
        for (kind, n) in sorted(real_mine(real)):
            if kind == "macro" and n in include_guards(real):
                continue
            if (kind, n) not in have:
                diffs["omit:%s:%s" % (kind, n)] = \
                    "%s %s: in the real header, not in ours" % (kind, n)
    return diffs, counts


def rename(body, params):
    m = {p: "$%d" % i for i, p in enumerate(params)}
    return [m.get(t, t) for t in body]


def include_guards(side):
    g = set()
    for n, f in side.macro_file.items():
        if not side.mine(f) or side.macros[n][1]:
            continue
        try:
            with open(f) as fh:
                text = fh.read()
        except OSError:
            continue
        if re.search(r"^\s*#\s*ifndef\s+%s\s*\n\s*#\s*define\s+%s\s*$" % (n, n),
                     text, re.M) and re.search(r"_H_?_?$", n):
            g.add(n)
    return g


# --- known differences ---

def read_known():
    """[(header glob, release glob, key glob, reason)]"""
    out = []
    with open(KNOWN) as fh:
        for i, line in enumerate(fh, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 3)
            if len(parts) < 4:
                raise Fail("%s:%d: want HEADER RELEASE KEY REASON" % (KNOWN, i))
            out.append(tuple(parts) + (i,))
    return out


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, what, good, diags=()):
        self.n += 1
        print("%s %d - %s" % ("ok" if good else "not ok", self.n, what))
        for d in diags:
            for l in str(d).splitlines():
                print("#   " + l)
        if not good:
            self.failed += 1
        sys.stdout.flush()

    def skip(self, what, why):
        self.n += 1
        print("ok %d - %s # SKIP %s" % (self.n, what, why))
        sys.stdout.flush()


def check(tap, known, header, release, make_sides, require_all=False,
          real_mine=None):
    what = "%s = %s" % (header, release)
    try:
        ours, real = make_sides()
        ours.load()
        real.load()
        diffs, counts = compare(ours, real, require_all, real_mine)
    except Fail as e:
        tap.ok(what, False, [str(e)])
        return
    listed, unlisted, used = [], [], set()
    for k, text in sorted(diffs.items()):
        hit = None
        for h, rel, key, reason, line in known:
            if (fnmatch.fnmatchcase(header, h) and fnmatch.fnmatchcase(release, rel)
                    and fnmatch.fnmatchcase(k, key)):
                hit = (reason, line)
                used.add(line)
                break
        if hit:
            listed.append("%s [known: %s]" % (text, hit[0]))
        else:
            unlisted.append("%s  (key %s)" % (text, k))
    stale = ["nvidia-headers.known:%d: %s %s %s: no longer differs (%s)" % (line, h, rel, key, reason)
             for h, rel, key, reason, line in known
             if fnmatch.fnmatchcase(header, h) and fnmatch.fnmatchcase(release, rel)
             and line not in used]
    empty = [c for c in ("macro", "function") if counts[c] == 0]
    diags = ["compared: " + ", ".join("%d %ss" % (v, k) for k, v in counts.items())]
    if empty:
        diags.append("nothing compared of: " + ", ".join(empty) + " (extraction broken?)")
    diags += ["unlisted: " + d for d in unlisted]
    diags += ["stale: " + d for d in stale]
    good = not unlisted and not stale and not empty
    if not good or os.environ.get("VERBOSE"):
        diags += ["listed: " + d for d in listed]
    else:
        diags.append("%d listed differences" % len(listed))
    tap.ok(what, good, diags)


def main():
    if len(sys.argv) != 2:
        print("usage: nvidia-headers.py ROOT", file=sys.stderr)
        return 2
    root = os.path.abspath(sys.argv[1])
    nvinc = os.path.join(root, "include", "nvidia")
    if not os.path.isdir(nvinc):
        print("Bail out! %s: no include/nvidia" % root)
        return 1
    env_peers = os.environ.get("GDIRECT_PEERS_DIR")
    if env_peers is not None:
        if not os.path.isdir(env_peers):
            print("Bail out! GDIRECT_PEERS_DIR=%s is not a directory" % env_peers)
            return 1
        peers = env_peers
    else:
        peers = os.path.join(os.path.dirname(root), "shared", "peers")
    tap = Tap()
    if not os.path.exists(CLANG):
        print("1..0 # SKIP no clang (%s): the headers are compared through clang's AST" % CLANG)
        return 0
    work = tempfile.mkdtemp(prefix="nvidia-headers.")
    try:
        os.makedirs(os.path.join(work, "shim", "linux"))
        with open(os.path.join(work, "shim", "gd-shim.h"), "w") as fh:
            fh.write(SHIM)
        for h in ("types.h", "dma-mapping.h", "mmu_notifier.h", "mutex.h"):
            with open(os.path.join(work, "shim", "linux", h), "w") as fh:
                fh.write('#include "../gd-shim.h"\n')
        try:
            known = read_known()
        except (OSError, Fail) as e:
            print("Bail out! %s" % e)
            return 1
        counter = [0]

        def wdir():
            counter[0] += 1
            d = os.path.join(work, "w%d" % counter[0])
            os.makedirs(d)
            os.symlink(os.path.join(work, "shim"), os.path.join(d, "shim"))
            return d

        def under(d):
            d = os.path.realpath(d)
            return lambda f: bool(f) and os.path.realpath(f).startswith(d + os.sep)

        def is_file(p):
            p = os.path.realpath(p)
            return lambda f: bool(f) and os.path.realpath(f) == p

        # --- the self-check: planted differences must be reported ---
        for name in sorted(PLANTS):
            selfcheck(tap, nvinc, work, wdir, under, is_file, name)

        # --- nv-p2p.h, per page-table flavour, per release ---
        flavours = [("1.2", ["-DNVP2P_EMU_PAGE_TABLE_V1"], ("535.288.01", "575.64.05")),
                    ("2.0", [], ("580.142", "595.45.04"))]
        pdir = os.path.join(peers, "nvidia-nv-p2p")
        for fl, defs, rels in flavours:
            for rel in rels:
                hdr = "nv-p2p.h:%s" % fl
                ref = os.path.join(pdir, "nv-p2p-%s.h" % rel)
                if not os.path.isfile(ref):
                    tap.skip("%s = nv-p2p-%s.h" % (hdr, rel),
                             "no %s (the peers directory: $GDIRECT_PEERS_DIR or "
                             "ROOT/../shared/peers)" % ref)
                    continue
                check(tap, known, hdr, rel,
                      lambda defs=defs, ref=ref: (
                          Side("ours", os.path.join(nvinc, "nv-p2p.h"),
                               defs, under(nvinc), wdir()),
                          Side(os.path.basename(ref), ref, [], is_file(ref), wdir())),
                      require_all=True,
                      real_mine=lambda s: set(s.mine_names()))
        tap.skip("nv-p2p.h:tegra (nv-p2p-tegra.h)",
                 "NVIDIA publishes no Tegra nv-p2p.h next to these releases "
                 "(L4T's <linux/nv-p2p.h> is not in the peers directory)")

        # --- the CUDA toolkit ---
        rc, out, err = run(["sh", os.path.join(root, "scripts", "find-cuda.sh"), "root"])
        cuda = out.strip() if rc == 0 else None
        pairs = [("cuda.h", "cuda.h"), ("cuda_runtime_api.h", "cuda_runtime_api.h"),
                 ("cuda_runtime.h", "cuda_runtime.h"), ("nvml.h", "nvml.h"),
                 ("cudaTypedefs.h", "cudaTypedefs.h")]
        for ourh, realh in pairs:
            what = "%s = toolkit %s" % (ourh, realh)
            if rc == 1:
                tap.skip(what, "no CUDA toolkit: " + err.strip())
                continue
            if rc != 0:
                tap.ok(what, False, ["scripts/find-cuda.sh root: exit %d: %s" % (rc, err.strip())])
                continue
            ref = os.path.join(cuda, "include", realh)
            if not os.path.isfile(ref):
                tap.skip(what, "the toolkit at %s has no include/%s" % (cuda, realh))
                continue
            check(tap, known, ourh, "toolkit",
                  lambda ourh=ourh, ref=ref: (
                      Side("ours", os.path.join(nvinc, ourh), [], under(nvinc), wdir()),
                      Side(ref, ref, ["-I", os.path.dirname(ref)], lambda f: True, wdir())))
    finally:
        if not os.environ.get("KEEP"):
            shutil.rmtree(work, ignore_errors=True)
    print("1..%d" % tap.n)
    return 1 if tap.failed else 0


PLANTS = {
    "nv-p2p.h": [
        ("macro:NVIDIA_P2P_PAGE_TABLE_VERSION",
         "#define NVIDIA_P2P_PAGE_TABLE_VERSION\t0x00020000",
         "#define NVIDIA_P2P_PAGE_TABLE_VERSION\t0x00020001"),
        ("enumconst:NVIDIA_P2P_PAGE_SIZE_128KB",
         "NVIDIA_P2P_PAGE_SIZE_128KB,", "NVIDIA_P2P_PAGE_SIZE_128KB = 5,"),
        ("field:struct nvidia_p2p_page_table.flags",
         "\tuint32_t flags;\n#endif", "\tuint64_t flags;\n#endif"),
        ("function:nvidia_p2p_put_pages_persistent",
         "struct nvidia_p2p_page_table *page_table,\n\t\t\t\t    uint32_t flags);",
         "struct nvidia_p2p_page_table *page_table,\n\t\t\t\t    uint64_t flags);"),
        ("field:union nvidia_p2p_mailbox_addresses.fermi.rcomp_addr",
         "\t\t\tuint64_t rcomp_addr;", "\t\t\tuint32_t rcomp_addr;"),
        ("macro:NVIDIA_P2P_MAJOR_VERSION",
         "(((v) & NVIDIA_P2P_MAJOR_VERSION_MASK) >> 16)",
         "(((v) & NVIDIA_P2P_MAJOR_VERSION_MASK) >> 15)"),
        ("omit:function:nvidia_p2p_planted",
         "int nvidia_p2p_free_dma_mapping(struct nvidia_p2p_dma_mapping *dma_mapping);",
         "int nvidia_p2p_free_dma_mapping(struct nvidia_p2p_dma_mapping *dma_mapping);\n"
         "int nvidia_p2p_planted(void);"),
    ],
    "cuda.h": [
        ("function:cuMemAlloc_v2",
         "CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);",
         "CUresult cuMemAlloc_v2(CUdeviceptr *dptr, unsigned int bytesize);"),
        ("macro:cuMemFree", "#define cuMemFree cuMemFree_v2",
         "#define cuMemFree cuMemFree_v3"),
        ("enumconst:CU_DEVICE_ATTRIBUTE_WARP_SIZE",
         "CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,", "CU_DEVICE_ATTRIBUTE_WARP_SIZE = 11,"),
        ("field:struct CUmemAllocationProp_st.allocFlags.usage",
         "\t\tunsigned short usage;", "\t\tunsigned int usage;"),
        ("typedef:CUdeviceptr", "typedef unsigned long long CUdeviceptr;",
         "typedef unsigned long CUdeviceptr;"),
    ],
}


def selfcheck(tap, nvinc, work, wdir, under, is_file, name):
    """Our header against a copy of itself with differences planted: the
    copy must show each of those, and an unchanged copy none.  The copy
    stands where the real header would, so this needs no reference."""
    src = open(os.path.join(nvinc, name)).read()
    plants = PLANTS[name]
    what = "self-check: differences planted in a copy of %s are reported" % name
    diags = []
    planted = src
    for key, a, b in plants:
        if planted.count(a) != 1:
            diags.append("cannot plant %s: '%s' is not in %s once" % (key, a, name))
        planted = planted.replace(a, b, 1)
    if diags:
        tap.ok(what, False, diags)
        return
    results = []
    for text in (src, planted):
        d = os.path.join(work, "plant%s%d" % (name, len(results)))
        os.makedirs(d)
        ref = os.path.join(d, name)
        with open(ref, "w") as fh:
            fh.write(text)
        try:
            ours = Side("ours", os.path.join(nvinc, name), [], under(nvinc), wdir())
            real = Side("planted", ref, [], is_file(ref), wdir())
            ours.load()
            real.load()
            # the planted copy is complete, so omissions are checked too
            results.append(compare(ours, real, True, lambda s: set(s.mine_names())))
        except Fail as e:
            tap.ok(what, False, [str(e)])
            return
    (same, counts), (diff, _) = results
    bad = []
    if same:
        bad.append("an unchanged copy differs: " + "; ".join(same.values()))
    for key, _, _ in plants:
        if not [k for k in diff if k == key or k.startswith(key + ":")]:
            bad.append("planted %s not reported" % key)
    extra = [k for k in diff if not any(k == p or k.startswith(p + ":") for p, _, _ in plants)]
    diags = bad + ["compared: " + ", ".join("%d %ss" % (v, k) for k, v in counts.items()),
                   "%d planted, caught; %d more differences follow from them" % (
                       len(plants), len(extra))]
    tap.ok(what, not bad, diags)


if __name__ == "__main__":
    sys.exit(main())
