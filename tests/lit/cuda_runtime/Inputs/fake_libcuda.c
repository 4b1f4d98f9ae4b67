/* A stand-in for libcuda.so.1 in tests on machines without a GPU: it exports every driver entry point
 * tawa's Driver resolves. Initialising and querying the device succeed (one device, compute capability
 * 9.0, 132 multiprocessors, 227 KiB of opt-in shared memory); everything that would touch a GPU --
 * loading a module, allocating, copying, launching, timing -- fails with CUDA_ERROR_NOT_SUPPORTED (801).
 * So `tawa tune FILE.py --kernel K` gets past its GPU probe (its measurements run $TAWA_SELF, which a
 * test points at a fake runner), and `tawa run --backend cuda` shows how a failing driver call is
 * reported. Built by the tests themselves: cc -shared -fPIC -o libcuda.so.1 fake_libcuda.c */
#include <stddef.h>
#include <string.h>

typedef int CUresult;
enum { kOk = 0, kNotSupported = 801 };

CUresult cuInit(unsigned flags) { (void)flags; return kOk; }
CUresult cuDriverGetVersion(int* v) { *v = 13000; return kOk; }
CUresult cuGetErrorName(CUresult r, const char** s) {
  *s = r == kNotSupported ? "CUDA_ERROR_NOT_SUPPORTED" : "CUDA_ERROR_UNKNOWN";
  return kOk;
}
CUresult cuGetErrorString(CUresult r, const char** s) {
  *s = r == kNotSupported ? "the fake test driver does not run kernels" : "unknown error";
  return kOk;
}
CUresult cuDeviceGetCount(int* n) { *n = 1; return kOk; }
CUresult cuDeviceGet(int* d, int ordinal) { *d = ordinal; return kOk; }
CUresult cuDeviceGetName(char* name, int len, int dev) {
  (void)dev;
  strncpy(name, "fake sm_90 test device", (size_t)len);
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
static int theContext;
CUresult cuDevicePrimaryCtxRetain(void** ctx, int dev) { (void)dev; *ctx = &theContext; return kOk; }
CUresult cuCtxSetCurrent(void* ctx) { (void)ctx; return kOk; }
CUresult cuCtxSynchronize(void) { return kOk; }

/* Everything below would need a GPU. */
CUresult cuModuleLoadData(void** m, const void* image) { (void)m; (void)image; return kNotSupported; }
CUresult cuModuleUnload(void* m) { (void)m; return kNotSupported; }
CUresult cuModuleGetFunction(void** f, void* m, const char* name) { (void)f; (void)m; (void)name; return kNotSupported; }
CUresult cuFuncSetAttribute(void* f, int attr, int v) { (void)f; (void)attr; (void)v; return kNotSupported; }
CUresult cuMemAlloc_v2(unsigned long long* p, size_t n) { (void)p; (void)n; return kNotSupported; }
CUresult cuMemFree_v2(unsigned long long p) { (void)p; return kNotSupported; }
CUresult cuMemcpyHtoD_v2(unsigned long long d, const void* s, size_t n) { (void)d; (void)s; (void)n; return kNotSupported; }
CUresult cuMemcpyDtoH_v2(void* d, unsigned long long s, size_t n) { (void)d; (void)s; (void)n; return kNotSupported; }
CUresult cuMemsetD8_v2(unsigned long long d, unsigned char v, size_t n) { (void)d; (void)v; (void)n; return kNotSupported; }
CUresult cuTensorMapEncodeTiled(void* map, int type, unsigned rank, void* base, const void* dims, const void* strides,
                                const void* box, const void* elemStrides, int interleave, int swizzle, int promotion,
                                int fill) {
  (void)map; (void)type; (void)rank; (void)base; (void)dims; (void)strides; (void)box; (void)elemStrides;
  (void)interleave; (void)swizzle; (void)promotion; (void)fill;
  return kNotSupported;
}
CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned smem,
                        void* stream, void** params, void** extra) {
  (void)f; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)smem; (void)stream; (void)params; (void)extra;
  return kNotSupported;
}
CUresult cuEventCreate(void** e, unsigned flags) { (void)e; (void)flags; return kNotSupported; }
CUresult cuEventDestroy_v2(void* e) { (void)e; return kNotSupported; }
CUresult cuEventRecord(void* e, void* stream) { (void)e; (void)stream; return kNotSupported; }
CUresult cuEventSynchronize(void* e) { (void)e; return kNotSupported; }
CUresult cuEventElapsedTime(float* ms, void* a, void* b) { (void)ms; (void)a; (void)b; return kNotSupported; }
