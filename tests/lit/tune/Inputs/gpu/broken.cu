__global__ void broken(float* x) { x[threadIdx.x] = ; }
