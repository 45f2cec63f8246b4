/* nowlab-ring: a rigid MPI job in C, the kind of user binary the pool cannot run.
 *
 *   mpiexec -n P nowlab-ring WORK_REF_S ITERATIONS
 *
 * WORK_REF_S reference-seconds of work in all, split evenly among the ranks: float64
 * multiplies of a 256-wide vector by a constant in place (as workloads/compute.py), at
 * workloads/reference.py's C_MULTIPLY_PER_REF_S (a compiled multiply is several times
 * cheaper than numpy's, so it has its own rate; a unit test keeps the two equal). Each of the
 * ITERATIONS steps computes this rank's share, then passes a token one step round the ring.
 * Rank 0 prints `nowlab-started <epoch s>` once MPI is up (workloads/wire/rigid.py: the host
 * measures the launch from it) and one JSON line at the end. Built with mpicc in the
 * workstation image (containers/Dockerfile); tests build it on the host.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

#define C_MULTIPLY_PER_REF_S 2.0e9
#define CHUNK 256

static double now_epoch(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

static double multiply(long long n, double *acc) {
    const double factor = 1.0 + 1.0 / 1073741824.0; /* 1 + 2^-30, as workloads/compute.py */
    long long full = n / CHUNK, rest = n % CHUNK;
    for (long long k = 0; k < full; k++)
        for (int i = 0; i < CHUNK; i++) acc[i] *= factor;
    for (long long i = 0; i < rest; i++) acc[i] *= factor;
    return acc[0];
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (argc != 3) {
        if (rank == 0) fprintf(stderr, "usage: nowlab-ring WORK_REF_S ITERATIONS\n");
        MPI_Finalize();
        return 2;
    }
    double work = atof(argv[1]);
    long iterations = atol(argv[2]);
    if (!(work >= 0) || iterations < 1) {
        if (rank == 0) fprintf(stderr, "nowlab-ring: WORK_REF_S must be >= 0 and ITERATIONS >= 1\n");
        MPI_Finalize();
        return 2;
    }
    if (rank == 0) {
        printf("nowlab-started %.6f\n", now_epoch());
        fflush(stdout);
    }
    long long mults = (long long)(work / p / iterations * C_MULTIPLY_PER_REF_S + 0.5);
    double acc[CHUNK];
    for (int i = 0; i < CHUNK; i++) acc[i] = 1.0;
    long long token = 0, got = 0;
    double compute_s = 0.0, sink = 0.0;
    for (long it = 0; it < iterations; it++) {
        double t = MPI_Wtime();
        sink += multiply(mults, acc);
        compute_s += MPI_Wtime() - t;
        token += 1;
        if (p > 1) {
            MPI_Sendrecv(&token, 1, MPI_LONG_LONG, (rank + 1) % p, 7, &got, 1, MPI_LONG_LONG,
                         (rank - 1 + p) % p, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token = got;
        }
    }
    long long total = 0;
    MPI_Reduce(&token, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("{\"kernel\": \"ring.c\", \"ranks\": %d, \"work_ref_s\": %g, \"iterations\": %ld, "
               "\"compute_s\": %.6f, \"token\": %lld, \"sink\": %g}\n", p, work, iterations, compute_s, total, sink);
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
