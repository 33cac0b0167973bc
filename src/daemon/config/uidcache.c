/* SPDX-License-Identifier: Apache-2.0 */
/* uidcache.c - who is an admin, cached: NSS lookups (getpwuid_r, getgrouplist) run before
 * n->mu is taken (peer identification), in the ticker outside it (refresh), or at config load;
 * deciding code under n->mu reads the cache (docs/DAEMON.md "The daemon mutex") */
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "uidcache.h"

#define SLOTS       512
#define PROBE       8
#define IDLE_MS     (10 * 60 * 1000) /* an unpinned entry unused this long is not refreshed */
#define MAX_REFRESH 64               /* lookups per refresh pass */

typedef struct ent {
        long long uid; /* -1: free */
        bool admin, pinned;
        char name[64];
        uint64_t at_ms, used_ms;
} ent;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER; /* a leaf: no NSS, no other lock */
static ent tab[SLOTS];
static bool inited, have_gid;
static gid_t kgid;
static uint64_t last_refresh_ms;
static atomic_ulong locked_misses;

static int nss_resolve(uid_t uid, gid_t kerf_gid, char *name, size_t len, bool *admin)
{
        struct passwd pw, *pp = NULL;
        char buf[4096];
        gid_t groups[256];
        int ng = 256;

        *admin = false;
        name[0] = '\0';
        if (getpwuid_r(uid, &pw, buf, sizeof(buf), &pp) != 0 || !pp)
                return -1;
        snprintf(name, len, "%s", pp->pw_name);
        if (pp->pw_gid == kerf_gid) {
                *admin = true;
                return 0;
        }
        if (getgrouplist(pp->pw_name, pp->pw_gid, groups, &ng) < 0)
                return -1;
        for (int i = 0; i < ng; i++)
                if (groups[i] == kerf_gid)
                        *admin = true;
        return 0;
}

static uint64_t mono_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static kerfd_uid_resolver resolver = nss_resolve;
static uint64_t (*now_ms)(void) = mono_ms;

static void clear_locked(void)
{
        for (unsigned i = 0; i < SLOTS; i++)
                tab[i] = (ent){.uid = -1};
}

void kerfd__uidcache_init(void)
{
        struct group gr, *gp = NULL;
        char buf[8192];

        pthread_mutex_lock(&mu);
        if (!inited) {
                clear_locked();
                if (getgrnam_r("kerf", &gr, buf, sizeof(buf), &gp) == 0 && gp) {
                        kgid = gp->gr_gid;
                        have_gid = true;
                }
                inited = true;
        }
        pthread_mutex_unlock(&mu);
}

bool kerfd__uidcache_kerf_gid(gid_t *gid)
{
        bool h;
        kerfd__uidcache_init();
        pthread_mutex_lock(&mu);
        h = have_gid;
        *gid = kgid;
        pthread_mutex_unlock(&mu);
        return h;
}

/* The slot of uid, or NULL; with `make`, a free slot or the least recently used of its probe
 * window, reset for uid. Under mu. */
static ent *slot(long long uid, bool make)
{
        unsigned h = (unsigned)((unsigned long long)uid % SLOTS);
        ent *victim = NULL;

        for (unsigned k = 0; k < PROBE; k++) {
                ent *e = &tab[(h + k) % SLOTS];
                if (e->uid == uid)
                        return e;
                /* a free slot, else the unpinned one used longest ago */
                if (!victim || (victim->uid >= 0 &&
                                (e->uid < 0 ||
                                 (!e->pinned && (victim->pinned || e->used_ms < victim->used_ms)))))
                        victim = e;
        }
        if (!make)
                return NULL;
        *victim = (ent){.uid = uid};
        return victim;
}

/* Looks uid up (NSS, no lock held) and stores the answer; touch: a use (not a refresh). */
static bool resolve(long long uid, gid_t g, bool pin, bool touch, char *name, size_t len)
{
        char nm[64];
        bool admin = false;
        ent *e;

        if (resolver((uid_t)uid, g, nm, sizeof(nm), &admin) < 0)
                admin = false;
        pthread_mutex_lock(&mu);
        e = slot(uid, true);
        e->admin = admin;
        e->pinned = e->pinned || pin;
        snprintf(e->name, sizeof(e->name), "%s", nm);
        e->at_ms = now_ms();
        if (touch || !e->used_ms)
                e->used_ms = e->at_ms;
        pthread_mutex_unlock(&mu);
        if (name)
                snprintf(name, len, "%s", nm);
        return admin;
}

bool kerfd__uid_admin(long long uid, long long gid, bool may_block, char *name, size_t len)
{
        uint64_t now;
        gid_t g;
        ent *e;

        if (name && len)
                name[0] = '\0';
        if (uid < 0)
                return false;
        if (uid == 0 || (uid_t)uid == geteuid())
                return true;
        if (!kerfd__uidcache_kerf_gid(&g))
                return false;
        if (gid >= 0 && (gid_t)gid == g && !name)
                return true;
        pthread_mutex_lock(&mu);
        now = now_ms();
        if ((e = slot(uid, false)) && (!may_block || now - e->at_ms < KERFD_UIDCACHE_TTL_MS)) {
                bool admin = e->admin || (gid >= 0 && (gid_t)gid == g);
                e->used_ms = now;
                if (name)
                        snprintf(name, len, "%s", e->name);
                pthread_mutex_unlock(&mu);
                return admin;
        }
        pthread_mutex_unlock(&mu);
        if (!may_block)
                atomic_fetch_add(&locked_misses, 1);
        return resolve(uid, g, false, true, name, len) || (gid >= 0 && (gid_t)gid == g);
}

void kerfd__uidcache_warm(long long uid, bool pin)
{
        gid_t g;
        ent *e;
        bool fresh = false;

        if (uid <= 0 || (uid_t)uid == geteuid() || !kerfd__uidcache_kerf_gid(&g))
                return;
        pthread_mutex_lock(&mu);
        if ((e = slot(uid, false))) {
                fresh = now_ms() - e->at_ms < KERFD_UIDCACHE_TTL_MS;
                e->pinned = e->pinned || pin;
        }
        pthread_mutex_unlock(&mu);
        if (!fresh)
                resolve(uid, g, pin, true, NULL, 0);
}

bool kerfd__uidcache_due(void)
{
        bool due;
        pthread_mutex_lock(&mu);
        due = inited && have_gid && now_ms() - last_refresh_ms >= KERFD_UIDCACHE_TTL_MS / 2;
        pthread_mutex_unlock(&mu);
        return due;
}

void kerfd__uidcache_refresh(void)
{
        long long uids[MAX_REFRESH];
        unsigned nu = 0;
        uint64_t now;
        gid_t g;

        if (!kerfd__uidcache_kerf_gid(&g))
                return;
        pthread_mutex_lock(&mu);
        now = last_refresh_ms = now_ms();
        for (unsigned i = 0; i < SLOTS && nu < MAX_REFRESH; i++) {
                ent *e = &tab[i];
                if (e->uid < 0 || now - e->at_ms < KERFD_UIDCACHE_TTL_MS / 2)
                        continue;
                if (e->pinned || now - e->used_ms < IDLE_MS)
                        uids[nu++] = e->uid;
        }
        pthread_mutex_unlock(&mu);
        /* what it looks up is fresh again before it goes stale (TTL/2 between passes) */
        for (unsigned i = 0; i < nu; i++)
                resolve(uids[i], g, false, false, NULL, 0);
}

unsigned long kerfd__uidcache_locked_misses(void)
{
        return atomic_load(&locked_misses);
}

void kerfd__uidcache_test_hooks(kerfd_uid_resolver r, uint64_t (*clock_ms)(void),
                                long long kerf_gid)
{
        pthread_mutex_lock(&mu);
        resolver = r ? r : nss_resolve;
        now_ms = clock_ms ? clock_ms : mono_ms;
        clear_locked();
        inited = true;
        have_gid = kerf_gid >= 0;
        kgid = (gid_t)kerf_gid;
        last_refresh_ms = 0;
        pthread_mutex_unlock(&mu);
        atomic_store(&locked_misses, 0);
}
