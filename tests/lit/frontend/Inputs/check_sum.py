"""Checks buffers saved by `tawa run --save DIR`: OUT == X + Y element by element, the f32 sum of
each pair rounded once (as the GPU adds), computed here in double and rounded through struct. Reads
.npy version 1 files of little-endian f32 without numpy. Prints one line, or exits 1 with the first
difference."""
import ast
import struct
import sys


def load_f32(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        sys.exit(f"{path}: not an .npy file")
    hlen = struct.unpack_from("<H", data, 8)[0]
    header = ast.literal_eval(data[10:10 + hlen].decode("latin1"))
    if header["descr"] != "<f4" or header["fortran_order"]:
        sys.exit(f"{path}: expected little-endian f32 in C order, got {header}")
    n = 1
    for d in header["shape"]:
        n *= d
    return list(struct.unpack_from(f"<{n}f", data, 10 + hlen))


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


d = sys.argv[1]
x, y, out = (load_f32(f"{d}/{n}.npy") for n in sys.argv[2:5])
if not (len(x) == len(y) == len(out)):
    sys.exit(f"sizes differ: {len(x)}, {len(y)}, {len(out)}")
if all(v == 0 for v in x) or all(v == 0 for v in y):
    sys.exit("inputs are all zeros: the check would prove nothing")
for i, (a, b, o) in enumerate(zip(x, y, out)):
    if o != f32(a + b):
        sys.exit(f"element {i}: {o} != {a} + {b} = {f32(a + b)}")
print(f"sum: {len(out)} elements, {sys.argv[4]} == {sys.argv[2]} + {sys.argv[3]} exactly")
