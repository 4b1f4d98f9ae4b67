// an elementwise loop with integer work and stores
void g(int* a, const int* b, long n) { for (long i = 0; i < n; ++i) a[i] = (b[i] * 7) ^ (b[i] >> 3); }
