/* Isend/Irecv between every pair of ranks (self included), completed with
 * Waitall, Waitany, Waitsome, Testall, Testany and Testsome. */
#include "mtest.h"

#define NPHASE 6
static const char *phase_name[NPHASE] = {"Waitall", "Waitany", "Waitsome",
                                         "Testall", "Testany", "Testsome"};

static void complete(int phase, int n, MPI_Request *reqs, MPI_Status *sts)
{
    int done = 0, idx, flag, outcount, i, spins = 0;
    int *indices = mtest_malloc(sizeof(int) * (size_t)n);
    MPI_Status st;

    switch (phase) {
    case 0:
        mtest_check_rc("Waitall", MPI_Waitall(n, reqs, sts));
        done = n;
        break;
    case 1:
        while (done < n) {
            MPI_Waitany(n, reqs, &idx, &st);
            if (!mtest_check(idx >= 0 && idx < n, "Waitany index %d", idx))
                break;
            mtest_check(reqs[idx] == MPI_REQUEST_NULL, "Waitany left request %d active", idx);
            sts[idx] = st;
            done++;
        }
        MPI_Waitany(n, reqs, &idx, &st);
        mtest_check_int("Waitany with no active request", idx, MPI_UNDEFINED);
        break;
    case 2:
        while (done < n) {
            MPI_Waitsome(n, reqs, &outcount, indices, sts + n);
            if (!mtest_check(outcount >= 1 && outcount <= n - done, "Waitsome outcount %d",
                             outcount))
                break;
            for (i = 0; i < outcount; i++)
                sts[indices[i]] = sts[n + i];
            done += outcount;
        }
        MPI_Waitsome(n, reqs, &outcount, indices, MPI_STATUSES_IGNORE);
        mtest_check_int("Waitsome with no active request", outcount, MPI_UNDEFINED);
        break;
    case 3:
        flag = 0;
        while (!flag) {
            MPI_Testall(n, reqs, &flag, sts);
            spins++;
        }
        done = n;
        break;
    case 4:
        while (done < n) {
            MPI_Testany(n, reqs, &idx, &flag, &st);
            if (flag) {
                if (!mtest_check(idx >= 0 && idx < n, "Testany index %d", idx))
                    break;
                sts[idx] = st;
                done++;
            }
        }
        MPI_Testany(n, reqs, &idx, &flag, &st);
        mtest_check(flag && idx == MPI_UNDEFINED, "Testany on no active request: flag %d idx %d",
                    flag, idx);
        break;
    default:
        while (done < n) {
            MPI_Testsome(n, reqs, &outcount, indices, sts + n);
            if (!mtest_check(outcount >= 0 && outcount <= n - done, "Testsome outcount %d",
                             outcount))
                break;
            for (i = 0; i < outcount; i++)
                sts[indices[i]] = sts[n + i];
            done += outcount;
        }
        MPI_Testsome(n, reqs, &outcount, indices, MPI_STATUSES_IGNORE);
        mtest_check_int("Testsome with no active request", outcount, MPI_UNDEFINED);
        break;
    }
    for (i = 0; i < n; i++)
        mtest_check(reqs[i] == MPI_REQUEST_NULL, "%s: request %d not freed", phase_name[phase], i);
    free(indices);
}

int main(int argc, char **argv)
{
    static const int sizes[] = {1, 5000, 100000};
    int rank, size, phase, s, p, count;
    unsigned char **sbuf, **rbuf;
    MPI_Request *reqs;
    MPI_Status *sts;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sbuf = mtest_malloc(sizeof(*sbuf) * (size_t)size);
    rbuf = mtest_malloc(sizeof(*rbuf) * (size_t)size);
    for (p = 0; p < size; p++) {
        sbuf[p] = mtest_malloc(100000);
        rbuf[p] = mtest_malloc(100000);
    }
    reqs = mtest_malloc(sizeof(*reqs) * 2 * (size_t)size);
    sts = mtest_malloc(sizeof(*sts) * 4 * (size_t)size);

    for (s = 0; s < 3; s++) {
        int len = sizes[s];
        for (phase = 0; phase < NPHASE; phase++) {
            int tag = s * 10 + phase;
            /* Receives first for half the phases, sends first for the others. */
            for (p = 0; p < size; p++) {
                mtest_fill(sbuf[p], (size_t)len, rank, tag + p);
                memset(rbuf[p], 0, (size_t)len);
                if (phase % 2 == 0) {
                    MPI_Irecv(rbuf[p], len, MPI_BYTE, p, tag, MPI_COMM_WORLD, &reqs[p]);
                    MPI_Isend(sbuf[p], len, MPI_BYTE, p, tag, MPI_COMM_WORLD, &reqs[size + p]);
                } else {
                    MPI_Isend(sbuf[p], len, MPI_BYTE, p, tag, MPI_COMM_WORLD, &reqs[size + p]);
                    MPI_Irecv(rbuf[p], len, MPI_BYTE, p, tag, MPI_COMM_WORLD, &reqs[p]);
                }
            }
            complete(phase, 2 * size, reqs, sts);
            for (p = 0; p < size; p++) {
                count = -1;
                MPI_Get_count(&sts[p], MPI_BYTE, &count);
                mtest_check_int(phase_name[phase], count, len);
                mtest_check_int("status source", sts[p].MPI_SOURCE, p);
                mtest_check_int("status tag", sts[p].MPI_TAG, tag);
                mtest_verify(phase_name[phase], rbuf[p], (size_t)len, p, tag + rank);
            }
        }
    }
    for (p = 0; p < size; p++) {
        free(sbuf[p]);
        free(rbuf[p]);
    }
    free(sbuf);
    free(rbuf);
    free(reqs);
    free(sts);
    return mtest_finalize();
}
