# Reads a log of "start T" / "end T" lines (one run per pair, any order) and prints how many runs
# were under way at once at most.
import sys

events = []
for line in open(sys.argv[1]):
    kind, t = line.split()
    events.append((float(t), 1 if kind == "start" else -1))
now = peak = 0
for _, d in sorted(events, key=lambda e: (e[0], e[1])):
    now += d
    peak = max(peak, now)
print("at most %d at once" % peak)
