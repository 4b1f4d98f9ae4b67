"""Writes hostile inputs for errors/deep_nesting.test into the folder given: kernels, tile IR and a grid
nested far past any real program (each crashed tawa with a stack overflow before it had limits),
and the largest nesting each limit still accepts."""
import os
import sys

out = sys.argv[1]
src = open(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "examples", "softmax.py")).read()
old = "in_ptr + row * in_row_stride + cols"
assert old in src


def kernel(name, expr):
    open(os.path.join(out, name), "w").write(src.replace(old, expr, 1))


kernel("parens.py", "in_ptr + " + "(" * 50000 + "row" + ")" * 50000 + " * in_row_stride + cols")
kernel("parens_ok.py", "in_ptr + " + "(" * 150 + "row" + ")" * 150 + " * in_row_stride + cols")
kernel("unary.py", "in_ptr + " + "-" * 1000 + "row * in_row_stride + cols")
kernel("long.py", "in_ptr + row" + " + row" * 20000 + " * in_row_stride + cols")
kernel("long_ok.py", "in_ptr + row" + " + row" * 1500 + " * in_row_stride + cols")
lines = src.split("\n")
at = next(i for i, l in enumerate(lines) if "first_row = tl.program_id(0)" in l)
lines[at + 1:at + 1] = ["    " * (k + 1) + "if first_row >= 0:" for k in range(150)] + ["    " * 151 + "pass"]
open(os.path.join(out, "indent.py"), "w").write("\n".join(lines))

tir = ["tile.func @deep(%n: i32) {", "  %c0 = tile.constant {value = 0} : i32", "  %c1 = tile.constant {value = 1} : i32"]
for k in range(20000):
    tir += ["  " * (k + 1) + "tile.for %c0, %n, %c1 {", "  " * (k + 1) + "^bb0(%i" + str(k) + ": i32):"]
for k in reversed(range(20000)):
    tir += ["  " * (k + 2) + "tile.yield", "  " * (k + 1) + "}"]
tir += ["  tile.return", "}"]
open(os.path.join(out, "regions.tir"), "w").write("\n".join(tir) + "\n")
open(os.path.join(out, "attr.tir"), "w").write(
    "tile.func @t(%n: i32) {\n  %c0 = tile.constant {value = " + "[" * 50000 + "0" + "]" * 50000 + "} : i32\n  tile.return\n}\n")
open(os.path.join(out, "grid.txt"), "w").write("(" * 50000 + "1" + ")" * 50000)
