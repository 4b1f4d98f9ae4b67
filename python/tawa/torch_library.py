"""A tawa kernel as a PyTorch operator (``torch.library``), so that it composes with the rest of
torch: ``torch.compile`` traces through it (its fake implementation gives the outputs' shapes and
dtypes without running anything), ``torch.library.opcheck`` checks its registration, and it runs on
CPU tensors (the executor) and on CUDA tensors (the GPU, on torch's current stream).

    add = tawa.custom_op(
        "mylib::add", add_kernel, schema="(Tensor x, Tensor y) -> Tensor",
        outputs=lambda x, y: torch.empty_like(x),                 # allocates the outputs; the fake impl
        args=lambda x, y, out: (x, y, out, x.numel()),            # the kernel's arguments
        grid=lambda meta: (tawa.cdiv(meta["n"], meta["BLOCK"]),), BLOCK=1024)
    z = add(x, y)                    # also torch.ops.mylib.add(x, y)

Importing this module does not import torch; ``custom_op`` does.
"""

__all__ = ["custom_op"]


def custom_op(name, kernel, *, schema, args, grid, outputs=None, **launch):
    """Defines the operator ``name`` ("namespace::op") with ``schema`` (torch's schema syntax, without
    the name: "(Tensor x, Tensor(a!) out, float alpha) -> ()"), implemented by launching ``kernel``
    (a ``tawa.jit`` / ``tawa.wrap`` kernel).

    ``outputs(*inputs)`` allocates the tensors the op returns (one tensor, a tuple of them, or None
    for an op that only writes inputs its schema marks mutated); it is the op's fake implementation
    as well, so it must compute shapes and dtypes from the inputs' only (``torch.empty_like``,
    ``x.new_empty(...)``), never their values. ``args(*inputs, *outputs)`` gives the kernel's
    arguments in order; ``grid`` and ``launch`` (constexprs, ``num_warps``, ``backend``, ...) are
    what ``kernel[grid](*args, **launch)`` takes. Returns the op (``torch.ops.namespace.op``).
    """
    import torch

    if not isinstance(name, str) or name.count("::") != 1 or not all(name.split("::")):
        raise ValueError(f"custom_op: name {name!r} must be 'namespace::op'")
    if not hasattr(kernel, "__getitem__") or not callable(args) or (outputs is not None and not callable(outputs)):
        raise TypeError("custom_op: kernel must be a tawa kernel, args and outputs functions of the op's inputs")

    def allocate(*inputs):
        return outputs(*inputs) if outputs is not None else None

    def run(*inputs):
        outs = allocate(*inputs)
        written = () if outs is None else outs if isinstance(outs, tuple) else (outs,)
        kernel[grid](*args(*inputs, *written), **launch)
        return outs

    torch.library.define(name, schema)
    # The same implementation for every device: the launch picks the executor for CPU tensors and the
    # GPU for CUDA ones.
    torch.library.impl(name, "CompositeExplicitAutograd")(run)
    torch.library.register_fake(name)(allocate)
    namespace, op = name.split("::")
    return getattr(getattr(torch.ops, namespace), op)
