"""The reference for grad_in_place.py, in float64 with numpy. `make DIR R C` writes fresh random
logits X (R x C, f32) and labels Y (R, i32) as DIR/X.npy and DIR/Y.npy; `check DIR OUT` compares the
buffers `tawa run --save OUT` wrote with the softmax-minus-one-hot gradient and the loss per row."""
import sys

import numpy as np

mode, d = sys.argv[1], sys.argv[2]
if mode == "make":
    rows, cols = int(sys.argv[3]), int(sys.argv[4])
    rng = np.random.default_rng()  # fresh inputs every run
    np.save(f"{d}/X.npy", (rng.standard_normal((rows, cols)) * 3).astype(np.float32))
    np.save(f"{d}/Y.npy", rng.integers(0, cols, rows).astype(np.int32))
    sys.exit(0)
x = np.load(f"{d}/X.npy").astype(np.float64)
y = np.load(f"{d}/Y.npy")
out = sys.argv[3]
grad, loss = np.load(f"{out}/X.npy"), np.load(f"{out}/loss.npy")
p = np.exp(x - x.max(axis=1, keepdims=True))
p /= p.sum(axis=1, keepdims=True)
ref_grad = p.copy()
ref_grad[np.arange(len(y)), y] -= 1.0
ref_loss = -np.log(p[np.arange(len(y)), y])
for name, got, ref in (("X", grad, ref_grad), ("loss", loss, ref_loss)):
    err = np.abs(got - ref)
    tol = 1e-5 + 1e-5 * np.abs(ref)  # f32 exp/log/division over a few hundred terms
    if not (err <= tol).all():
        i = np.unravel_index(np.argmax(err - tol), err.shape)
        sys.exit(f"{name}{list(i)}: got {got[i]}, reference {ref[i]} (|err| {err[i]:.3g})")
print(f"reference: X ({grad.size} gradients) and loss ({loss.size} rows) match in float64, max |err| "
      f"{max(np.abs(grad - ref_grad).max(), np.abs(loss - ref_loss).max()):.1e} <= tolerance")
