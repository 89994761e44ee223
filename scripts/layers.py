#!/usr/bin/env python3
"""Import circles and layer order of the library, read from its object files.

A file *imports* another when it uses a symbol (function or data) the other
defines: the undefined symbols of each object file (nm -u) against the
defined ones (nm --defined-only). A *circle* is a set of two or more files
each reaching every other through imports (a strongly connected component).
The layers are the folders of src/ in the order of LAYERS; a file may import
its own folder or a lower one, never a higher one.

Usage: scripts/layers.py BUILD_DIR [--max-circles N] [--quiet]
  BUILD_DIR  a configured and built tree (e.g. build/openmpi): the objects of
             the libraries mpitopo_base and mpitopo are read.
Exit status 1 when there are more than N circles (default 2) or an import
from a lower layer to a higher one; the report says which.
"""
import os
import subprocess
import sys

# Lowest first. A folder not listed is an error (place it).
LAYERS = [
    "core",
    "machine",
    "network",
    "pattern",
    "metrics",
    "map",
    "mpi",
    "coll/engine",
    "coll/neighbor",
    "coll/global",
    "hhc",
]

# Objects of these targets are read (CMakeFiles/<target>.dir/<path>.o).
TARGETS = ["mpitopo_base", "mpitopo"]


def objects(build):
    found = {}
    for target in TARGETS:
        top = os.path.join(build, "src", "CMakeFiles", target + ".dir")
        for dirpath, _, files in os.walk(top):
            for f in files:
                if f.endswith(".c.o"):
                    path = os.path.join(dirpath, f)
                    src = os.path.relpath(path, top)[: -len(".o")]
                    found.setdefault(src, path)
    return found


def symbols(path):
    out = subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRCGSV" and parts[1].isupper():
            defined.add(parts[2])
    return defined, used


def folder(src):
    d = os.path.dirname(src)
    best = None
    for layer in LAYERS:
        if d == layer or d.startswith(layer + "/"):
            if best is None or len(layer) > len(best):
                best = layer
    return best


def circles(graph):
    """Tarjan's strongly connected components of size > 1, iteratively."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    quiet = "--quiet" in argv
    max_circles = 2
    for i, a in enumerate(argv):
        if a == "--max-circles" and i + 1 < len(argv):
            max_circles = int(argv[i + 1])
            args = [x for x in args if x != argv[i + 1]]
    if len(args) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    objs = objects(args[0])
    if not objs:
        print(f"layers.py: no object files under {args[0]}/src/CMakeFiles", file=sys.stderr)
        return 2
    owner, uses = {}, {}
    for src, path in objs.items():
        d, u = symbols(path)
        uses[src] = u
        for s in d:
            owner.setdefault(s, src)
    graph = {src: set() for src in objs}
    for src, u in uses.items():
        for s in u:
            o = owner.get(s)
            if o is not None and o != src:
                graph[src].add(o)
    bad = 0
    unplaced = sorted(s for s in objs if folder(s) is None)
    for s in unplaced:
        print(f"unplaced: src/{s} is in no layer of scripts/layers.py")
        bad = 1
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    for src in sorted(graph):
        for dst in sorted(graph[src]):
            a, b = folder(src), folder(dst)
            if a is not None and b is not None and rank[b] > rank[a]:
                print(f"upward: src/{src} ({a}) imports src/{dst} ({b})")
                bad = 1
    found = circles(graph)
    for c in found:
        print("circle: " + " <-> ".join("src/" + s for s in c))
    edges = sum(len(v) for v in graph.values())
    if not quiet:
        print(f"{len(objs)} files, {edges} imports, {len(found)} circles (at most {max_circles})")
    if len(found) > max_circles:
        bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
