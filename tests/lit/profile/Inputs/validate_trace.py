# Checks a Chrome trace written by `tawa profile`: required fields, one named track per warp group,
# events ordered and non-overlapping on each track, every event labelled modelled. Prints a summary.
import json
import sys

doc = json.load(open(sys.argv[1]))
events = doc["traceEvents"]
names, tracks, procs = {}, {}, set()
for e in events:
    for field in ("ph", "pid", "tid", "name"):
        assert field in e, "missing " + field
    key = (e["pid"], e["tid"])
    if e["ph"] == "M":
        if e["name"] == "thread_name":
            names[key] = e["args"]["name"]
        if e["name"] == "process_name":
            procs.add(e["pid"])
        continue
    assert e["ph"] == "X", e
    assert e["dur"] > 0 and e["ts"] >= 0
    for field in ("iteration", "slot", "source"):
        assert field in e["args"], "missing args." + field
    assert e["args"]["modelled"] is True
    tracks.setdefault(key, []).append((e["ts"], e["ts"] + e["dur"]))
for key, evs in tracks.items():
    assert key in names, "unnamed track"
    for a, b in zip(evs, evs[1:]):
        assert a[0] <= b[0] and a[1] <= b[0] + 1e-9, "overlap on %s" % (names[key],)
roles = sorted(set(n.split(" ")[0] for n in names.values()))
print("valid: %d blocks, %d tracks, roles %s, lost %d" % (len(procs), len(tracks), " ".join(roles), doc["otherData"]["lost_events"]))
