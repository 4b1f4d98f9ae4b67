// a reduction-shaped loop: many loads, one accumulator
double f(const double* a, long n) { double s = 0; for (long i = 0; i < n; ++i) s += a[i] * a[i]; return s; }
