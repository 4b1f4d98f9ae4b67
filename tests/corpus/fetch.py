"""Fetches the pinned packages of packages.txt into the corpus cache (pip download --no-deps, then
unpacked: a wheel is a zip, an sdist a tar.gz) and prints the cache directory. A package already
unpacked is kept. Usage: fetch.py [CACHE]"""
import os
import subprocess
import sys
import tarfile
import zipfile

here = os.path.dirname(os.path.abspath(__file__))
cache = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("TAWA_CORPUS_CACHE", os.path.expanduser("~/.cache/tawa/corpus"))
os.makedirs(cache, exist_ok=True)
for line in open(os.path.join(here, "packages.txt")):
    spec = line.split("#")[0].strip()
    if not spec:
        continue
    name, version = spec.split("==")
    root = os.path.join(cache, f"{name}-{version}")
    if os.path.exists(os.path.join(root, ".unpacked")):
        continue
    dl = os.path.join(cache, "dl")
    os.makedirs(dl, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
                    "--no-build-isolation", "-d", dl, spec], check=True)
    norm = name.replace("-", "_").lower()
    files = [f for f in os.listdir(dl) if f.lower().replace("-", "_").startswith(f"{norm}_{version}") or
             f.lower().startswith(f"{norm}-{version}")]
    if not files:
        sys.exit(f"fetch: pip downloaded nothing for {spec} into {dl}")
    f = os.path.join(dl, sorted(files)[0])
    os.makedirs(root, exist_ok=True)
    if f.endswith(".whl") or f.endswith(".zip"):
        zipfile.ZipFile(f).extractall(root)
    else:
        with tarfile.open(f) as t:
            for m in t.getmembers():  # plain files and directories only, inside root
                if not (m.isfile() or m.isdir()) or m.name.startswith("/") or ".." in m.name.split("/"):
                    sys.exit(f"fetch: {f} holds an unexpected member {m.name}")
            t.extractall(root)
        inner = [d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))]
        if len(inner) == 1:  # an sdist unpacks into NAME-VERSION/
            for e in os.listdir(os.path.join(root, inner[0])):
                os.rename(os.path.join(root, inner[0], e), os.path.join(root, e))
            os.rmdir(os.path.join(root, inner[0]))
    open(os.path.join(root, ".unpacked"), "w").write(spec + "\n")
print(cache)
