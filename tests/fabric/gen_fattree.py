#!/usr/bin/env python3
"""Write an ibsim net file (ibnetdiscover's format) of a fat tree.

  gen_fattree.py two LEAVES HOSTS_PER_LEAF SPINES
      two levels: every leaf has one link to every spine.
  gen_fattree.py three PODS LEAVES_PER_POD HOSTS_PER_LEAF MIDDLES_PER_POD TOPS_PER_GROUP
      three levels: in each pod every leaf has one link to every middle
      switch; middle switch j of every pod has one link to each top switch
      of group j (TOPS_PER_GROUP tops per group, MIDDLES_PER_POD groups).

Hosts are named "nodeNNN HCA-1" (NNN from 000, leaf by leaf), switches
"sw-L1-I", "sw-L2-I", "sw-L3-I". The first record is host 0's HCA, so the
simulated subnet manager and the read-back tools attach there.
"""
import sys


def write(out, hosts, switches, links, nports):
    """hosts: names; switches: names; links: (a, pa, b, pb) by name."""
    ports = {}
    for a, pa, b, pb in links:
        ports.setdefault(a, []).append((pa, b, pb))
        ports.setdefault(b, []).append((pb, a, pa))
    for h in hosts:
        out.write('Hca\t1 "%s"\n' % h)
        for pa, b, pb in sorted(ports.get(h, [])):
            out.write('[%d]\t"%s"[%d]\n' % (pa, b, pb))
        out.write("\n")
    for s in switches:
        out.write('Switch\t%d "%s"\n' % (nports, s))
        for pa, b, pb in sorted(ports.get(s, [])):
            out.write('[%d]\t"%s"[%d]\n' % (pa, b, pb))
        out.write("\n")


def host(i):
    return "node%03d HCA-1" % i


def two(leaves, hpl, spines):
    hosts = [host(i) for i in range(leaves * hpl)]
    ls = ["sw-L1-%d" % i for i in range(leaves)]
    ss = ["sw-L2-%d" % i for i in range(spines)]
    links = []
    for l in range(leaves):
        for k in range(hpl):
            links.append((hosts[l * hpl + k], 1, ls[l], k + 1))
        for s in range(spines):
            links.append((ls[l], hpl + s + 1, ss[s], l + 1))
    return hosts, ls + ss, links, max(hpl + spines, leaves)


def three(pods, lpp, hpl, mpp, tpg):
    hosts = [host(i) for i in range(pods * lpp * hpl)]
    ls = ["sw-L1-%d" % i for i in range(pods * lpp)]
    ms = ["sw-L2-%d" % i for i in range(pods * mpp)]
    ts = ["sw-L3-%d" % i for i in range(mpp * tpg)]
    links = []
    for p in range(pods):
        for a in range(lpp):
            leaf = p * lpp + a
            for k in range(hpl):
                links.append((hosts[leaf * hpl + k], 1, ls[leaf], k + 1))
            for j in range(mpp):
                links.append((ls[leaf], hpl + j + 1, ms[p * mpp + j], a + 1))
        for j in range(mpp):
            for t in range(tpg):
                links.append((ms[p * mpp + j], lpp + t + 1, ts[j * tpg + t], p + 1))
    return hosts, ls + ms + ts, links, max(hpl + mpp, lpp + tpg, pods)


def main(argv):
    if len(argv) == 5 and argv[1] == "two":
        net = two(*map(int, argv[2:]))
    elif len(argv) == 7 and argv[1] == "three":
        net = three(*map(int, argv[2:]))
    else:
        sys.stderr.write(__doc__)
        return 2
    write(sys.stdout, *net)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
