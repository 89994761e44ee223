/*
 * The tracer's CPU/GPU split (issue 20): run with MPITOPO_CUDART pointing
 * at fake_cudart, whose cudaPointerGetAttributes calls the arrays below
 * device, managed and pinned host memory (this program exports them:
 * ENABLE_EXPORTS). Every process r of n >= 4 sends, offsets modulo n:
 *
 *   to r+1: MPI_Send 8 MPI_INT from device memory (32 B, GPU), MPI_Isend
 *           3 MPI_INT from the stack (12 B, CPU)
 *   to r+2: a persistent MPI_Send_init of 4 MPI_DOUBLE from managed
 *           memory started twice (2 x 32 B, GPU), MPI_Send 5 MPI_CHAR from
 *           pinned host memory (5 B, CPU)
 *   to r-1: MPI_Sendrecv of 2 MPI_INT from device memory (8 B, GPU)
 *   to r+3: MPI_Ssend 1 MPI_INT from the heap (4 B, CPU)
 *
 * so C_cpu = expected_gpu_cpu_4.txt, C_gpu = expected_gpu_gpu_4.txt, and
 * without the runtime every message is CPU traffic, expected_gpu_all_4.txt
 * (for n = 4, where r+3 = r-1). Prints "PASS trace_gpu_prog" on rank 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read by fake_cudart through dlsym: not static. */
extern double fake_device_memory[64], fake_managed_memory[64];
extern char fake_pinned_memory[64];
extern const size_t fake_device_size, fake_managed_size, fake_pinned_size;
double fake_device_memory[64], fake_managed_memory[64];
char fake_pinned_memory[64];
const size_t fake_device_size = sizeof fake_device_memory;
const size_t fake_managed_size = sizeof fake_managed_memory;
const size_t fake_pinned_size = sizeof fake_pinned_memory;

static int n, r, errors;

static int at(int off)
{
    return ((r + off) % n + n) % n;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    if (n < 4) {
        if (r == 0)
            printf("FAIL trace_gpu_prog: needs at least 4 processes, not %d\n", n);
        MPI_Finalize();
        return 1;
    }
    int *dev_ints = (int *)fake_device_memory;
    double *managed = fake_managed_memory;
    int in[16], stack[3] = {r, r, r};
    double din[4];
    char cin[5];
    int *heap = malloc(sizeof *heap);
    *heap = r;
    for (int i = 0; i < 8; i++)
        dev_ints[i] = r * 10 + i;

    MPI_Request rq[4];
    MPI_Irecv(in, 8, MPI_INT, at(-1), 1, MPI_COMM_WORLD, &rq[0]);
    MPI_Irecv(in + 8, 3, MPI_INT, at(-1), 2, MPI_COMM_WORLD, &rq[1]);
    MPI_Isend(stack, 3, MPI_INT, at(1), 2, MPI_COMM_WORLD, &rq[2]);
    MPI_Send(dev_ints, 8, MPI_INT, at(1), 1, MPI_COMM_WORLD);
    MPI_Waitall(3, rq, MPI_STATUSES_IGNORE);
    if (in[7] != at(-1) * 10 + 7 || in[10] != at(-1))
        errors++;

    MPI_Request ps, pr;
    MPI_Send_init(managed, 4, MPI_DOUBLE, at(2), 3, MPI_COMM_WORLD, &ps);
    MPI_Recv_init(din, 4, MPI_DOUBLE, at(-2), 3, MPI_COMM_WORLD, &pr);
    for (int i = 0; i < 2; i++) {
        managed[3] = r + i;
        MPI_Start(&pr);
        MPI_Start(&ps);
        MPI_Wait(&ps, MPI_STATUS_IGNORE);
        MPI_Wait(&pr, MPI_STATUS_IGNORE);
        if (din[3] != at(-2) + i)
            errors++;
    }
    MPI_Request_free(&ps);
    MPI_Request_free(&pr);

    memcpy(fake_pinned_memory, "abcd", 5);
    fake_pinned_memory[0] = (char)('a' + r);
    MPI_Irecv(cin, 5, MPI_CHAR, at(-2), 4, MPI_COMM_WORLD, &rq[0]);
    MPI_Send(fake_pinned_memory, 5, MPI_CHAR, at(2), 4, MPI_COMM_WORLD);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    if (cin[0] != 'a' + at(-2))
        errors++;

    MPI_Sendrecv(dev_ints, 2, MPI_INT, at(-1), 5, in, 2, MPI_INT, at(1), 5, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (in[0] != at(1) * 10)
        errors++;

    int hin = -1;
    MPI_Irecv(&hin, 1, MPI_INT, at(-3), 6, MPI_COMM_WORLD, &rq[0]);
    MPI_Ssend(heap, 1, MPI_INT, at(3), 6, MPI_COMM_WORLD);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    if (hin != at(-3))
        errors++;
    free(heap);

    int all = 0;
    MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (r == 0)
        printf("%s trace_gpu_prog\n", all ? "FAIL" : "PASS");
    MPI_Finalize();
    return all != 0;
}
