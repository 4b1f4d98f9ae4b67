# Runs a command and succeeds only when it exits with status 1 (a user error): a crash (negative
# status or 2, an internal error) fails the test, unlike LLVM's `not`, which accepts any failure.
import subprocess
import sys

rc = subprocess.call(sys.argv[1:])
if rc != 1:
    sys.stderr.write(f"not.py: expected exit status 1, got {rc}\n")
    sys.exit(1)
