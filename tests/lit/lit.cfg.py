# lit configuration: golden IR tests (FileCheck) and error tests for the tawa command.
import os
import lit.formats

config.name = "tawa"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".tir", ".test", ".py"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in", "not.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tawa_bin, "tests", "lit")
config.substitutions.append(("%tawa", os.path.join(config.tawa_bin, "tawa")))
config.substitutions.append(("%src", config.tawa_src))
config.substitutions.append(("%build", config.tawa_bin))
config.substitutions.append(("FileCheck", config.filecheck))
config.substitutions.append(("%not", "python3 " + os.path.join(os.path.dirname(__file__), "not.py")))

# Triton 3.6.0's Python (scripts/install-deps.sh makes the environment). Where it is missing, a test
# that uses it fails and says so.
triton_venv = os.environ.get("TAWA_TRITON_VENV", os.path.expanduser("~/.cache/tawa/triton-3.6.0"))
triton_python = os.path.join(triton_venv, "bin", "python")
if os.path.exists(triton_python):
    config.substitutions.append(("%triton-python", triton_python))
else:
    config.substitutions.append(("%triton-python", "sh -c 'echo \"no Triton 3.6.0 environment at " + triton_venv +
                                 " (run ./scripts/install-deps.sh)\" >&2; exit 1' --"))

# nvdisasm, for tests that read the SASS ptxas made: $TAWA_NVDISASM, the CUDA toolkit's, or the copy
# Triton's package carries (the toolkit here has none). Where none is found, a test that uses it fails
# and says so.
import glob

nvdisasm = os.environ.get("TAWA_NVDISASM", "")
for cand in [nvdisasm, "/usr/local/cuda/bin/nvdisasm"] + sorted(
        glob.glob(os.path.join(triton_venv, "lib", "python3*", "site-packages", "triton", "backends", "nvidia", "bin", "nvdisasm"))):
    if cand and os.access(cand, os.X_OK):
        config.substitutions.append(("%nvdisasm", cand))
        break
else:
    config.substitutions.append(("%nvdisasm", "sh -c 'echo \"no nvdisasm (set TAWA_NVDISASM, or run ./scripts/install-deps.sh for "
                                 "Triton 3.6.0, which carries one)\" >&2; exit 1' --"))

# The dynamic loader itself, to run tawa with `--inhibit-cache` (as on a machine whose loader has no
# entry for the CUDA toolkit's libraries).
for ld in ("/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"):
    if os.path.exists(ld):
        config.substitutions.append(("%ld-no-cache", ld + " --inhibit-cache"))
        break

# Debian's Python with Debian's numpy (python3-numpy, installed by scripts/install-deps.sh): scripts
# that compute a kernel's reference independently, from the buffers `tawa run --save` wrote.
config.substitutions.append(("%numpy-python", "/usr/bin/python3 -P"))  # -P: an Inputs/random.py must not shadow the standard library
