#!/usr/bin/env python3
"""The recorded layout of mpitopo's public structs (tests/abi/layout_ref.h).

Within a major version (the soname, libmpitopo.so.MAJOR) the public structs
keep their size, alignment and member offsets, and the enum constants their
values: see the ABI policy in NEWS. This script reads the structs and enums
of include/mpitopo/*.h, measures them with a probe program built by each MPI
compiler given (the layout of mpitopo_nodeinfo_t depends on the MPI's handle
types), and writes the reference that test_abi_layout.c checks.

  gen_layout_ref.py generate --cc mpicc --cc mpicc.mpich -I BUILD/include
        measure and write tests/abi/layout_ref.h. Refuses when an entry of
        the current reference changed or disappeared while the major version
        in CMakeLists.txt is still the one the reference was recorded for:
        that is an ABI break, which needs a new major version. New structs,
        members at the end of nothing, new enum values: added freely.
  gen_layout_ref.py check [--ref FILE] [HEADER_DIR]
        every struct, member and enum constant of the headers has an entry
        in the reference, and every entry still exists (the ctest
        package.abi_complete; test_abi_layout.c checks the numbers).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REF = os.path.join(HERE, "layout_ref.h")
PLATFORM_GUARD = "defined(__x86_64__) && defined(__LP64__) && defined(__linux__)"
FLAVOURS = [("openmpi", "defined(OPEN_MPI)"), ("mpich", "defined(MPICH_VERSION)")]


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def member_names(body):
    names = []
    for decl in body.split(";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        fp = re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)
        if fp:  # function pointer
            names.append(fp.group(1))
            continue
        decl = re.sub(r"\[[^\]]*\]", "", decl)
        parts = decl.split(",")
        names.append(re.findall(r"\w+", parts[0])[-1])
        names.extend(re.findall(r"\w+", p)[-1] for p in parts[1:])
    return names


def parse_headers(header_dir):
    """Structs (tag -> members, in order) and enum constant names."""
    structs, values = {}, []
    for name in sorted(os.listdir(header_dir)):
        if not name.endswith(".h"):
            continue
        text = strip_comments(open(os.path.join(header_dir, name)).read())
        # The error codes come from one X-macro table.
        table = re.search(r"#define MPITOPO_ERROR_TABLE\(X\)((?:[^\n]*\\\n)*[^\n]*)", text)
        if table:
            values += ["MPITOPO_" + n for n in re.findall(r"\bX\(\s*(\w+)\s*,", table.group(1))]
        text = re.sub(r"^\s*#.*?(?<!\\)$", " ", text, flags=re.M | re.S)  # directives
        for m in re.finditer(r"\bstruct\s+(\w+)\s*\{([^{}]*)\}", text):
            structs[m.group(1)] = member_names(m.group(2))
        for m in re.finditer(r"\benum\s+\w*\s*\{([^{}]*)\}", text):
            values += re.findall(r"\b(MPITOPO_\w+)\s*(?:=[^,]*)?(?:,|$)", m.group(1).strip())
    # A name ending in '_' is a sentinel (MPITOPO_ERR_LAST_), not API.
    return structs, [v for v in values if not v.endswith("_")]


def probe_source(structs, values):
    out = ["#include <mpitopo.h>", "#include <stddef.h>", "#include <stdio.h>", "",
           "int main(void)", "{",
           '#if defined(OPEN_MPI)\n    puts("flavour openmpi");',
           '#elif defined(MPICH_VERSION)\n    puts("flavour mpich");',
           '#else\n    puts("flavour unknown");\n#endif']
    for tag, members in structs.items():
        out.append(f'    printf("STRUCT({tag}, %zu, %zu)\\n", sizeof(struct {tag}), _Alignof(struct {tag}));')
        for m in members:
            out.append(f'    printf("MEMBER({tag}, {m}, %zu, %zu)\\n", offsetof(struct {tag}, {m}), '
                       f'sizeof(((struct {tag} *)0)->{m}));')
    for v in values:
        out.append(f'    printf("VALUE({v}, %lld)\\n", (long long)({v}));')
    out += ["    return 0;", "}", ""]
    return "\n".join(out)


def probe(cc, includes, source):
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "probe.c"), os.path.join(tmp, "probe")
        open(src, "w").write(source)
        subprocess.run([cc, "-std=gnu11"] + [f"-I{d}" for d in includes] + [src, "-o", exe], check=True)
        lines = subprocess.run([exe], check=True, capture_output=True, text=True).stdout.split("\n")
    flavour = lines[0].split()[1]
    return flavour, [l for l in lines[1:] if l]


def entry_key(line):
    """STRUCT(t, ...) -> STRUCT(t), MEMBER(t, m, ...) -> MEMBER(t, m), VALUE(n, v) -> VALUE(n)."""
    kind, args = re.match(r"(?:MPITOPO_ABI_)?(\w+)\((.*)\)", line).groups()
    args = [a.strip() for a in args.split(",")]
    return kind, tuple(args[:2] if kind == "MEMBER" else args[:1]), tuple(args[2:] if kind == "MEMBER" else args[1:])


def read_ref(path):
    """{(flavour or '', kind, key): numbers} and the recorded major version."""
    entries, major, flavour = {}, None, ""
    if not os.path.exists(path):
        return entries, major
    for line in open(path):
        line = line.strip()
        m = re.match(r"#define MPITOPO_ABI_REF_MAJOR (\d+)", line)
        if m:
            major = int(m.group(1))
        for name, guard in FLAVOURS:
            if line.endswith(guard) and line.startswith(("#if ", "#elif ")):
                flavour = name
        if line.startswith(("#else", "#endif")):
            flavour = ""
        if line.startswith("MPITOPO_ABI_") and "(" in line:
            kind, key, nums = entry_key(line)
            entries[(flavour, kind, key)] = nums
    return entries, major


def project_major():
    text = open(os.path.join(ROOT, "CMakeLists.txt")).read()
    return int(re.search(r"project\(\s*mpitopo\s+VERSION\s+(\d+)\.", text).group(1))


def generate(args):
    structs, values = parse_headers(os.path.join(ROOT, "include", "mpitopo"))
    includes = [os.path.join(ROOT, "include")] + args.I
    source = probe_source(structs, values)
    results = {}
    for cc in args.cc:
        flavour, lines = probe(cc, includes, source)
        if flavour == "unknown":
            sys.exit(f"{cc}: neither Open MPI nor MPICH")
        results[flavour] = lines
    if set(results) != {f for f, _ in FLAVOURS}:
        sys.exit("give one MPI compiler of each flavour: " + ", ".join(f for f, _ in FLAVOURS))
    common = [l for l in results["openmpi"] if all(l in r for r in results.values())]
    new = {}
    for l in common:
        kind, key, nums = entry_key(l)
        new[("", kind, key)] = nums
    for flavour, lines in results.items():
        for l in lines:
            if l not in common:
                kind, key, nums = entry_key(l)
                new[(flavour, kind, key)] = nums

    old, old_major = read_ref(args.out)
    major = project_major()
    broken = [k for k in old if k not in new or new[k] != old[k]]
    if broken and old_major == major:
        for k in broken:
            now = ", ".join(new[k]) if k in new else "gone"
            print(f"ABI break: {k[1]}({', '.join(k[2])}){' under ' + k[0] if k[0] else ''}: "
                  f"{', '.join(old[k])} -> {now}", file=sys.stderr)
        sys.exit(f"the layout of major version {major} changed: bump the major version "
                 "in CMakeLists.txt (and NEWS) before recording the new reference")

    out = ["/* Generated by tests/abi/gen_layout_ref.py: do not edit. The layout of",
           " * mpitopo's public structs and the values of its enum constants on",
           " * x86_64 Linux, for the major version below: test_abi_layout.c checks",
           " * the build against it (see the ABI policy in NEWS). */",
           f"#define MPITOPO_ABI_REF_MAJOR {major}",
           f"#if {PLATFORM_GUARD}",
           '#define MPITOPO_ABI_REF_PLATFORM "x86_64-linux"']
    out += ["MPITOPO_ABI_" + l for l in common]
    for i, (flavour, guard) in enumerate(FLAVOURS):
        out.append(("#if " if i == 0 else "#elif ") + guard)
        out += ["MPITOPO_ABI_" + l for l in results[flavour] if l not in common]
    out += ["#else", "MPITOPO_ABI_UNKNOWN_MPI", "#endif", "#endif", ""]
    open(args.out, "w").write("\n".join(out))
    print(f"wrote {args.out}: {len(common)} common entries, "
          + ", ".join(f"{len([l for l in r if l not in common])} {f}" for f, r in results.items()))


def check(args):
    structs, values = parse_headers(args.header_dir)
    ref, _ = read_ref(args.ref)
    have = {(k[1], k[2]) for k in ref}
    want = {("STRUCT", (t,)) for t in structs}
    want |= {("MEMBER", (t, m)) for t, ms in structs.items() for m in ms}
    want |= {("VALUE", (v,)) for v in values}
    missing = sorted(w for w in want if w not in have)
    gone = sorted(h for h in have if h not in want)
    for kind, key in missing:
        print(f"FAIL abi: {kind}({', '.join(key)}) is in the headers but not in {args.ref}: "
              "run tests/abi/gen_layout_ref.py generate")
    for kind, key in gone:
        print(f"FAIL abi: {kind}({', '.join(key)}) is in {args.ref} but no longer in the headers "
              "(an ABI break within a major version)")
    if missing or gone:
        sys.exit(1)
    print(f"PASS abi_complete ({len(want)} structs, members and enum constants)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--cc", action="append", required=True, help="an MPI C compiler (one per MPI)")
    g.add_argument("-I", action="append", default=[], help="extra include directory (the build's include/)")
    g.add_argument("--out", default=REF)
    c = sub.add_parser("check")
    c.add_argument("--ref", default=REF)
    c.add_argument("header_dir", nargs="?", default=os.path.join(ROOT, "include", "mpitopo"))
    args = ap.parse_args()
    generate(args) if args.cmd == "generate" else check(args)


if __name__ == "__main__":
    main()
