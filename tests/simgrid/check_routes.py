#!/usr/bin/env python3
"""Runs a pattern under SMPI on the platform 'mpitopo platform' writes for a
network, and checks that SimGrid loads the links as mpitopo's model loads its
channels. One process per host, rank i on end node i (the identity mapping,
as 'mpitopo eval --mapper identity' on a machine "node:N core:1" places it).

  check_routes.py MPITOPO REPLAY NETWORK PATTERN WORKDIR [--unique] [--bound]

1. serial replay (one flow at a time), Paje trace: every link's bytes (the
   integral of bandwidth_used, less those of a run with no edge: the
   replay's barrier and reduction) must be the load of its channel on
   mpitopo's routes as the platform lists them;
   from these bytes alone, the metrics of 'mpitopo eval --network --json'
   must come back: hop-bytes (the sum), MC (the largest bytes / capacity),
   NZCA and NZCV (mean and variance over the loaded links); and the link
   SimGrid found busiest must be a channel at MC. With --unique it must be
   the very channel eval names busiest (the pattern has one MC channel).
2. with --bound, a concurrent replay (all flows at once, SMPI's bandwidth
   and latency factors at 1) must last MC / BW: the busiest channel is the
   bottleneck of the run.
Prints one line per check; exits 1 on a failure."""
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from link_bytes import link_bytes  # noqa: E402

BW = 1e9  # the platform's default bandwidth per unit of capacity: 1GBps
# The 0-byte tokens of the serial replay still show as a few dozen bytes on
# the links they cross: a link's bytes may be off by NOISE, and a link is
# loaded above LOADED (the patterns' edges carry multiples of 100 kB).
NOISE, LOADED = 5000, 50000
failures = 0


def check(ok, what):
    global failures
    print(('ok   ' if ok else 'FAIL ') + what)
    failures += 0 if ok else 1


def close(a, b, rel=1e-3):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1.0)


def smpirun(replay, plat, hosts, n, pattern, extra, work, serial=False):
    cmd = ['smpirun', '-np', str(n), '-platform', plat, '-hostfile', hosts,
           '--cfg=network/crosstraffic:0', '--log=root.thres:warning'] + extra + [replay, pattern]
    cmd += ['serial'] if serial else []
    return subprocess.run(cmd, cwd=work, capture_output=True, text=True, check=True).stdout


def main():
    mpitopo, replay, network, pattern, work = [a for a in sys.argv[1:] if not a.startswith('--')]
    unique, bound = '--unique' in sys.argv, '--bound' in sys.argv
    pattern, work, replay = os.path.abspath(pattern), os.path.abspath(work), os.path.abspath(replay)
    with open(pattern) as f:
        n = int(next(l for l in f if l.startswith('mpitopo-pattern')).split()[2])
        f.seek(0)
        edges = [tuple(int(x) for x in l.split()[:3]) for l in f
                 if l.strip() and not l.startswith(('#', 'mpitopo-pattern'))]
    tag = re.sub(r'[^A-Za-z0-9]+', '_', network + '_' + os.path.basename(pattern))
    plat = os.path.join(work, tag + '.xml')
    subprocess.run([mpitopo, 'platform', '--network', network, '--nodes', str(n), '-o', plat], check=True)
    zone = ET.parse(plat).getroot().find('zone')
    hosts = [h.get('id') for h in zone.findall('host')]
    cap, chan = {}, {}
    for link in zone.findall('link'):
        props = {p.get('id'): p.get('value') for p in link.findall('prop')}
        if 'channel' in props:
            cap[link.get('id')], chan[link.get('id')] = float(props['capacity']), props['channel']
    routes = {(r.get('src'), r.get('dst')): [c.get('id') for c in r.findall('link_ctn')]
              for r in zone.findall('route')}
    hostfile = os.path.join(work, tag + '.hosts')
    with open(hostfile, 'w') as f:
        f.write('\n'.join(hosts) + '\n')
    ev = json.loads(subprocess.run([mpitopo, 'eval', '--machine', 'node:%d core:1' % n, '--pattern', pattern,
                                    '--mapper', 'identity', '--network', network, '--json'],
                                   capture_output=True, text=True, check=True).stdout)
    net = ev['mappers'][0]['network']

    # The channels' loads on the routes the platform lists.
    expect = {l: 0.0 for l in cap}
    for s, d, b in edges:
        if s != d:
            for l in routes[(hosts[s], hosts[d])]:
                expect[l] += b
    trace = os.path.join(work, tag + '.trace')
    # The barrier before and the reduction after the exchange, alone: subtracted.
    empty = os.path.join(work, tag + '.empty')
    with open(empty, 'w') as f:
        f.write('mpitopo-pattern 1 %d\n' % n)
    smpirun(replay, plat, hostfile, n, empty, ['--cfg=tracing:yes', '--cfg=tracing/platform:yes',
            '--cfg=tracing/uncategorized:yes', '--cfg=tracing/precision:9', '--cfg=tracing/filename:' + trace], work,
            serial=True)
    base = link_bytes(trace)
    smpirun(replay, plat, hostfile, n, pattern, ['--cfg=tracing:yes', '--cfg=tracing/platform:yes',
            '--cfg=tracing/uncategorized:yes', '--cfg=tracing/precision:9', '--cfg=tracing/filename:' + trace], work,
            serial=True)
    got = {l: b - base.get(l, 0.0) for l, b in link_bytes(trace).items() if l in cap}
    bad = [l for l in cap if abs(got.get(l, 0.0) - expect[l]) > NOISE + 1e-4 * expect[l]]
    check(not bad, '%s %s: SimGrid\'s bytes on all %d links = their loads on the platform\'s routes%s' % (
        network, os.path.basename(pattern), len(cap),
        '' if not bad else ' (differ: ' + ', '.join('%s %s %.0f vs %.0f' % (l, chan[l], got.get(l, 0), expect[l])
                                                  for l in bad[:5]) + ')'))
    cong = {l: b / cap[l] for l, b in got.items() if b > LOADED}
    vals = list(cong.values())
    hop_bytes, mc = sum(b for b in got.values() if b > LOADED), max(vals)
    nzca = sum(vals) / len(vals)
    nzcv = sum((v - nzca) ** 2 for v in vals) / len(vals)
    for name, mine in (('hop_bytes', hop_bytes), ('max_congestion', mc), ('nzca', nzca)):
        check(close(mine, net[name]), '  %s from SimGrid %.6g, eval %.6g' % (name, mine, net[name]))
    check(close(nzcv, net['nzcv'], 1e-2), '  nzcv from SimGrid %.6g, eval %.6g' % (nzcv, net['nzcv']))
    busiest = max(sorted(cong), key=lambda l: cong[l])
    check(close(cong[busiest], net['max_congestion']), '  SimGrid\'s busiest link %s (%s) is at MC' % (
        busiest, chan[busiest]))
    at_mc = sorted(chan[l] for l in cong if close(cong[l], net['max_congestion']))
    if unique:
        check(at_mc == [net['busiest_channel']], '  it is the one channel at MC, eval\'s busiest %s (at MC: %s)' % (
            net['busiest_channel'], ', '.join(at_mc)))
    else:
        check(net['busiest_channel'] in at_mc, '  eval\'s busiest %s is among the %d links at MC' % (
            net['busiest_channel'], len(at_mc)))
    if bound:
        out = smpirun(replay, plat, hostfile, n, pattern, ['--cfg=smpi/bw-factor:0:1', '--cfg=smpi/lat-factor:0:1'],
                      work)
        t = float(re.search(r'edges, ([0-9.e+-]+) s', out).group(1))
        check(close(t, net['max_congestion'] / BW, 1e-2), '  concurrent run %.6f s = MC / BW %.6f s' % (
            t, net['max_congestion'] / BW))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
