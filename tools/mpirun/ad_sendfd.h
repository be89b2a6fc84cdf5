/* Sending one message with a descriptor (SCM_RIGHTS), for the daemon's channels to its ranks
 * (ad_ep, ad_seg) and to other mpiruns' daemons (ad_ep_remote). Header only: below every
 * module that uses it. */
#ifndef DCFA_AD_SENDFD_H
#define DCFA_AD_SENDFD_H

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* one message of len bytes on a socket, with fd passed as SCM_RIGHTS (-1: none), not waiting
 * (EINTR retried); 0 or -errno (-EIO: sent in part) */
static inline int ad_send_fd(int sock, const void *msg, size_t len, int fd)
{
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {.iov_base = (void *)msg, .iov_len = len};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        memset(cbuf, 0, sizeof cbuf);
        mh.msg_control = cbuf;
        mh.msg_controllen = sizeof cbuf;
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &fd, sizeof fd);
    }
    for (;;) {
        ssize_t n = sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n == (ssize_t)len)
            return 0;
        if (n < 0 && errno == EINTR)
            continue;
        return n < 0 ? -errno : -EIO;
    }
}

#endif
