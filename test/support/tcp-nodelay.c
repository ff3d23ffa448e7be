/*
 * LD_PRELOAD shim for the pcscd that the PC/SC test rig starts (test/support/pcscd.ts).
 *
 * Why: the vpcd driver sends each message to the virtual card as two writes (the 2-byte length,
 * then the payload) on a socket without TCP_NODELAY. Nagle's algorithm holds the payload until
 * the length is ACKed, and the card side (Node) delays that ACK by ~40 ms, so every APDU costs
 * ~44 ms and a wallet operation of a dozen APDUs takes half a second. Setting TCP_NODELAY on
 * the sockets vpcd gets from accept() brings an APDU down to well under a millisecond, so tests
 * and benchmarks measure our code rather than the kernel's delayed ACK timer.
 *
 * Only accept() and accept4() are wrapped; everything else goes straight to libc. Errors from
 * setsockopt are ignored on purpose: pcscd also accepts on its Unix socket, where TCP_NODELAY
 * does not apply.
 *
 * Build: gcc -shared -fPIC -O2 -o tcp-nodelay.so tcp-nodelay.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

typedef int (*accept_fn)(int, struct sockaddr *, socklen_t *);
typedef int (*accept4_fn)(int, struct sockaddr *, socklen_t *, int);

static void set_nodelay(int fd)
{
    int one = 1;
    int saved_errno = errno; /* the caller must not see a failed setsockopt's errno */
    if (fd >= 0)
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    errno = saved_errno;
}

int accept(int sockfd, struct sockaddr *addr, socklen_t *addrlen)
{
    static accept_fn real_accept;
    if (!real_accept)
        real_accept = (accept_fn) dlsym(RTLD_NEXT, "accept");
    int fd = real_accept(sockfd, addr, addrlen);
    set_nodelay(fd);
    return fd;
}

int accept4(int sockfd, struct sockaddr *addr, socklen_t *addrlen, int flags)
{
    static accept4_fn real_accept4;
    if (!real_accept4)
        real_accept4 = (accept4_fn) dlsym(RTLD_NEXT, "accept4");
    int fd = real_accept4(sockfd, addr, addrlen, flags);
    set_nodelay(fd);
    return fd;
}
