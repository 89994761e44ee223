#!/usr/bin/env python3
"""The files a recorded call path visits (scripts/callpath/run.sh).

Input: hook.c's record ("> OBJECT OFFSET" at a function's entry, "<" at its
exit), the library and the source root. The calls form a tree; the path is
the file of the innermost frame over time, where

  - calls into src/core/ (allocation, errors, environment, logging) and
  - leaf calls (a call into a file whose whole subtree stays in that file
    and src/core/: a query, a builder, a parser)

are not steps: they return before anything else happens. A file is
*entered* each time the path arrives in it, by a call or by a return. The
path is cut at the first call of the mapper's driver (mpitopo_map or
mpitopo_map_network): "before the mapper runs".
"""
import os
import subprocess
import sys

DRIVER = ('mpitopo_map', 'mpitopo_map_network')


def main(rec, lib, root):
    events, offs = [], []
    for line in open(rec):
        p = line.split()
        if p[0] == '<':
            events.append(None)
        else:
            events.append(len(offs) if 'libmpitopo.so' in p[1] else -1)
            if 'libmpitopo.so' in p[1]:
                offs.append(p[2])
    out = subprocess.run(['addr2line', '-f', '-e', lib] + offs, capture_output=True,
                         text=True).stdout.split('\n')
    files, funcs = [], []
    for i in range(len(offs)):
        where = out[2 * i + 1].split(':')[0]
        files.append(os.path.relpath(where, root) if where.startswith(root) else '?')
        funcs.append(out[2 * i])
    # The call tree: node = [file, children].
    top = ['(caller)', [], '']
    stack = [top]
    for e in events:
        if e is None:
            if len(stack) > 1:
                stack.pop()
            continue
        node = [files[e] if e >= 0 else '?', [], funcs[e] if e >= 0 else '?']
        stack[-1][1].append(node)
        stack.append(node)

    def core(f):
        return f.startswith('src/core/') or f == '?'

    def stays(node, f):
        return all((core(c[0]) or c[0] == f) and stays(c, f) for c in node[1])

    path = []
    cut = [False]

    def walk(node, f_here):
        for c in node[1]:
            if cut[0]:
                return
            if c[2] in DRIVER:
                cut[0] = True
                return
            if core(c[0]) or c[0] == f_here or stays(c, c[0]):
                if c[0] == f_here:
                    walk(c, f_here)
                continue
            path.append(c[0])
            walk(c, c[0])
            if not cut[0]:
                path.append(f_here)

    walk(top, '(caller)')
    seq = []
    for f in path:
        if f != '(caller)' and (not seq or seq[-1] != f):
            seq.append(f)
    count = {}
    for f in seq:
        count[f] = count.get(f, 0) + 1
    print('path before the mapper:', ' -> '.join(f.replace('src/', '') for f in seq))
    print(f'{len(seq)} steps through {len(count)} files, '
          f'{len(seq) - len(count)} returns to a file already left, '
          f'most entries of one file: {max(count.values()) if count else 0}')
    for f, n in sorted(count.items(), key=lambda x: (-x[1], x[0])):
        print(f'  {n:3d}  {f}')


if __name__ == '__main__':
    main(*sys.argv[1:4])
