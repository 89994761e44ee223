#!/usr/bin/env python3
"""The bytes every link carried in a SimGrid Paje trace: the integral over
time of its bandwidth_used variable (a rate in bytes per second, set, added
to and subtracted from as flows start and end; SimGrid writes the events
of a container out of time order, so they are sorted first). Prints "LINK BYTES" lines,
most loaded first. Usage: link_bytes.py TRACE"""
import sys


def link_bytes(path):
    events = {}  # event id -> (name, [field names])
    cur = None
    containers = {}  # alias -> name
    var_type = None  # the alias of the LINK's bandwidth_used variable type
    changes = {}  # container alias -> [(time, event name, value)]
    with open(path) as f:
        for line in f:
            if line.startswith('%EventDef'):
                _, name, eid = line.split()
                cur = events[eid] = (name, [])
                continue
            if line.startswith('%EndEventDef'):
                cur = None
                continue
            if line.startswith('%'):
                if cur is not None:
                    cur[1].append(line.split()[1])
                continue
            if line.startswith('#') or not line.strip():
                continue
            parts = line.split(None, len(events.get(line.split()[0], ('', []))[1]))
            name, fields = events[parts[0]]
            ev = dict(zip(fields, (p.strip().strip('"') for p in parts[1:])))
            if name == 'PajeDefineVariableType' and ev['Name'] == 'bandwidth_used':
                var_type = ev['Alias']
            elif name == 'PajeCreateContainer':
                containers[ev['Alias']] = ev['Name']
            elif name in ('PajeSetVariable', 'PajeAddVariable', 'PajeSubVariable') and ev['Type'] == var_type:
                changes.setdefault(ev['Container'], []).append((float(ev['Time']), name, float(ev['Value'])))
    total = {}
    for c, evs in changes.items():
        evs.sort(key=lambda e: e[0])  # stable: simultaneous events keep their order
        value, since, b = 0.0, evs[0][0], 0.0
        for t, name, v in evs:
            b += value * (t - since)
            since = t
            value = v if name == 'PajeSetVariable' else value + v if name == 'PajeAddVariable' else value - v
        total[containers.get(c, c)] = b
    return total


if __name__ == '__main__':
    for link, b in sorted(link_bytes(sys.argv[1]).items(), key=lambda x: (-x[1], x[0])):
        print(link, '%.0f' % b)
