# A stand-in for `python -m tawa.tune_workers` (tawa tune --ray ... --python WRAPPER, a script that runs this one): two
# workers on machines of different fingerprints, answering every job with a figure of 1 ms plus x,
# x being the last word of the job's command (--program 'run {x}'); any argument is ignored. It honours the tuner's {"drop": NAME} by giving
# up that worker and saying so ({"slots": 1}).
import json
import sys

ids = [
    {"name": "ray 0", "fingerprint": "gpu: H200 | driver 1 | sm 1980 MHz | memory 3201 MHz", "description": "H200", "details": {"host": "a"}},
    {"name": "ray 1", "fingerprint": "gpu: A100 | driver 1 | sm 1410 MHz | memory 1593 MHz", "description": "A100", "details": {"host": "b"}},
]
out = sys.stdout
out.write(json.dumps({"hello": ids, "slots": 2}) + "\n")
out.flush()
alive = [0, 1]
turn = 0
for line in sys.stdin:
    msg = json.loads(line)
    if "drop" in msg:
        alive = [i for i in alive if ids[i]["name"] != msg["drop"]]
        out.write(json.dumps({"message": "worker %s dropped: the tuner asked" % msg["drop"]}) + "\n")
        out.write(json.dumps({"slots": len(alive)}) + "\n")
        out.flush()
        continue
    who = ids[alive[turn % len(alive)]]
    turn += 1
    x = int(msg["command"].split()[-1])
    m = {"seconds": 0.001 * (1 + x), "spread": 0, "repetitions": [0.001 * (1 + x)], "warmups": 0, "status": "ok", "detail": ""}
    out.write(json.dumps({"id": msg["id"], "measurement": m, "worker": who}) + "\n")
    out.flush()
