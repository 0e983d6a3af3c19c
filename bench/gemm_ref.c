/* gemm_ref: the BLAS floor of the MLP training step of bench/mlp_step.cir.
 *
 * Times cblas_sgemm on exactly the six GEMMs of one step (x: 2048x768,
 * w1: 768x3072, w2: 3072x768), row-major, with the transposition flags a
 * real implementation passes (no copies, no explicit transposes):
 *   forward   z   = x  @ w1     nn  2048x3072x768
 *             y   = h  @ w2     nn  2048x768x3072
 *   backward  dh  = dy @ w2^T   nt  2048x3072x768
 *             dw2 = h^T @ dy    tn  3072x768x2048
 *             dx  = dz @ w1^T   nt  2048x768x3072
 *             dw1 = x^T @ dz    tn  768x3072x2048
 * The six run in step order, repeatedly; each GEMM's median over the
 * measured repetitions is reported, and their sum is the time a step
 * would take if it did nothing but GEMMs.
 *
 * usage: gemm_ref [REPS]   (threads from OPENBLAS_NUM_THREADS)
 * The last line is machine-readable: "result: sum_s=S gflop=G gflops=R threads=T".
 *
 * gemm_ref --replay LOG CALLS [REPS]: the first CALLS lines of a
 * bench/gemm_shim.c log (one step of a program: "TA TB M N K SECONDS"),
 * those of at least 64 MFLOP (fused attention's block GEMMs, run on
 * threads of their own, are left out), called back to back in their order,
 * each on operands of its own; the best of REPS rounds (default 5). Last
 * line: "replay: calls=C gflop=G best_s=S gflops=R threads=T".
 * Links OpenBLAS directly, not libcarve. */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { B = 2048, D = 768, F = 3072, NGEMM = 6 };

struct gemm {
	const char *name, *what;
	CBLAS_TRANSPOSE ta, tb;
	int m, n, k;
	const float *a, *b;
	float *c;
	int lda, ldb, ldc;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static float *alloc_fill(size_t n, uint32_t seed)
{
	float *p = aligned_alloc(64, ((n * sizeof(float) + 63) / 64) * 64);
	if (!p) {
		fprintf(stderr, "gemm_ref: out of memory\n");
		exit(1);
	}
	uint32_t s = seed * 2654435761u + 1;
	for (size_t i = 0; i < n; i++) {
		s = s * 1664525u + 1013904223u;
		p[i] = ((float)(s >> 8) / 16777216.0f - 0.5f) * 0.04f;
	}
	return p;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The big GEMMs of one logged step, replayed alone, each on operands of
 * its own (as in the step, where they are spread over the program's
 * memory, not one buffer that stays in cache). */
static int replay(const char *path, long calls, int reps)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "gemm_ref: cannot open '%s'\n", path);
		return 1;
	}
	struct call { char ta, tb; int m, n, k; float *a, *b, *c; } *c = calloc((size_t)calls, sizeof *c);
	if (!c) {
		fprintf(stderr, "gemm_ref: out of memory\n");
		return 1;
	}
	long n = 0;
	double flop = 0;
	char ta, tb;
	int m, nn, k;
	double sec;
	for (long line = 0; line < calls && fscanf(f, " %c %c %d %d %d %lf", &ta, &tb, &m, &nn, &k, &sec) == 6; line++) {
		double fl = 2.0 * m * nn * k;
		if (fl < 64e6 || m <= 0 || nn <= 0 || k <= 0)
			continue;
		c[n++] = (struct call){ ta, tb, m, nn, k, alloc_fill((size_t)m * k, 21), alloc_fill((size_t)k * nn, 22),
					alloc_fill((size_t)m * nn, 23) };
		flop += fl;
	}
	fclose(f);
	double best = 1e30;
	for (int r = -1; r < reps; r++) { /* r = -1: warm-up (pages, thread pool) */
		double t0 = now();
		for (long i = 0; i < n; i++) {
			CBLAS_TRANSPOSE A = c[i].ta == 't' ? CblasTrans : CblasNoTrans, B = c[i].tb == 't' ? CblasTrans : CblasNoTrans;
			cblas_sgemm(CblasRowMajor, A, B, c[i].m, c[i].n, c[i].k, 1.0f, c[i].a, A == CblasTrans ? c[i].m : c[i].k,
				    c[i].b, B == CblasTrans ? c[i].k : c[i].n, 0.0f, c[i].c, c[i].n);
		}
		double dt = now() - t0;
		if (r >= 0 && dt < best)
			best = dt;
	}
	int threads = openblas_get_num_threads();
	printf("replay: calls=%ld gflop=%.4f best_s=%.6f gflops=%.2f threads=%d\n", n, flop * 1e-9, best,
	       n ? flop / best * 1e-9 : 0.0, threads);
	for (long i = 0; i < n; i++)
		free(c[i].a), free(c[i].b), free(c[i].c);
	free(c);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--replay")) {
		long calls = argc > 3 ? atol(argv[3]) : 0;
		int reps = argc > 4 ? atoi(argv[4]) : 5;
		if (argc < 4 || calls < 1 || reps < 1 || reps > 1000) {
			fprintf(stderr, "usage: gemm_ref --replay LOG CALLS [REPS]\n");
			return 2;
		}
		return replay(argv[2], calls, reps);
	}
	int reps = argc > 1 ? atoi(argv[1]) : 7;
	if (reps < 1 || reps > 1000) {
		fprintf(stderr, "usage: gemm_ref [REPS]   (1..1000, default 7)\n");
		return 2;
	}
	float *x = alloc_fill((size_t)B * D, 1), *w1 = alloc_fill((size_t)D * F, 2);
	float *w2 = alloc_fill((size_t)F * D, 3), *z = alloc_fill((size_t)B * F, 4);
	float *h = alloc_fill((size_t)B * F, 5), *y = alloc_fill((size_t)B * D, 6);
	float *dy = alloc_fill((size_t)B * D, 7), *dh = alloc_fill((size_t)B * F, 8);
	float *dz = alloc_fill((size_t)B * F, 9), *dx = alloc_fill((size_t)B * D, 10);
	float *dw1 = alloc_fill((size_t)D * F, 11), *dw2 = alloc_fill((size_t)F * D, 12);

	const CBLAS_TRANSPOSE N = CblasNoTrans, T = CblasTrans;
	struct gemm g[NGEMM] = {
		{ "fwd x@w1", "z = x @ w1", N, N, B, F, D, x, w1, z, D, F, F },
		{ "fwd h@w2", "y = h @ w2", N, N, B, D, F, h, w2, y, F, D, D },
		{ "bwd dy@w2^T", "dh = dy @ w2^T", N, T, B, F, D, dy, w2, dh, D, D, F },
		{ "bwd h^T@dy", "dw2 = h^T @ dy", T, N, F, D, B, h, dy, dw2, F, D, D },
		{ "bwd dz@w1^T", "dx = dz @ w1^T", N, T, B, D, F, dz, w1, dx, F, F, D },
		{ "bwd x^T@dz", "dw1 = x^T @ dz", T, N, D, F, B, x, dz, dw1, D, F, F },
	};
	double *t[NGEMM];
	for (int i = 0; i < NGEMM; i++)
		t[i] = calloc(reps, sizeof(double));

	for (int r = -1; r < reps; r++) /* r = -1: warm-up (thread pool, pages) */
		for (int i = 0; i < NGEMM; i++) {
			double t0 = now();
			cblas_sgemm(CblasRowMajor, g[i].ta, g[i].tb, g[i].m, g[i].n, g[i].k, 1.0f,
				    g[i].a, g[i].lda, g[i].b, g[i].ldb, 0.0f, g[i].c, g[i].ldc);
			double dt = now() - t0;
			if (r >= 0)
				t[i][r] = dt;
		}

	int threads = openblas_get_num_threads();
	printf("config: %s\n", openblas_get_config());
	printf("cblas_sgemm on the MLP step shapes: OpenBLAS %d thread%s, median of %d runs\n",
	       threads, threads == 1 ? "" : "s", reps);
	printf("  %-12s %-16s %2s %16s %10s %10s\n", "GEMM", "computes", "op", "MxNxK", "time", "GFLOP/s");
	double sum = 0, flop = 0;
	for (int i = 0; i < NGEMM; i++) {
		double med = median(t[i], reps);
		double f = 2.0 * g[i].m * g[i].n * g[i].k;
		char shape[32], ops[3] = { g[i].ta == T ? 't' : 'n', g[i].tb == T ? 't' : 'n', 0 };
		snprintf(shape, sizeof shape, "%dx%dx%d", g[i].m, g[i].n, g[i].k);
		printf("  %-12s %-16s %2s %16s %7.2f ms %10.1f\n", g[i].name, g[i].what, ops, shape,
		       med * 1e3, f / med * 1e-9);
		sum += med;
		flop += f;
	}
	printf("  %-12s %-16s %2s %16s %7.2f ms %10.1f\n", "sum", "", "", "", sum * 1e3, flop / sum * 1e-9);
	printf("result: sum_s=%.6f gflop=%.4f gflops=%.2f threads=%d\n", sum, flop * 1e-9, flop / sum * 1e-9,
	       threads);

	for (int i = 0; i < NGEMM; i++)
		free(t[i]);
	free(x), free(w1), free(w2), free(z), free(h), free(y);
	free(dy), free(dh), free(dz), free(dx), free(dw1), free(dw2);
	return 0;
}
