#!/usr/bin/env python3
"""Generate the MPI bindings of libmpitopo_shim and libmpitopo_trace.

Reads the table src/pmpi/bindings.def (its header comment defines the
format) and writes into OUTDIR:
  shim_decls.h              prototypes of the shim's hidden functions;
  shim_bindings.c           the shim's C bindings;
  shim_fortran_bindings.c   the shim's Fortran bindings (included by
                            src/pmpi/shim_fortran.c);
  trace_bindings.c          the tracer's C bindings;
  trace_fortran_bindings.c  the tracer's Fortran bindings (included by
                            src/pmpi/trace/trace_fortran.c).
Each binding is one plain C function under its own name. Run by the build
(src/CMakeLists.txt); standard library only.

Usage: gen_bindings.py TABLE OUTDIR
"""
import os
import re
import sys

WIDTH = 99  # the longest line of the generated code, as in the hand-written C

# C parameter types and how a Fortran binding receives them (by reference).
FORTRAN_TYPES = {
    "void": "void *",
    "MPI_Aint": "MPI_Aint *",
    "int": "MPI_Fint *",
    "MPI_Comm": "MPI_Fint *",
    "MPI_Datatype": "MPI_Fint *",
    "MPI_Group": "MPI_Fint *",
    "MPI_Info": "MPI_Fint *",
    "MPI_Op": "MPI_Fint *",
    "MPI_Request": "MPI_Fint *",
    "MPI_Status": "MPI_Fint *",
}

# trace KIND: the names of its arguments.
TRACE_KINDS = {
    "send": ["buf", "dest", "count", "type", "comm"],
    "init": ["request", "buf", "dest", "count", "type", "comm"],
    "start": ["request"],
    "startall": ["count", "requests"],
    "forget": ["request"],
    "finalize": [],
}


class TableError(Exception):
    pass


class Param:
    def __init__(self, text):
        m = re.fullmatch(r"(.*?)\s*\b([A-Za-z_]\w*)\s*(\[\])?", text.strip())
        if not m or not m.group(1):
            raise TableError(f"cannot read the parameter '{text.strip()}'")
        self.ctype = re.sub(r"\s*\*\s*", " *", m.group(1)).strip()
        self.name = m.group(2)
        self.array = bool(m.group(3))
        base = re.sub(r"\bconst\b|\*", "", self.ctype).strip()
        if base not in FORTRAN_TYPES:
            raise TableError(f"parameter '{self.name}': no rule for the type '{base}'")
        self.ftype = FORTRAN_TYPES[base]

    def c_decl(self):
        sep = "" if self.ctype.endswith("*") else " "
        return f"{self.ctype}{sep}{self.name}{'[]' if self.array else ''}"

    def f_decl(self):
        return f"{self.ftype}{self.name}"


class Function:
    def __init__(self, signature, line):
        m = re.fullmatch(r"int\s+(MPI_\w+)\s*\((.*)\)", signature, re.S)
        if not m:
            raise TableError(f"line {line}: not a signature 'int MPI_Name(...)': {signature}")
        self.name, self.line = m.group(1), line
        args = " ".join(m.group(2).split())
        try:
            self.params = [] if args in ("", "void") else [Param(p) for p in args.split(",")]
        except TableError as e:
            raise TableError(f"line {line}: {self.name}: {e}") from None
        self.cond = None      # preprocessor condition
        self.shim = None      # hidden function, or ("watch", comm)
        self.fortran = None   # (manglings, converter, its arguments)
        self.trace = None     # (kind, argument names)

    @property
    def lower(self):
        return self.name.lower()

    @property
    def pmpi(self):
        return "P" + self.name

    def names(self):
        return [p.name for p in self.params]


def logical_lines(path):
    """(line number, text) of each entry, continuation lines joined while a
    parenthesis is open; comments and blank lines dropped."""
    pending, start = None, 0
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            text = raw.rstrip("\n")
            if pending is None and (not text.strip() or text.lstrip().startswith("#")):
                continue
            if pending is None:
                pending, start = text, number
            else:
                pending += " " + text.strip()
            if pending.count("(") == pending.count(")"):
                yield start, pending
                pending = None
    if pending is not None:
        raise TableError(f"line {start}: unbalanced parentheses at the end of the table")


def set_once(fn, attr, value, line, key):
    if getattr(fn, attr) is not None:
        raise TableError(f"line {line}: {fn.name} has two '{key}' lines")
    setattr(fn, attr, value)


def need_params(fn, names, line):
    missing = [n for n in names if n not in fn.names()]
    if missing:
        raise TableError(f"line {line}: {fn.name} has no parameter {', '.join(missing)}")


def read_fortran(fn, value, line):
    manglings, _, call = value.partition(" ")
    if manglings not in ("f77", "f77+f08"):
        raise TableError(f"line {line}: manglings '{manglings}' are not f77 or f77+f08")
    call = " ".join(call.split()).replace("( ", "(").replace(" )", ")")
    m = re.fullmatch(r"(f_\w+)\((.*)\)", call)
    if not m:
        raise TableError(f"line {line}: the Fortran call '{call}' is not f_name(arguments)")
    allowed = set(fn.names()) | {"next", "ierr", "NULL"}
    args = [a.strip() for a in m.group(2).split(",")]
    for arg in args:
        if arg not in allowed and not re.fullmatch(r"\d+", arg):
            raise TableError(f"line {line}: '{arg}' in the Fortran call is not an argument")
    set_once(fn, "fortran", (manglings, m.group(1), args), line, "fortran")


def read_attribute(fn, key, value, line):
    if key == "if":
        set_once(fn, "cond", value, line, key)
    elif key == "shim":
        words = value.split()
        if len(words) == 2 and words[0] == "watch":
            need_params(fn, words[1:], line)
            set_once(fn, "shim", ("watch", words[1]), line, key)
        elif len(words) == 1 and re.fullmatch(r"mpitopo__shim_\w+", words[0]):
            set_once(fn, "shim", words[0], line, key)
        else:
            raise TableError(f"line {line}: 'shim {value}' is neither a hidden "
                             "mpitopo__shim_* function nor 'watch COMM'")
    elif key == "fortran":
        read_fortran(fn, value, line)
    elif key == "trace":
        kind, *args = value.split() or [""]
        if kind not in TRACE_KINDS or len(args) != len(TRACE_KINDS[kind]):
            raise TableError(f"line {line}: 'trace {value}': kinds and arguments are "
                             + "; ".join(f"{k} {' '.join(a)}".strip()
                                         for k, a in TRACE_KINDS.items()))
        need_params(fn, args, line)
        set_once(fn, "trace", (kind, args), line, key)
    else:
        raise TableError(f"line {line}: unknown keyword '{key}'")


def read_table(path):
    functions, seen = [], set()
    for line, text in logical_lines(path):
        if not text[0].isspace():
            functions.append(Function(text.strip(), line))
            if functions[-1].name in seen:
                raise TableError(f"line {line}: {functions[-1].name} appears twice")
            seen.add(functions[-1].name)
            continue
        if not functions:
            raise TableError(f"line {line}: an indented line before any signature")
        key, _, value = text.strip().partition(" ")
        read_attribute(functions[-1], key, value.strip(), line)
    for fn in functions:
        if fn.fortran and not fn.shim:
            raise TableError(f"line {fn.line}: {fn.name}: 'fortran' needs a 'shim' line")
        if not fn.shim and not fn.trace:
            raise TableError(f"line {fn.line}: {fn.name} has neither 'shim' nor 'trace'")
    return functions


# ---------------------------------------------------------------------------
# C text


def wrap(head, items, tail, indent=""):
    """head + items joined by ', ' + tail, broken after commas so that no
    line passes WIDTH, continuation lines aligned after head."""
    lines, cur = [], indent + head
    pad = " " * len(cur)
    if len(pad) > 64:  # a long name: the arguments on the next lines
        pad = indent + " " * 8
    for i, item in enumerate(items):
        piece = item + ("," if i < len(items) - 1 else tail)
        if cur not in (indent + head, pad) and len(cur) + 1 + len(piece) > WIDTH:
            lines.append(cur.rstrip())
            cur = pad
        cur += ("" if cur in (indent + head, pad) else " ") + piece
    if not items:
        cur += tail
    lines.append(cur)
    return "\n".join(lines)


def c_prototype(fn, name=None, suffix="", prefix=""):
    return wrap(f"{prefix}int {name or fn.name}(", [p.c_decl() for p in fn.params] or ["void"],
                ")" + suffix)


def f_params(fn):
    return [p.f_decl() for p in fn.params] + ["MPI_Fint *ierr"]


def f_prototype(name, params, suffix="", prefix=""):
    return wrap(f"{prefix}void {name}(", params, ")" + suffix)


def manglings(fn, which):
    names = [fn.lower + "_", fn.lower + "__", fn.lower, fn.name.upper()]
    return names + [fn.lower + "_f08_"] if which == "f77+f08" else names


def guarded(fn, text, extra=None):
    """text under the function's `if` condition and extra (None: none); a
    condition "!MACRO" stands for #ifndef MACRO."""
    conds = [c for c in (fn.cond, extra) if c]
    if not conds:
        return text
    opening = "\n".join(f"#if {c}" if not c.startswith("!") else f"#ifndef {c[1:]}"
                        for c in conds)
    closing = "\n".join(f"#endif /* {c} */" for c in reversed(conds))
    return f"{opening}\n{text}\n{closing}"


def header(table, what):
    return (f"/* {what}\n * generated by scripts/gen_bindings.py from src/pmpi/"
            f"{os.path.basename(table)}; do not edit. */\n")


def shim_c_body(fn):
    if isinstance(fn.shim, tuple):
        comm = fn.shim[1]
        return (f"    mpitopo__shim_watch_used({comm});\n"
                + wrap(f"return {fn.pmpi}(", fn.names(), ");", "    "))
    return wrap(f"return {fn.shim}(", fn.names(), ");", "    ")


def gen_shim_decls(table, functions):
    out = [header(table, "The hidden functions the shim's C and Fortran bindings call\n"
                  " * (src/pmpi/shim.h includes this file)."),
           "#ifndef MPITOPO_SHIM_DECLS_H\n#define MPITOPO_SHIM_DECLS_H\n"]
    for fn in functions:
        if isinstance(fn.shim, str):
            out.append(guarded(fn, c_prototype(fn, fn.shim, ";", "MPITOPO_SHIM_HIDDEN ")))
    out.append("\n#endif")
    return "\n".join(out) + "\n"


def gen_shim_c(table, functions):
    out = [header(table, "libmpitopo_shim: the C bindings."),
           "#include <mpi.h>\n\n#include \"pmpi/shim.h\"\n#include \"pmpi/trace/trace.h\"\n"]
    for fn in functions:
        if fn.shim:
            out.append(guarded(fn, f"{c_prototype(fn)}\n{{\n{shim_c_body(fn)}\n}}") + "\n")
    return "\n".join(out)


def gen_shim_fortran(table, functions):
    out = [header(table, "libmpitopo_shim: the Fortran bindings, included at the end of\n"
                  " * src/pmpi/shim_fortran.c (they call its converters).")]
    for fn in functions:
        if not fn.fortran:
            continue
        which, converter, args = fn.fortran
        defs = []
        for name in manglings(fn, which):
            body = ""
            if "next" in args:
                body = (f"    static void *volatile next_;\n"
                        f"    void *next = f_next(&next_, \"{name}\");\n")
            body += wrap(f"{converter}(", args, ");", "    ")
            defs.append(f"{f_prototype(name, f_params(fn), ';')}\n"
                        f"{f_prototype(name, f_params(fn))}\n{{\n{body}\n}}")
        out.append(guarded(fn, "\n\n".join(defs)) + "\n")
    return "\n".join(out)


# ---------------------------------------------------------------------------
# The tracer


def trace_c_body(fn):
    kind, a = fn.trace
    call = wrap(f"int rc = {fn.pmpi}(", fn.names(), ");", "    ")
    if kind == "forget":
        return (f"    if ({a[0]})\n        mpitopo__trace_forget(*{a[0]});\n"
                + wrap(f"return {fn.pmpi}(", fn.names(), ");", "    "))
    if kind == "finalize":
        return f"    mpitopo__trace_finalize();\n    return {fn.pmpi}();"
    hook = {
        "send": lambda: wrap("mpitopo__trace_send(", a, ");", "        "),
        "init": lambda: wrap("mpitopo__trace_init(", ["*" + a[0]] + a[1:], ");", "        "),
        "start": lambda: f"        mpitopo__trace_start(1, {a[0]});",
        "startall": lambda: f"        mpitopo__trace_start({a[0]}, {a[1]});",
    }[kind]()
    return f"{call}\n    if (rc == MPI_SUCCESS)\n{hook}\n    return rc;"


def shim_defines_c(fn):
    return "!MPITOPO_TRACE_IN_SHIM" if fn.shim else None


def shim_defines_fortran(fn):
    return "!MPITOPO_TRACE_IN_SHIM" if fn.fortran else None


def gen_trace_c(table, functions):
    out = [header(table, "libmpitopo_trace (and the tracer compiled into libmpitopo_shim): "
                  "the C bindings.\n * In the shim, those the shim defines itself are left "
                  "out (MPITOPO_TRACE_IN_SHIM)."),
           "#include <mpi.h>\n\n#include \"pmpi/trace/trace.h\"\n"]
    for fn in functions:
        if fn.trace:
            text = f"{c_prototype(fn)}\n{{\n{trace_c_body(fn)}\n}}"
            out.append(guarded(fn, text, shim_defines_c(fn)) + "\n")
    return "\n".join(out)


def trace_f_hooks(fn):
    """The statements before the forward and after it."""
    kind, a = fn.trace
    if kind == "forget":
        return (f"    if ({a[0]})\n        mpitopo__trace_forget(PMPI_Request_f2c(*{a[0]}));\n", "")
    if kind == "finalize":
        return ("    mpitopo__trace_finalize();\n", "")
    after = {
        "send": lambda: (f"    if (*ierr == MPI_SUCCESS)\n"
                         f"        record({a[0]}, *{a[1]}, *{a[2]}, *{a[3]}, *{a[4]});\n"),
        "init": lambda: (f"    if (*ierr == MPI_SUCCESS && *{a[2]} != MPI_PROC_NULL)\n"
                         + wrap("mpitopo__trace_init(",
                                [f"PMPI_Request_f2c(*{a[0]})", a[1], f"(int)*{a[2]}",
                                 f"(MPI_Count)*{a[3]}", f"PMPI_Type_f2c(*{a[4]})",
                                 f"PMPI_Comm_f2c(*{a[5]})"], ");", "        ") + "\n"),
        "start": lambda: (f"    if (*ierr == MPI_SUCCESS) {{\n"
                          f"        MPI_Request c = PMPI_Request_f2c(*{a[0]});\n"
                          f"        mpitopo__trace_start(1, &c);\n    }}\n"),
        "startall": lambda: (f"    for (MPI_Fint i = 0; *ierr == MPI_SUCCESS && i < *{a[0]}; i++) {{\n"
                             f"        MPI_Request c = PMPI_Request_f2c({a[1]}[i]);\n"
                             f"        mpitopo__trace_start(1, &c);\n    }}\n"),
    }[kind]()
    return "", after


def trace_f_function(fn):
    """The weak MPI entry point, the body shared by the four manglings, and
    the manglings."""
    target, body = f"p{fn.lower}_", f"f_{fn.lower}"
    params = f_params(fn)
    before, after = trace_f_hooks(fn)
    args = fn.names() + ["ierr"]
    text = [f_prototype(target, params, " __attribute__((weak));"),
            f"{f_prototype(body, params, '', 'static ')}\n{{\n{before}"
            "    MPI_Fint ierr_local;\n    if (!ierr)\n        ierr = &ierr_local;\n"
            f"    if (!{target}) {{\n        *ierr = MPI_ERR_OTHER;\n        return;\n    }}\n"
            "    mpitopo__trace_fortran_enter();\n"
            + wrap(f"{target}(", args, ");", "    ") + "\n"
            f"    mpitopo__trace_fortran_leave();\n{after}}}"]
    for name in manglings(fn, "f77"):
        text.append(f"{f_prototype(name, params, ';')}\n{f_prototype(name, params)}\n{{\n"
                    + wrap(f"{body}(", args, ");", "    ") + "\n}")
    return "\n\n".join(text)


def gen_trace_fortran(table, functions):
    out = [header(table, "libmpitopo_trace (and the tracer compiled into libmpitopo_shim): "
                  "the Fortran\n * bindings, included at the end of "
                  "src/pmpi/trace/trace_fortran.c (they call its\n * record()). In the shim, "
                  "those the shim defines itself are left out (MPITOPO_TRACE_IN_SHIM).")]
    for fn in functions:
        if fn.trace:
            out.append(guarded(fn, trace_f_function(fn), shim_defines_fortran(fn)) + "\n")
    return "\n".join(out)


OUTPUTS = {
    "shim_decls.h": gen_shim_decls,
    "shim_bindings.c": gen_shim_c,
    "shim_fortran_bindings.c": gen_shim_fortran,
    "trace_bindings.c": gen_trace_c,
    "trace_fortran_bindings.c": gen_trace_fortran,
}


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    table, outdir = argv[1], argv[2]
    try:
        functions = read_table(table)
    except TableError as e:
        sys.stderr.write(f"{table}: {e}\n")
        return 1
    os.makedirs(outdir, exist_ok=True)
    for name, gen in OUTPUTS.items():
        with open(os.path.join(outdir, name), "w", encoding="utf-8") as f:
            f.write(gen(table, functions))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
