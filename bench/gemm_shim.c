/* gemm_shim: an LD_PRELOAD library that times every cblas_sgemm call of
 * the program it is loaded into (carve, in make bench) and, at exit,
 * writes one line per call to the file named by $GEMM_SHIM_LOG:
 *   "TA TB M N K SECONDS"
 * bench/run.sh uses it to split carve's step time into the time spent in
 * GEMMs and everything else. It changes nothing in what the program
 * computes; if the program does not call cblas_sgemm through the dynamic
 * linker, the log stays empty and the split is reported as unavailable.
 * Calls may come from several threads at once (carve's fused attention
 * runs its blocks' GEMMs on its own threads): the first lookup and the
 * log are under a lock, the call itself is not. Concurrent calls' times
 * then add up to more than the wall time they took. */
#define _GNU_SOURCE
#include <cblas.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void (*sgemm_fn)(const enum CBLAS_ORDER, const enum CBLAS_TRANSPOSE, const enum CBLAS_TRANSPOSE,
			 const blasint, const blasint, const blasint, const float, const float *, const blasint,
			 const float *, const blasint, const float, float *, const blasint);

struct call {
	char ta, tb;
	int m, n, k;
	double s;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sgemm_fn real_sgemm;
static struct call *calls;
static size_t ncalls, cap;

static void dump(void)
{
	const char *path = getenv("GEMM_SHIM_LOG");
	FILE *f = path ? fopen(path, "w") : NULL;
	if (!f)
		return;
	for (size_t i = 0; i < ncalls; i++)
		fprintf(f, "%c %c %d %d %d %.9f\n", calls[i].ta, calls[i].tb, calls[i].m, calls[i].n, calls[i].k,
			calls[i].s);
	fclose(f);
}

void cblas_sgemm(const enum CBLAS_ORDER order, const enum CBLAS_TRANSPOSE ta, const enum CBLAS_TRANSPOSE tb,
		 const blasint m, const blasint n, const blasint k, const float alpha, const float *a,
		 const blasint lda, const float *b, const blasint ldb, const float beta, float *c, const blasint ldc)
{
	pthread_mutex_lock(&lock);
	if (!real_sgemm) {
		real_sgemm = (sgemm_fn)dlsym(RTLD_NEXT, "cblas_sgemm");
		if (!real_sgemm) {
			fprintf(stderr, "gemm_shim: cblas_sgemm not found\n");
			abort();
		}
		atexit(dump);
	}
	sgemm_fn real = real_sgemm;
	pthread_mutex_unlock(&lock);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	real(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_mutex_lock(&lock);
	if (ncalls == cap) {
		size_t ncap = cap ? 2 * cap : 1024;
		struct call *p = realloc(calls, ncap * sizeof *p);
		if (!p) {
			pthread_mutex_unlock(&lock);
			return; /* stop recording, keep computing */
		}
		calls = p, cap = ncap;
	}
	calls[ncalls++] = (struct call){ ta == CblasTrans ? 't' : 'n', tb == CblasTrans ? 't' : 'n', m, n, k,
					 (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9 };
	pthread_mutex_unlock(&lock);
}
