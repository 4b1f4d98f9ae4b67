/* A stand-in for libcuda.so.1 in tests on machines without a GPU: it exports every driver entry point
 * tawa's Driver resolves, and answers as one device of compute capability 9.0 (132 multiprocessors,
 * 227 KiB of opt-in shared memory). It runs no kernel. Two modes:
 *   - by default everything that would touch a GPU -- loading a module, allocating, copying,
 *     launching, timing -- fails with CUDA_ERROR_NOT_SUPPORTED (801): `tawa tune FILE.py --kernel K`
 *     gets past its GPU probe (its measurements run $TAWA_SELF, which a test points at a fake
 *     runner), and `tawa run --backend cuda` shows how a failing driver call is reported;
 *   - with TAWA_FAKE_CUDA_RUN=1 those calls succeed (a module must be an ELF image, a real cubin;
 *     memory comes from malloc, copies and fills are real, and no kernel touches it), and each call that matters appends
 *     a line to $TAWA_FAKE_CUDA_LOG when that is set (nothing is formatted otherwise):
 *       load | function <name> | smem <bytes>      module, kernel, dynamic shared memory
 *       alloc <bytes> -> <address> | copy | sync | memset | event   (what a zero-copy launch never does)
 *       map base=0x.. rank=R type=T dims=a,b,.. strides=s,.. box=x,y,.. swizzle=S
 *       launch grid=X,Y,Z block=B smem=N stream=0x.. params=p0,p1,...
 *     A launch prints the first 8 bytes of each of its first $TAWA_FAKE_CUDA_PARAMS parameters in hex
 *     (a tensor map's first 8 bytes are its base, as this file encodes them); a comma-separated list
 *     gives the count of each launch in turn, its last entry every later launch's (kernels of other
 *     parameter counts in one process).
 * Built by the tests themselves: cc -shared -fPIC -o libcuda.so.1 fake_libcuda.c */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
enum { kOk = 0, kInvalidImage = 200, kNotSupported = 801 };

static int running(void) {
  const char* r = getenv("TAWA_FAKE_CUDA_RUN");
  return r && strcmp(r, "1") == 0;
}
static int recording(void) { return running() && getenv("TAWA_FAKE_CUDA_LOG") != NULL; }
static void logLine(const char* text) {
  FILE* f;
  if (!recording()) return;
  f = fopen(getenv("TAWA_FAKE_CUDA_LOG"), "a");
  if (!f) return;
  fputs(text, f);
  fputc('\n', f);
  fclose(f);
}

CUresult cuInit(unsigned flags) { (void)flags; return kOk; }
CUresult cuDriverGetVersion(int* v) { *v = 13000; return kOk; }
CUresult cuGetErrorName(CUresult r, const char** s) {
  *s = r == kNotSupported ? "CUDA_ERROR_NOT_SUPPORTED" : r == kInvalidImage ? "CUDA_ERROR_INVALID_IMAGE" : "CUDA_ERROR_UNKNOWN";
  return kOk;
}
CUresult cuGetErrorString(CUresult r, const char** s) {
  *s = r == kNotSupported ? "the fake test driver does not run kernels" : r == kInvalidImage ? "not an ELF cubin" : "unknown error";
  return kOk;
}
CUresult cuDeviceGetCount(int* n) { *n = 1; return kOk; }
CUresult cuDeviceGet(int* d, int ordinal) { *d = ordinal; return kOk; }
CUresult cuDeviceGetName(char* name, int len, int dev) {
  (void)dev;
  strncpy(name, running() ? "recording sm_90 test device" : "fake sm_90 test device", (size_t)len);
  return kOk;
}
CUresult cuDeviceGetAttribute(int* v, int attr, int dev) {
  (void)dev;
  switch (attr) {
    case 16: *v = 132; return kOk;          /* multiprocessors */
    case 75: *v = 9; return kOk;            /* compute capability major */
    case 76: *v = 0; return kOk;            /* minor */
    case 97: *v = 227 * 1024; return kOk;   /* opt-in shared memory per block */
    default: *v = 0; return kOk;
  }
}
static int theContext, theModule, theFunction, theEvent;
CUresult cuDevicePrimaryCtxRetain(void** ctx, int dev) { (void)dev; *ctx = &theContext; return kOk; }
CUresult cuCtxSetCurrent(void* ctx) { (void)ctx; return kOk; }
CUresult cuCtxSynchronize(void) { logLine("sync"); return kOk; }

/* Everything below would need a GPU. */
CUresult cuModuleLoadData(void** m, const void* image) {
  if (!running()) return kNotSupported;
  if (memcmp(image, "\177ELF", 4) != 0) return kInvalidImage;
  logLine("load");
  *m = &theModule;
  return kOk;
}
CUresult cuModuleUnload(void* m) { (void)m; return running() ? kOk : kNotSupported; }
CUresult cuModuleGetFunction(void** f, void* m, const char* name) {
  char line[512];
  (void)m;
  if (!running()) return kNotSupported;
  snprintf(line, sizeof line, "function %s", name);
  logLine(line);
  *f = &theFunction;
  return kOk;
}
CUresult cuFuncSetAttribute(void* f, int attr, int v) {
  char line[64];
  (void)f;
  if (!running()) return kNotSupported;
  if (attr == 8) { /* max dynamic shared memory */
    snprintf(line, sizeof line, "smem %d", v);
    logLine(line);
  }
  return kOk;
}
CUresult cuMemAlloc_v2(unsigned long long* p, size_t n) {
  char line[96];
  if (!running()) return kNotSupported;
  *p = (unsigned long long)(uintptr_t)malloc(n ? n : 1);
  snprintf(line, sizeof line, "alloc %zu -> %#llx", n, *p);
  logLine(line);
  return kOk;
}
CUresult cuMemFree_v2(unsigned long long p) {
  if (!running()) return kNotSupported;
  free((void*)(uintptr_t)p);
  return kOk;
}
CUresult cuMemcpyHtoD_v2(unsigned long long d, const void* s, size_t n) {
  if (!running()) return kNotSupported;
  memcpy((void*)(uintptr_t)d, s, n);
  logLine("copy");
  return kOk;
}
CUresult cuMemcpyDtoH_v2(void* d, unsigned long long s, size_t n) {
  if (!running()) return kNotSupported;
  memcpy(d, (const void*)(uintptr_t)s, n);
  logLine("copy");
  return kOk;
}
CUresult cuMemsetD8_v2(unsigned long long d, unsigned char v, size_t n) {
  if (!running()) return kNotSupported;
  memset((void*)(uintptr_t)d, v, n);
  logLine("memset");
  return kOk;
}
CUresult cuTensorMapEncodeTiled(void* map, int type, unsigned rank, void* base, const unsigned long long* dims,
                                const unsigned long long* strides, const unsigned* box, const unsigned* elemStrides,
                                int interleave, int swizzle, int promotion, int fill) {
  char line[512];
  int n;
  (void)elemStrides; (void)interleave; (void)promotion; (void)fill;
  if (!running()) return kNotSupported;
  memset(map, 0, 128);
  memcpy(map, &base, sizeof base);
  if (!recording()) return kOk;  /* as cheap as a stand-in can be (launch-cost benchmarks) */
  n = snprintf(line, sizeof line, "map base=%#llx rank=%u type=%d dims=", (unsigned long long)(uintptr_t)base, rank, type);
  for (unsigned i = 0; i < rank && n < 400; ++i) n += snprintf(line + n, sizeof line - (size_t)n, "%s%llu", i ? "," : "", dims[i]);
  n += snprintf(line + n, sizeof line - (size_t)n, " strides=");
  for (unsigned i = 0; i + 1 < rank && n < 440; ++i) n += snprintf(line + n, sizeof line - (size_t)n, "%s%llu", i ? "," : "", strides[i]);
  n += snprintf(line + n, sizeof line - (size_t)n, " box=");
  for (unsigned i = 0; i < rank && n < 480; ++i) n += snprintf(line + n, sizeof line - (size_t)n, "%s%u", i ? "," : "", box[i]);
  snprintf(line + n, sizeof line - (size_t)n, " swizzle=%d", swizzle);
  logLine(line);
  return kOk;
}
CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned smem,
                        void* stream, void** params, void** extra) {
  char line[2048];
  static int launches = 0;
  const char* count = getenv("TAWA_FAKE_CUDA_PARAMS");
  int np = 0, n;
  (void)f; (void)extra;
  if (!running()) return kNotSupported;
  if (!recording()) return kOk;
  for (int i = 0; count; ++i) {  /* this launch's entry of the list, or its last */
    np = atoi(count);
    count = strchr(count, ',');
    if (!count || i == launches) break;
    ++count;
  }
  ++launches;
  n = snprintf(line, sizeof line, "launch grid=%u,%u,%u block=%u smem=%u stream=%#llx params=", gx, gy, gz, bx * by * bz, smem,
               (unsigned long long)(uintptr_t)stream);
  for (int i = 0; i < np && n < 1900; ++i) {
    unsigned long long v = 0;
    memcpy(&v, params[i], sizeof v);
    n += snprintf(line + n, sizeof line - (size_t)n, "%s%#llx", i ? "," : "", v);
  }
  logLine(line);
  return kOk;
}
CUresult cuEventCreate(void** e, unsigned flags) {
  (void)flags;
  if (!running()) return kNotSupported;
  logLine("event");
  *e = &theEvent;
  return kOk;
}
CUresult cuEventDestroy_v2(void* e) { (void)e; return running() ? kOk : kNotSupported; }
CUresult cuEventRecord(void* e, void* stream) {
  (void)e; (void)stream;
  if (!running()) return kNotSupported;
  logLine("event");
  return kOk;
}
CUresult cuEventSynchronize(void* e) {
  (void)e;
  if (!running()) return kNotSupported;
  logLine("sync");
  return kOk;
}
CUresult cuEventElapsedTime(float* ms, void* a, void* b) {
  (void)a; (void)b;
  if (!running()) return kNotSupported;
  *ms = 1.0f;
  return kOk;
}
