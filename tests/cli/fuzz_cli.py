#!/usr/bin/env python3
"""Fuzz the mpitopo command line end to end.

Runs 'mpitopo eval' and 'mpitopo map' with every mapper the build lists
('mpitopo mappers', so scotch and metis where built), on random machines,
patterns (descriptions and files), placements, weights and options, with a
share of bad values mixed in, and checks every run:

  - it ends within --timeout seconds, never by a signal, with exit status 0,
    or 1 with a message starting "mpitopo" on stderr and no sanitizer report;
  - with --json, stdout is one JSON object (no NaN or Infinity) with a column
    per mapper and --mapping file, each with the same levels as the machine,
    or, for a mapper of --mapper that does not apply to the pattern, its name
    and why it was skipped;
  - a placement that 'mpitopo map' wrote, read back with 'eval --mapping',
    gives the metrics of the same mapper (all of them for plain and
    openmpi-rankfile, and for cray-rank-order on full machines; the levels
    from the node up for mpich-hosts, which names hosts only).

The CI run is short (--count, --budget); give another --seed and a larger
--count for longer runs. Every failure is printed as a command to paste.
Exit status: 0 when every run passed, 1 otherwise.
"""
import argparse
import json
import math
import os
import random
import shlex
import subprocess
import sys
import tempfile
import time

LEVEL_NAMES = ["group", "switch", "rack", "node", "numa", "socket", "l3", "core", "pu"]


class Fuzzer:
    def __init__(self, args, workdir):
        self.cli = args.cli
        self.timeout = args.timeout
        self.verbose = args.verbose
        self.rng = random.Random(args.seed)
        self.workdir = workdir
        self.nfiles = 0
        self.failures = []
        self.runs = 0
        self.status = {0: 0, 1: 0}
        out = subprocess.run([self.cli, "mappers"], capture_output=True, text=True, timeout=self.timeout)
        if out.returncode != 0:
            sys.exit(f"fuzz_cli: '{self.cli} mappers' failed: {out.stderr}")
        self.mappers = [line.split()[0] for line in out.stdout.splitlines() if line.strip()]
        self.cart_only = {"cart"}

    # ---- random inputs -------------------------------------------------
    def machine(self):
        """(description, number of leaves or None when the description is bad)."""
        r = self.rng
        if r.random() < 0.06:
            return r.choice(["", "node:0 core:4", "node:-1", "node:x core:2", "node:4 core:4@nan",
                             "node:4@-1 core:2", "node:4,,core:2", "node core:4", ":4", "node:4 core:",
                             "node:99999999999 core:2", "node:4 node:4", "node:2\tcore:2@1e400",
                             "é:2 core:2", "node:4 core:4 " * 12]), None
        nlevels = r.choice([1, 2, 2, 3, 3, 4, 5])
        names = sorted(r.sample(LEVEL_NAMES, nlevels), key=LEVEL_NAMES.index)
        if nlevels > 1 and "node" not in names and r.random() < 0.7:
            names[r.randrange(nlevels - 1)] = "node"
            names = sorted(set(names), key=LEVEL_NAMES.index)
        arities, leaves = [], 1
        cap = 2048 if r.random() < 0.05 else 256
        for _ in names:
            a = r.choice([1, 1, 2, 2, 2, 3, 4, 4, 5, 8, 16])
            if leaves * a > cap:
                a = 1
            arities.append(a)
            leaves *= a
        costs = r.random() < 0.3
        parts = []
        for i, (n, a) in enumerate(zip(names, arities)):
            c = f"@{r.choice([1, 2, 10, 40, 100, 0.5, 0])}" if costs else ""
            parts.append(f"{n}:{a}{c}")
        return r.choice([" ", ","]).join(parts), leaves

    def node_topology(self):
        """Options for a machine whose levels inside a node come from hwloc:
        (options, leaves or None when bad)."""
        r = self.rng
        above = [f"switch:{r.randint(1, 3)}"] if r.random() < 0.3 else []
        nodes = r.randint(1, 4)
        inner = [("package", r.randint(1, 2)), ("core", r.randint(1, 4))]
        if r.random() < 0.3:
            inner.insert(1, ("l3", r.randint(1, 2)))
        if r.random() < 0.2:
            inner.append(("pu", 2))
        leaves = nodes
        for _, a in inner:
            leaves *= a
        for a in above:
            leaves *= int(a.split(":")[1])
        synth = "synthetic:" + " ".join(f"{n}:{a}" for n, a in inner)
        if r.random() < 0.15:
            return ["--machine", " ".join(above + [f"node:{nodes}"]), "--node-topology",
                    r.choice(["synthetic:", "synthetic:bogus:2", "/nonexistent.xml", "synthetic:core:0"])], None
        return ["--machine", " ".join(above + [f"node:{nodes}"]), "--node-topology", synth], leaves

    def pattern(self, leaves):
        """(description or file, processes or None when bad, is_cart)."""
        r = self.rng
        n = max(1, min(leaves, r.choice([leaves, leaves, leaves - 1, r.randint(1, leaves)])))
        if r.random() < 0.05:
            n = leaves + r.randint(1, 4)  # too many processes: a clean error
        k = r.random()
        if k < 0.06:
            return r.choice(["cart:", "cart:4xq", "cart:0x4", "cart:4x4:star=-1", "random:8:1.5:1",
                             "random:8:nan:1", "ring:8:0", "ring:8:3", "complete:0", "complete:-3",
                             "cart:2x2:offsets=", "cart:4x4:moore=9", "cart:99999x99999",
                             "random:99999999999:0.1:1", "cart:4x4:weights=1,2,3,4,5"]), None, False
        if k < 0.4:
            dims = self.factor(n)
            opts = []
            if r.random() < 0.3:
                opts.append(r.choice([":open", ":periods=" + ",".join(r.choice("01") for _ in dims)]))
            s = r.random()
            if s < 0.3:
                opts.append(f":star={r.randint(1, 2)}")
            elif s < 0.5:
                opts.append(f":moore={r.randint(1, 2)}")
            elif s < 0.6 and len(dims) >= 1:
                opts.append(":offsets=" + ";".join(",".join(str(r.randint(-2, 2)) for _ in dims)
                                                   for _ in range(r.randint(1, 3))))
            if r.random() < 0.2:
                opts.append(f":bytes={r.choice([1, 8, 4096])}")
            return "cart:" + "x".join(map(str, dims)) + "".join(opts), n, True
        if k < 0.6:
            return f"random:{n}:{r.choice([0, 0.05, 0.2, 0.5, 1])}:{r.randint(0, 99)}", n, False
        if k < 0.7:
            ks = [d for d in range(1, n + 1) if n % d == 0]
            return f"ring:{n}:{r.choice(ks)}", n, False
        if k < 0.78:
            return f"complete:{n}", n, False
        return self.pattern_file(n)

    def factor(self, n):
        """A random factorisation of n into 1 to 3 dimensions."""
        r, dims = self.rng, []
        for _ in range(r.randint(0, 2)):
            divs = [d for d in range(2, n + 1) if n % d == 0]
            if not divs:
                break
            d = r.choice(divs)
            dims.append(d)
            n //= d
        dims.append(n)
        r.shuffle(dims)
        return dims

    def new_file(self, text, mode="w"):
        self.nfiles += 1
        path = os.path.join(self.workdir, f"f{self.nfiles}.txt")
        with open(path, mode) as f:
            f.write(text)
        return path

    def pattern_file(self, n):
        r = self.rng
        lines = [f"mpitopo-pattern 1 {n}"]
        for _ in range(r.randint(0, 4 * n)):
            lines.append(f"{r.randrange(n)} {r.randrange(n)} {r.randint(0, 10000)} {r.randint(1, 10)}")
        bad = r.random() < 0.15
        if bad:
            i = r.randrange(len(lines))
            lines[i] = r.choice(["0 1 -5 1", f"0 {n} 1 1", "x y z w", "0 1 nan 1", "0 1 1e999 1",
                                 "mpitopo-pattern 2 4", "", "0 1 1", "\x00\x01", "0 1 1 1 1"])
        text = r.choice(["\n", "\r\n"]).join(lines) + r.choice(["\n", ""])
        return self.new_file(text), None if bad else n, False

    def mapper_list(self, is_cart):
        r = self.rng
        usable = [m for m in self.mappers if is_cart or m not in self.cart_only]
        k = r.random()
        if k < 0.05:
            return r.choice(["frob", "", ",", "tree,", "tree:zzz", "random:x", "block:1",
                             "tree,tree,tree", "random:99999999999999999999"]), True
        if k < 0.15:
            return None, False  # all
        chosen = r.sample(usable, r.randint(1, min(3, len(usable))))
        args = {"random": lambda: f"random:{r.randint(0, 9)}", "tree": lambda: r.choice(["tree", "tree:topdown",
                                                                                           "tree:bottomup"])}
        return ",".join(args[m]() if m in args and r.random() < 0.4 else m for m in chosen), False

    def common_options(self):
        r = self.rng
        opts = []
        if r.random() < 0.5:
            opt = r.choice(["--placement", "--launch"])
            opts += [opt, r.choice(["block", "rr", f"random:{r.randint(0, 9)}", "block", "rr"]
                     + (["random:", "foo", "random:-1"] if r.random() < 0.1 else []))]
        if r.random() < 0.4:
            opts += [r.choice(["--weights", "--weight"]), r.choice(["bytes", "messages", "unit"]
                                                                  + (["kg"] if r.random() < 0.1 else []))]
        if r.random() < 0.3:
            opts += ["--seed", str(r.choice([0, 1, 7, 2**63 - 1] + ([-1, "x", 2**64] if r.random() < 0.1 else [])))]
        return opts

    # ---- running and checking ------------------------------------------
    def run(self, argv, expect_ok=False):
        """Run the CLI; returns (status, stdout, stderr) or None after a failure."""
        self.runs += 1
        cmd = [self.cli] + argv
        repro = " ".join(shlex.quote(a) for a in cmd)
        if self.verbose:
            print(repro, flush=True)
        try:
            p = subprocess.run(cmd, capture_output=True, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return self.fail(repro, f"no answer within {self.timeout} s (hang?)")
        out = p.stdout.decode("utf-8", "replace")
        err = p.stderr.decode("utf-8", "replace")
        if p.returncode < 0:
            return self.fail(repro, f"killed by signal {-p.returncode}: {err[-2000:]}")
        if p.returncode not in (0, 1):
            return self.fail(repro, f"exit status {p.returncode}: {err[-2000:]}")
        if "Sanitizer" in err or "runtime error:" in err:
            return self.fail(repro, f"sanitizer report: {err[-3000:]}")
        if p.returncode == 1 and not err.startswith("mpitopo"):
            return self.fail(repro, f"exit status 1 without a message on stderr (stderr: {err[:500]!r})")
        if expect_ok and p.returncode != 0:
            return self.fail(repro, f"expected success: {err[:1000]}")
        self.status[p.returncode] += 1
        return p.returncode, out, err, repro

    def fail(self, repro, why):
        self.failures.append((repro, why))
        print(f"FAIL fuzz_cli: {why}\n  {repro}", flush=True)
        return None

    def check_json(self, out, repro, ncolumns):
        def no_constant(name):
            raise ValueError(f"non-JSON number {name}")
        try:
            d = json.loads(out, parse_constant=no_constant)
        except ValueError as e:
            return self.fail(repro, f"--json output is not JSON ({e}): {out[:500]}")
        try:
            cols = d["mappers"]
            assert isinstance(d["machine"], str) and isinstance(d["nprocs"], int), "machine/nprocs"
            assert ncolumns is None or len(cols) == ncolumns, f"{len(cols)} columns, expected {ncolumns}"
            for c in cols:
                if "skipped" in c:
                    assert set(c) == {"name", "skipped"} and isinstance(c["skipped"], str) and c["skipped"], \
                        f"skipped column {c}"
            cols = [c for c in cols if "skipped" not in c]
            nlev = len(cols[0]["levels"])
            for c in cols:
                assert len(c["levels"]) == nlev, "columns with different levels"
                for key in ("offnode_partners", "onnode_partners"):
                    s = c[key]
                    assert s["min"] <= s["avg"] + 1e-9 and s["avg"] <= s["max"] + 1e-9, f"{key} {s}"
                assert math.isfinite(c["cost"]) and c["cost"] >= 0, f"cost {c['cost']}"
                for lv in c["levels"]:
                    assert 0 <= lv["edges_crossing"] <= d["nedges"], f"level {lv}"
        except (KeyError, IndexError, TypeError, AssertionError) as e:
            return self.fail(repro, f"--json output lacks or breaks a field ({e!r}): {out[:800]}")
        return d

    def fuzz_eval(self):
        r = self.rng
        if r.random() < 0.1:
            machine_opts, leaves = self.node_topology()
        else:
            machine, leaves = self.machine()
            machine_opts = ["--machine", machine]
        pattern, nprocs, is_cart = self.pattern(leaves or 8)
        mappers, bad_mapper = self.mapper_list(is_cart)
        argv = ["eval"] + machine_opts + ["--pattern", pattern] + self.common_options()
        if mappers is not None:
            argv += ["--mapper", mappers]
        if r.random() < 0.3:
            argv.append("--never-worse")
        if r.random() < 0.15 and leaves:
            argv += ["--mapping", self.bad_mapping(nprocs or 4, leaves)]
        if r.random() < 0.05:
            argv += r.choice([["--frobnicate"], ["--machine"], ["--mapping-format", "xml"], ["--json", "--json"],
                              ["--mapper", "none"], ["--hosts", ""], ["--node-topology", "synthetic:bogus"]])
        json_out = r.random() < 0.7
        if json_out:
            argv.append("--json")
        res = self.run(argv)
        if res and res[0] == 0 and json_out:
            self.check_json(res[1], res[3], None)

    def bad_mapping(self, nprocs, leaves):
        """A placement file, most often broken."""
        r = self.rng
        perm = r.sample(range(leaves), min(nprocs, leaves))
        lines = [f"{p} {leaf}" for p, leaf in enumerate(perm)]
        k = r.random()
        if k < 0.2 and lines:
            lines[r.randrange(len(lines))] = r.choice(["0 0", "x", "rank 0=nodeX slot=0", "-1 2", "1,2,,3",
                                                       "99999999999 1", "0 1 2 3"])
        elif k < 0.35 and lines:
            del lines[r.randrange(len(lines))]
        elif k < 0.45:
            lines = [",".join(str(p) for p in r.sample(range(nprocs), nprocs))]
        elif k < 0.55:
            return self.new_file(bytes(r.randrange(256) for _ in range(r.randint(0, 64))), "wb")
        elif k < 0.6:
            return os.path.join(self.workdir, "does-not-exist.txt")
        return self.new_file("\n".join(lines) + "\n")

    def fuzz_map_roundtrip(self):
        """map writes a placement; eval --mapping must measure what the mapper's column measures."""
        r = self.rng
        machine, leaves = self.machine()
        pattern, nprocs, is_cart = self.pattern(leaves or 8)
        usable = [m for m in self.mappers if is_cart or m not in self.cart_only]
        mapper = r.choice(usable + (["frob"] if r.random() < 0.05 else []))
        fmt = r.choice(["plain", "openmpi-rankfile", "mpich-hosts", "cray-rank-order"])
        common = ["--machine", machine, "--pattern", pattern] + self.common_options()
        hosts = []
        if r.random() < 0.3 and leaves:
            nhosts = leaves + r.choice([0, 0, 1, -leaves])  # at least one per node, or too few
            hosts = ["--hosts", ",".join(f"h{i}.example" for i in range(max(nhosts, 0)))]
        out_path = os.path.join(self.workdir, f"map{self.runs}.txt")
        argv = ["map"] + common + ["--mapper", mapper, "--format", fmt, "--output", out_path] + hosts
        if r.random() < 0.3:
            argv.append("--verbose")
        res = self.run(argv)
        if not res or res[0] != 0:
            return
        ev = self.run(["eval"] + common + hosts + ["--mapper", mapper, "--never-worse", "--mapping", out_path,
                                                   "--json"], expect_ok=True)
        if not ev:
            return
        d = self.check_json(ev[1], ev[3], 2)
        if not d:
            return
        mine, theirs = d["mappers"][0], d["mappers"][1]
        keys = ["offnode_partners", "onnode_partners", "cost", "levels"]
        if fmt == "mpich-hosts":
            node = [i for i, lv in enumerate(mine["levels"]) if lv["name"] == "node"]
            if not node:
                return
            keys = ["offnode_partners"]
            mine = dict(mine, levels=mine["levels"][:node[0] + 1])
            theirs = dict(theirs, levels=theirs["levels"][:node[0] + 1])
            keys.append("levels")
        elif fmt == "cray-rank-order" and d["nprocs"] != leaves:
            return
        for key in keys:
            if mine[key] != theirs[key]:
                self.fail(ev[3], f"the {fmt} file of map measures {key} {theirs[key]}, "
                          f"the mapper {mapper} {mine[key]} (map: {res[3]})")
                return

    def fuzz_misc(self):
        r = self.rng
        argv = r.choice([["help"], ["help", "eval"], ["help", "frob"], ["--help"], ["-V"], ["--version"],
                         ["version", "x"], ["mappers"], ["dims", str(r.randint(-2, 5000)),
                                                           ",".join(str(r.randint(0, 6)) for _ in range(r.randint(1, 4)))],
                         ["dims", "12", "0,0", "--ppn", str(r.randint(0, 13))], ["frob"], ["eval"], ["map"],
                         ["map", "--help"], ["eval", "--help"], ["dims"], ["dims", "99999999999", "0"]])
        self.run(argv)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", required=True, help="the mpitopo executable")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--count", type=int, default=150, help="number of cases (default 150)")
    ap.add_argument("--budget", type=float, default=40,
                    help="stop starting new cases after this many seconds (default 40; 0: no limit)")
    ap.add_argument("--timeout", type=float, default=20, help="seconds one run may take (default 20)")
    ap.add_argument("--verbose", action="store_true", help="print every command")
    args = ap.parse_args()
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mpitopo-fuzz-") as workdir:
        fz = Fuzzer(args, workdir)
        cases = 0
        for cases in range(1, args.count + 1):
            k = fz.rng.random()
            if k < 0.55:
                fz.fuzz_eval()
            elif k < 0.92:
                fz.fuzz_map_roundtrip()
            else:
                fz.fuzz_misc()
            if args.budget and time.monotonic() - start > args.budget:
                break
    took = time.monotonic() - start
    print(f"fuzz_cli: seed {args.seed}, {cases} cases, {fz.runs} runs in {took:.1f} s "
          f"({fz.status[0]} succeeded, {fz.status[1]} clean errors), mappers {','.join(fz.mappers)}: "
          f"{len(fz.failures)} failure(s)")
    return 1 if fz.failures else 0


if __name__ == "__main__":
    sys.exit(main())
