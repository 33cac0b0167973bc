/* SPDX-License-Identifier: Apache-2.0 */
/* http_conn.c - connection limits of kerfd's listeners: per peer (uid on the Unix socket,
 * address over TCP), in total with headroom kept for admins, and a whole-request deadline
 * (docs/DAEMON.md "Connections") */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http.h"

/* One accepted connection (MHD's socket context). All fields under conn_mu. */
typedef struct kconn {
        struct kconn *prev, *next;
        int fd;
        bool tcp;
        uint64_t peer;     /* uid (Unix socket) or address (TCP) */
        bool admin;        /* uid 0 / kerfd's uid / group kerf (checked when it matters) */
        bool busy;         /* a complete request is being answered: no deadline */
        bool quiet;        /* answered early (413): a cut only ends the stream */
        bool dead;         /* refused or cut: closing, not counted */
        uint64_t since_ms; /* start of the request being read (monotonic) */
} kconn;

static pthread_mutex_t conn_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t conn_cv = PTHREAD_COND_INITIALIZER;
static kconn *conns;
static unsigned n_conns;
static pthread_t reaper;
static bool reaper_on, reaper_stop;
static uint64_t refused_total, cut_total;

static uint64_t mono_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Writes a short answer straight to a socket MHD has not written to, then ends the stream;
 * MHD sees the end and closes the connection (and calls NOTIFY_CLOSED, which unlinks it). */
static void refuse(int fd, unsigned status, const char *reason, const char *code, const char *msg)
{
        char out[512], body[256];
        int bl = snprintf(body, sizeof(body), "{\"error\":\"%s\",\"message\":\"%s\"}\n", code, msg);
        int l = snprintf(out, sizeof(out),
                         "HTTP/1.1 %u %s\r\nConnection: close\r\nContent-Type: application/json\r\n"
                         "Content-Length: %d\r\n\r\n%s",
                         status, reason, bl, body);
        if (l > 0 && l < (int)sizeof(out))
                (void)send(fd, out, (size_t)l, MSG_DONTWAIT | MSG_NOSIGNAL);
        (void)shutdown(fd, SHUT_RDWR);
}

static void count(const kconn *c, unsigned *same_peer, unsigned *others)
{
        *same_peer = *others = 0;
        for (kconn *o = conns; o; o = o->next) {
                if (o == c || o->tcp != c->tcp || o->dead)
                        continue;
                if (o->peer == c->peer)
                        (*same_peer)++;
                if (!o->admin)
                        (*others)++;
        }
}

static void started(kerfd_node *n, struct MHD_Connection *conn, void **socket_context)
{
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        const kerfd_config *cfg = &n->cfg;
        kconn *c;
        struct ucred uc = {0};
        socklen_t l = sizeof(uc), sl = sizeof(struct sockaddr_storage);
        struct sockaddr_storage ss;
        unsigned same, non_admin;
        bool fast_admin = false;

        if (!ci)
                return;
        c = calloc(1, sizeof(*c));
        if (!c) {
                (void)shutdown(ci->connect_fd, SHUT_RDWR);
                return;
        }
        c->fd = ci->connect_fd;
        if (getsockname(c->fd, (struct sockaddr *)&ss, &sl) == 0 && ss.ss_family == AF_UNIX &&
            getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &uc, &l) == 0) {
                c->peer = uc.uid;
                fast_admin = uc.uid == 0 || uc.uid == geteuid();
        } else {
                const union MHD_ConnectionInfo *ai =
                    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
                const struct sockaddr *sa = ai ? ai->client_addr : NULL;
                c->tcp = true;
                if (sa && sa->sa_family == AF_INET)
                        c->peer = ((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr;
                else if (sa && sa->sa_family == AF_INET6)
                        memcpy(&c->peer,
                               ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr +
                                   8,
                               sizeof(c->peer));
        }
        c->admin = fast_admin;
        c->since_ms = mono_ms();
        /* Counted and linked in one step, so that two accepts of one peer on two threads
         * cannot both slip under its share. */
        pthread_mutex_lock(&conn_mu);
        count(c, &same, &non_admin);
        c->next = conns;
        if (conns)
                conns->prev = c;
        conns = c;
        n_conns++;
        pthread_mutex_unlock(&conn_mu);
        *socket_context = c;
        /* Over a limit: only an admin peer on the socket may go on (NSS only on this path). */
        if (!c->admin && (same >= cfg->max_conns_per_peer || non_admin >= cfg->max_conns)) {
                bool admin = !c->tcp && kerfd__peer_admin(uc.uid, uc.gid);
                bool per_peer = same >= cfg->max_conns_per_peer;
                pthread_mutex_lock(&conn_mu);
                if (admin) {
                        c->admin = true;
                } else {
                        refuse(c->fd, 503, "Service Unavailable", "too_many_connections",
                               per_peer ? "too many connections from your peer "
                                          "(limits.max_connections_per_peer)"
                                        : "too many connections (limits.max_connections)");
                        c->busy = c->dead = true; /* closing: no deadline, not counted */
                        refused_total++;
                }
                pthread_mutex_unlock(&conn_mu);
        }
}

void kerfd__conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                        enum MHD_ConnectionNotificationCode toe)
{
        kconn *c;
        if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
                started(cls, conn, socket_context);
                return;
        }
        c = *socket_context;
        if (!c)
                return;
        /* CLOSED comes before MHD closes the descriptor: once unlinked here, the reaper can
         * no longer shut down a descriptor number that was reused. */
        pthread_mutex_lock(&conn_mu);
        if (c->prev)
                c->prev->next = c->next;
        else
                conns = c->next;
        if (c->next)
                c->next->prev = c->prev;
        n_conns--;
        pthread_mutex_unlock(&conn_mu);
        free(c);
        *socket_context = NULL;
}

void kerfd__conn_quiet(struct MHD_Connection *conn)
{
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        kconn *c = ci ? ci->socket_context : NULL;
        if (!c)
                return;
        pthread_mutex_lock(&conn_mu);
        c->quiet = true;
        pthread_mutex_unlock(&conn_mu);
}

void kerfd__conn_busy(struct MHD_Connection *conn, bool busy)
{
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        kconn *c = ci ? ci->socket_context : NULL;
        if (!c)
                return;
        pthread_mutex_lock(&conn_mu);
        c->busy = busy;
        c->quiet = false;
        if (!busy)
                c->since_ms = mono_ms(); /* keep-alive: the next request's clock starts now */
        pthread_mutex_unlock(&conn_mu);
}

/* Cuts every connection whose request did not arrive whole within limits.request_timeout_s. */
static void *reap(void *arg)
{
        kerfd_node *n = arg;
        uint64_t limit = (uint64_t)n->cfg.request_timeout_s * 1000;
        sigset_t all;

        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, NULL);
        pthread_mutex_lock(&conn_mu);
        while (!reaper_stop) {
                struct timespec ts;
                uint64_t now = mono_ms();
                for (kconn *c = conns; c; c = c->next) {
                        if (c->busy || c->dead || now - c->since_ms < limit)
                                continue;
                        if (c->quiet)
                                (void)shutdown(c->fd, SHUT_RDWR);
                        else
                                refuse(c->fd, 408, "Request Timeout", "request_timeout",
                                       "the request did not arrive whole within "
                                       "limits.request_timeout_s");
                        c->dead = true;
                        cut_total++;
                }
                clock_gettime(CLOCK_REALTIME, &ts);
                ts.tv_nsec += 250 * 1000000L;
                if (ts.tv_nsec >= 1000000000L) {
                        ts.tv_sec++;
                        ts.tv_nsec -= 1000000000L;
                }
                pthread_cond_timedwait(&conn_cv, &conn_mu, &ts);
        }
        pthread_mutex_unlock(&conn_mu);
        return NULL;
}

int kerfd__conn_start(kerfd_node *n)
{
        int r;
        reaper_stop = false;
        if ((r = pthread_create(&reaper, NULL, reap, n)) != 0)
                return -r;
        reaper_on = true;
        return 0;
}

void kerfd__conn_stop(void)
{
        if (!reaper_on)
                return;
        pthread_mutex_lock(&conn_mu);
        reaper_stop = true;
        pthread_cond_signal(&conn_cv);
        pthread_mutex_unlock(&conn_mu);
        pthread_join(reaper, NULL);
        reaper_on = false;
}

void kerfd__conn_stats(uint64_t *ret_open, uint64_t *ret_refused, uint64_t *ret_cut)
{
        pthread_mutex_lock(&conn_mu);
        *ret_open = n_conns;
        *ret_cut = cut_total;
        *ret_refused = refused_total;
        pthread_mutex_unlock(&conn_mu);
}
