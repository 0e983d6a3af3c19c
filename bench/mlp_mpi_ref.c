/* mlp_mpi_ref: hand-written MPI + cblas reference for the MLP training step
 * of bench/mlp_step.cir (x: 2048x768 is a parameter, w1: 768x3072,
 * w2: 3072x768, y = gelu(x@w1)@w2, loss = mean(y*y), SGD), on 2 ranks
 * (any rank count that divides the split dims works).
 *
 *   --mode mp   Megatron: w1 split on its column dim, w2 on its row dim.
 *               forward  h = gelu(x@w1_r), y = all_reduce(h@w2_r)
 *               backward dy = 2y/n (replicated), dw2_r = h^T@dy,
 *                        dh = dy@w2_r^T, dz = dh*gelu'(z), dw1_r = x^T@dz,
 *                        dx = all_reduce(dz@w1_r^T)
 *   --mode dp   data parallel: x split on rows, full weights, local
 *               forward/backward, one all_reduce over [dw1 | dw2] (one
 *               contiguous buffer, written in place by the GEMMs); dx
 *               belongs to the rank's own rows and is not reduced.
 * Then SGD on the local pieces (x, w1, w2). The GEMMs use transposition
 * flags, never copies; all-reduces are in place.
 *
 * Parameters start from a deterministic function of their global index,
 * so both modes compute the same losses (printed for comparison).
 * Timing: MPI_Barrier, then the step; a step's time is the slowest rank's;
 * the median over --steps steps after --warmup steps is reported.
 * Run with one BLAS thread per rank (OPENBLAS_NUM_THREADS=1).
 * The last line (rank 0) is machine-readable:
 *   "result: mode=M ranks=R ms=T loss0=L loss_last=L" */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 2048, D = 768, F = 3072 };
static const float LR = 0.01f;

static int rank, nranks;

static void die(const char *msg)
{
	fprintf(stderr, "mlp_mpi_ref: rank %d: %s\n", rank, msg);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

static void check(int rc, const char *what)
{
	if (rc != MPI_SUCCESS) {
		char s[MPI_MAX_ERROR_STRING + 64];
		int len = 0;
		MPI_Error_string(rc, s, &len);
		fprintf(stderr, "mlp_mpi_ref: rank %d: %s failed: %.*s\n", rank, what, len, s);
		MPI_Abort(MPI_COMM_WORLD, 1);
		exit(1);
	}
}

static size_t allocated; /* bytes of every buffer: the reference's memory per rank */

static float *falloc(size_t n)
{
	allocated += n * sizeof(float);
	float *p = aligned_alloc(64, ((n * sizeof(float) + 63) / 64) * 64);
	if (!p)
		die("out of memory");
	memset(p, 0, n * sizeof(float));
	return p;
}

/* A deterministic value in [-a, a] from a tensor id and a global index. */
static float init_val(uint32_t tensor, uint64_t idx, float a)
{
	uint64_t s = idx * 0x9E3779B97F4A7C15ull + tensor * 0xD1B54A32D192ED03ull;
	s ^= s >> 31;
	s *= 0xBF58476D1CE4E5B9ull;
	s ^= s >> 29;
	return ((float)(s >> 40) / 16777216.0f * 2.0f - 1.0f) * a;
}

/* Fill the local block [r0, r0+nr) x [c0, c0+nc) of a global [*, cols] tensor. */
static void init_block(float *p, uint32_t tensor, int cols, int r0, int nr, int c0, int nc, float a)
{
	for (int i = 0; i < nr; i++)
		for (int j = 0; j < nc; j++)
			p[(size_t)i * nc + j] = init_val(tensor, (uint64_t)(r0 + i) * cols + (c0 + j), a);
}

/* The elementwise work, written as an expert would: branch-free and
 * vectorisable (AVX2+FMA clone where the CPU has it, selected at load time;
 * the build passes -O3 -fno-trapping-math -fno-math-errno so that GCC
 * vectorises these loops). gelu(z) = z Phi(z) and gelu'(z) = Phi(z) + z phi(z),
 * Phi(z) = 0.5 (1 + erf(z / sqrt 2)), phi(z) = exp(-z^2 / 2) / sqrt(2 pi), erf by
 * Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7): one exp serves both. */
#define VEC __attribute__((target_clones("arch=x86-64-v3", "default")))

/* exp(x) for x <= 0: 2^n p(r), |r| <= ln2 / 2, p of degree 6; clamped at -87. */
static inline float exp_le0(float x)
{
	x = x < -87.0f ? -87.0f : x;
	float t = x * 1.44269504f + 12582912.0f; /* round to nearest via 1.5 * 2^23 */
	float n = t - 12582912.0f;
	float r = x - n * 0.693145752f - n * 1.42860677e-6f;
	float p = 1.0f + r * (1.0f + r * (0.5f + r * (0.166666672f + r * (0.0416666679f +
			r * (0.00833333377f + r * 0.00138888892f)))));
	int32_t bits = ((int32_t)n + 127) * (1 << 23);
	float scale;
	memcpy(&scale, &bits, sizeof scale);
	return p * scale;
}

/* Phi(z) into *cdf, phi(z) into *pdf */
static inline void normal_cdf_pdf(float z, float *cdf, float *pdf)
{
	float a = fabsf(z) * 0.70710678f;
	float t = 1.0f / (1.0f + 0.3275911f * a);
	float e = exp_le0(-a * a);
	float half_erfc = 0.5f * e * t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f +
			t * (-1.453152027f + t * 1.061405429f))));
	*cdf = z >= 0.0f ? 1.0f - half_erfc : half_erfc;
	*pdf = e * 0.39894228f;
}

VEC static void gelu_fwd(float *restrict h, const float *restrict z, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		float c, p;
		normal_cdf_pdf(z[i], &c, &p);
		h[i] = z[i] * c;
	}
}

/* d *= gelu'(z), in place: dh becomes dz */
VEC static void gelu_bwd(float *restrict d, const float *restrict z, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		float c, p;
		normal_cdf_pdf(z[i], &c, &p);
		d[i] *= c + z[i] * p;
	}
}

static void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, const float *a, int lda,
		 const float *b, int ldb, float *c, int ldc)
{
	cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	check(MPI_Init(&argc, &argv), "MPI_Init");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
	check(MPI_Comm_size(MPI_COMM_WORLD, &nranks), "MPI_Comm_size");

	const char *mode = "mp";
	int steps = 10, warmup = 2;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mode") && i + 1 < argc)
			mode = argv[++i];
		else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
			steps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
			warmup = atoi(argv[++i]);
		else {
			if (rank == 0)
				fprintf(stderr, "usage: mpirun -n R mlp_mpi_ref [--mode mp|dp] [--steps N] [--warmup W]\n");
			MPI_Finalize();
			return 2;
		}
	}
	int mp = !strcmp(mode, "mp");
	if ((!mp && strcmp(mode, "dp")) || steps < 1 || warmup < 0) {
		if (rank == 0)
			fprintf(stderr, "mlp_mpi_ref: --mode is mp or dp, --steps >= 1, --warmup >= 0\n");
		MPI_Finalize();
		return 2;
	}
	if ((mp && F % nranks) || (!mp && B % nranks))
		die("the rank count must divide the split dim");

	/* Local shapes: rows of x/h/y (bl) and columns of w1 / rows of w2 (fl). */
	const int bl = mp ? B : B / nranks, fl = mp ? F / nranks : F;
	const int b0 = mp ? 0 : rank * bl, f0 = mp ? rank * fl : 0;
	const float n_total = (float)B * D;

	float *x = falloc((size_t)bl * D), *w1 = falloc((size_t)D * fl), *w2 = falloc((size_t)fl * D);
	init_block(x, 1, D, b0, bl, 0, D, 1.0f);
	init_block(w1, 2, F, 0, D, f0, fl, 0.02f);
	init_block(w2, 3, D, f0, fl, 0, D, 0.02f);

	float *z = falloc((size_t)bl * fl), *h = falloc((size_t)bl * fl), *y = falloc((size_t)bl * D);
	float *dh = falloc((size_t)bl * fl), *dx = falloc((size_t)bl * D);
	/* dw1 and dw2 share one buffer so that data parallel reduces them with one call. */
	float *dw = falloc((size_t)D * fl + (size_t)fl * D), *dw1 = dw, *dw2 = dw + (size_t)D * fl;
	float *dy = y; /* dy = 2y/n overwrites y in place */

	int total = warmup + steps;
	double *times = calloc(total, sizeof(double));
	double *losses = calloc(total, sizeof(double));
	if (!times || !losses)
		die("out of memory");

	for (int s = 0; s < total; s++) {
		check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
		double t0 = MPI_Wtime();

		/* forward */
		gemm(CblasNoTrans, CblasNoTrans, bl, fl, D, x, D, w1, fl, z, fl);
		gelu_fwd(h, z, (size_t)bl * fl);
		gemm(CblasNoTrans, CblasNoTrans, bl, D, fl, h, fl, w2, D, y, D);
		if (mp)
			check(MPI_Allreduce(MPI_IN_PLACE, y, bl * D, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
			      "MPI_Allreduce(y)");

		/* loss = mean(y*y) (accumulated in double); dy = 2y/n, in place */
		double sq = cblas_dsdot(bl * D, y, 1, y, 1);
		cblas_sscal(bl * D, 2.0f / n_total, dy, 1);
		if (!mp) /* the loss only: one double, not part of the gradient path */
			check(MPI_Allreduce(MPI_IN_PLACE, &sq, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
			      "MPI_Allreduce(loss)");
		losses[s] = sq / n_total;

		/* backward */
		gemm(CblasTrans, CblasNoTrans, fl, D, bl, h, fl, dy, D, dw2, D);    /* dw2 = h^T @ dy */
		gemm(CblasNoTrans, CblasTrans, bl, fl, D, dy, D, w2, D, dh, fl);    /* dh = dy @ w2^T */
		gelu_bwd(dh, z, (size_t)bl * fl);                                   /* dz = dh * gelu'(z) */
		gemm(CblasTrans, CblasNoTrans, D, fl, bl, x, D, dh, fl, dw1, fl);   /* dw1 = x^T @ dz */
		gemm(CblasNoTrans, CblasTrans, bl, D, fl, dh, fl, w1, fl, dx, D);   /* dx = dz @ w1^T */
		if (mp)
			check(MPI_Allreduce(MPI_IN_PLACE, dx, bl * D, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
			      "MPI_Allreduce(dx)");
		else
			check(MPI_Allreduce(MPI_IN_PLACE, dw, 2 * D * fl, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
			      "MPI_Allreduce(dw1|dw2)");

		/* SGD */
		cblas_saxpy(bl * D, -LR, dx, 1, x, 1);
		cblas_saxpy(D * fl, -LR, dw1, 1, w1, 1);
		cblas_saxpy(fl * D, -LR, dw2, 1, w2, 1);

		double dt = MPI_Wtime() - t0;
		check(MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce(time)");
		times[s] = dt;
	}

	if (rank == 0) {
		double *t = times + warmup;
		qsort(t, steps, sizeof *t, cmp_double);
		double med = steps % 2 ? t[steps / 2] : 0.5 * (t[steps / 2 - 1] + t[steps / 2]);
		printf("mlp_mpi_ref %s: %d ranks, OpenBLAS %d thread(s) per rank, median of %d steps after %d warm-up:"
		       " %.2f ms/step (min %.2f, max %.2f); loss %.9f -> %.9f\n",
		       mp ? "megatron" : "data-parallel", nranks, openblas_get_num_threads(), steps, warmup,
		       med * 1e3, t[0] * 1e3, t[steps - 1] * 1e3, losses[0], losses[total - 1]);
		printf("result: mode=%s ranks=%d ms=%.3f loss0=%.9f loss_last=%.9f bytes=%zu\n", mode, nranks, med * 1e3,
		       losses[0], losses[total - 1], allocated);
	}
	free(times), free(losses);
	free(x), free(w1), free(w2), free(z), free(h), free(y), free(dh), free(dx), free(dw);
	MPI_Finalize();
	return 0;
}
