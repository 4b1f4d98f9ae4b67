"""Checks a saved tawa run against an independent reference computed in double precision with plain
Python loops (no NumPy needed). Usage: check_reference.py matmul DIR   (DIR holds a.npy, b.npy, c.npy)."""
import ast
import math
import struct
import sys


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        sys.exit(f"{path}: not a .npy file")
    major = data[6]
    hlen_size = 2 if major == 1 else 4
    hlen = int.from_bytes(data[8:8 + hlen_size], "little")
    header = ast.literal_eval(data[8 + hlen_size:8 + hlen_size + hlen].decode("latin1"))
    body = data[8 + hlen_size + hlen:]
    fmt = {"<f2": "e", "<f4": "f", "<f8": "d"}[header["descr"]]
    n = math.prod(header["shape"])
    return header["shape"], struct.unpack("<%d%s" % (n, fmt), body[:n * struct.calcsize(fmt)])


def check_matmul(d):
    (m, k), a = read_npy(f"{d}/a.npy")
    (_, n), b = read_npy(f"{d}/b.npy")
    _, c = read_npy(f"{d}/c.npy")
    worst = 0.0
    for i in range(m):
        row = a[i * k:(i + 1) * k]
        for j in range(n):
            ref = sum(row[p] * b[p * n + j] for p in range(k))
            err = abs(c[i * n + j] - ref) / (1e-2 * math.sqrt(k) * (1 + abs(ref)))
            worst = max(worst, err)
    ok = worst <= 1.0
    print(f"matmul {m}x{n}x{k}: max error {worst:.3f} of the f16 tolerance (1e-2*sqrt(K)*(1+|ref|)) -> "
          + ("MATCHES the reference" if ok else "DOES NOT MATCH the reference"))
    return ok


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "matmul":
        sys.exit(__doc__)
    sys.exit(0 if check_matmul(sys.argv[2]) else 1)
