/* A stand-in for libcuda.so.1 that records what a launcher asks of the driver, for tests of the GPU
 * launch path on machines without a GPU. It answers as one sm_90 device; it accepts a module only when
 * the image is an ELF file (a real cubin); it never runs a kernel. Each call that matters appends one
 * line to the file $TAWA_FAKE_CUDA_LOG:
 *   load <bytes>                        cuModuleLoadData
 *   function <name>                     cuModuleGetFunction
 *   smem <bytes>                        cuFuncSetAttribute(max dynamic shared memory)
 *   alloc <bytes> -> <address> | copy | sync | memset | event   (what a zero-copy launch must never do)
 *   map base=0x.. rank=R dims=a,b,.. strides=s,.. box=x,y,.. swizzle=S
 *   launch grid=X,Y,Z block=B smem=N stream=0x.. params=p0,p1,...
 * A launch prints the first 8 bytes of each of its first $TAWA_FAKE_CUDA_PARAMS parameters in hex (a
 * tensor map's first 8 bytes are its base, as this file encodes them). Built by the tests:
 *   cc -shared -fPIC -o libcuda.so.1 recording_libcuda.c */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
enum { kOk = 0, kInvalidImage = 200 };

static void logLine(const char* text) {
  const char* path = getenv("TAWA_FAKE_CUDA_LOG");
  if (!path) return;
  FILE* f = fopen(path, "a");
  if (!f) return;
  fputs(text, f);
  fputc('\n', f);
  fclose(f);
}

CUresult cuInit(unsigned flags) { (void)flags; return kOk; }
CUresult cuDriverGetVersion(int* v) { *v = 13000; return kOk; }
CUresult cuGetErrorName(CUresult r, const char** s) {
  *s = r == kInvalidImage ? "CUDA_ERROR_INVALID_IMAGE" : "CUDA_ERROR_UNKNOWN";
  return kOk;
}
CUresult cuGetErrorString(CUresult r, const char** s) {
  *s = r == kInvalidImage ? "not an ELF cubin" : "unknown error";
  return kOk;
}
CUresult cuDeviceGetCount(int* n) { *n = 1; return kOk; }
CUresult cuDeviceGet(int* d, int ordinal) { *d = ordinal; return kOk; }
CUresult cuDeviceGetName(char* name, int len, int dev) {
  (void)dev;
  strncpy(name, "recording sm_90 test device", (size_t)len);
  return kOk;
}
CUresult cuDeviceGetAttribute(int* v, int attr, int dev) {
  (void)dev;
  switch (attr) {
    case 16: *v = 132; return kOk;
    case 75: *v = 9; return kOk;
    case 76: *v = 0; return kOk;
    case 97: *v = 227 * 1024; return kOk;
    default: *v = 0; return kOk;
  }
}
static int theContext, theModule, theFunction;
CUresult cuDevicePrimaryCtxRetain(void** ctx, int dev) { (void)dev; *ctx = &theContext; return kOk; }
CUresult cuCtxSetCurrent(void* ctx) { (void)ctx; return kOk; }
CUresult cuCtxSynchronize(void) { logLine("sync"); return kOk; }

CUresult cuModuleLoadData(void** m, const void* image) {
  if (memcmp(image, "\177ELF", 4) != 0) return kInvalidImage;
  logLine("load");
  *m = &theModule;
  return kOk;
}
CUresult cuModuleUnload(void* m) { (void)m; return kOk; }
CUresult cuModuleGetFunction(void** f, void* m, const char* name) {
  char line[512];
  (void)m;
  snprintf(line, sizeof line, "function %s", name);
  logLine(line);
  *f = &theFunction;
  return kOk;
}
CUresult cuFuncSetAttribute(void* f, int attr, int v) {
  char line[64];
  (void)f;
  if (attr == 8) {
    snprintf(line, sizeof line, "smem %d", v);
    logLine(line);
  }
  return kOk;
}
CUresult cuMemAlloc_v2(unsigned long long* p, size_t n) {
  char line[96];
  *p = (unsigned long long)(uintptr_t)malloc(n ? n : 1);
  snprintf(line, sizeof line, "alloc %zu -> %#llx", n, *p);
  logLine(line);
  return kOk;
}
CUresult cuMemFree_v2(unsigned long long p) { free((void*)(uintptr_t)p); return kOk; }
CUresult cuMemcpyHtoD_v2(unsigned long long d, const void* s, size_t n) { (void)d; (void)s; (void)n; logLine("copy"); return kOk; }
CUresult cuMemcpyDtoH_v2(void* d, unsigned long long s, size_t n) { (void)d; (void)s; (void)n; logLine("copy"); return kOk; }
CUresult cuMemsetD8_v2(unsigned long long d, unsigned char v, size_t n) { (void)d; (void)v; (void)n; logLine("memset"); return kOk; }

CUresult cuTensorMapEncodeTiled(void* map, int type, unsigned rank, void* base, const unsigned long long* dims,
                                const unsigned long long* strides, const unsigned* box, const unsigned* elemStrides,
                                int interleave, int swizzle, int promotion, int fill) {
  char line[512];
  int n;
  (void)elemStrides; (void)interleave; (void)promotion; (void)fill;
  memset(map, 0, 128);
  memcpy(map, &base, sizeof base);
  if (!getenv("TAWA_FAKE_CUDA_LOG")) return kOk;  /* not recording: as cheap as a stand-in can be (launch-cost benchmarks) */
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
  const char* count = getenv("TAWA_FAKE_CUDA_PARAMS");
  int np = count ? atoi(count) : 0;
  int n;
  if (!getenv("TAWA_FAKE_CUDA_LOG")) return kOk;
  n = snprintf(line, sizeof line, "launch grid=%u,%u,%u block=%u smem=%u stream=%#llx params=", gx, gy, gz, bx * by * bz, smem,
                   (unsigned long long)(uintptr_t)stream);
  (void)f; (void)extra;
  for (int i = 0; i < np && n < 1900; ++i) {
    unsigned long long v = 0;
    memcpy(&v, params[i], sizeof v);
    n += snprintf(line + n, sizeof line - (size_t)n, "%s%#llx", i ? "," : "", v);
  }
  logLine(line);
  return kOk;
}
CUresult cuEventCreate(void** e, unsigned flags) { (void)flags; logLine("event"); *e = &theFunction; return kOk; }
CUresult cuEventDestroy_v2(void* e) { (void)e; return kOk; }
CUresult cuEventRecord(void* e, void* stream) { (void)e; (void)stream; logLine("event"); return kOk; }
CUresult cuEventSynchronize(void* e) { (void)e; logLine("sync"); return kOk; }
CUresult cuEventElapsedTime(float* ms, void* a, void* b) { (void)a; (void)b; *ms = 1.0f; return kOk; }
