/* mpirun --isolate net (DCFA_ISOLATE=net): each rank must be in a network namespace with only
 * loopback (no interface but lo, and a connection to an address off this host fails at once
 * with ENETUNREACH, where outside it would be under way), and messages must still flow (the
 * fabric the test list forces: the daemon's sockets, or shm). Fails when run unconfined. */
#include "mtest.h"
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    struct if_nameindex *ifs = if_nameindex();
    int n = 0;
    for (struct if_nameindex *i = ifs; i && i->if_index; i++, n++)
        mtest_check(!strcmp(i->if_name, "lo"), "interface %s is visible", i->if_name);
    mtest_check(ifs && n == 1, "%d interfaces, not just lo", n);
    if (ifs)
        if_freenameindex(ifs);
    /* 192.0.2.1 (TEST-NET-1): no route but a default one could reach it */
    int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(9)};
    inet_pton(AF_INET, "192.0.2.1", &a.sin_addr);
    int rc = connect(s, (struct sockaddr *)&a, sizeof a);
    mtest_check(rc != 0 && errno == ENETUNREACH, "connect to 192.0.2.1: %s (not ENETUNREACH)",
                rc == 0 ? "connected" : strerror(errno));
    close(s);
    /* and the ranks still talk: a ring of sizes eager and rendezvous */
    mtest_ring_sizes(MPI_COMM_WORLD, 1 << 20);
    return mtest_finalize();
}
