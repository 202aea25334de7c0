/* hpc_perm.c - read bits carried over from the sources, and the owner's
 * credentials taken per thread (hpc_perm.h). */
#define _GNU_SOURCE       /* getgrouplist */
#include "hpc_perm.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- credentials ------------------------------------------------------ */

/* The process's own ids, which a thread goes back to. */
static hpc_creds self;

static void self_init(void)
{
    static gsize once;
    if (!g_once_init_enter(&once))
        return;
    self.uid = (uint32_t)geteuid();
    self.gid = (uint32_t)getegid();
    int n = getgroups(0, NULL);
    self.groups = g_new0(gid_t, n > 0 ? n : 1);
    self.ngroups = n > 0 ? getgroups(n, self.groups) : 0;
    if (self.ngroups < 0)
        self.ngroups = 0;
    g_once_init_leave(&once, 1);
}

static void creds_lookup(hpc_creds *cr, uint32_t uid, uint32_t fallback_gid)
{
    struct passwd pw, *res = NULL;
    char buf[4096];
    cr->uid = uid;
    cr->gid = fallback_gid;
    if (getpwuid_r((uid_t)uid, &pw, buf, sizeof buf, &res) != 0 || !res) {
        cr->groups = g_new0(gid_t, 1);
        cr->groups[0] = (gid_t)fallback_gid;
        cr->ngroups = 1;
        return;
    }
    cr->gid = (uint32_t)pw.pw_gid;
    int n = 32;
    cr->groups = g_new0(gid_t, n);
    while (getgrouplist(pw.pw_name, pw.pw_gid, cr->groups, &n) < 0 && n > 0 && n <= 65536)
        cr->groups = g_renew(gid_t, cr->groups, n);
    cr->ngroups = n > 0 && n <= 65536 ? n : 0;
}

const hpc_creds *hpc_creds_of(uint32_t uid, uint32_t fallback_gid)
{
    static GMutex lock;
    static GHashTable *known;    /* uid -> hpc_creds *, for the process's life */
    g_mutex_lock(&lock);
    if (!known)
        known = g_hash_table_new(g_direct_hash, g_direct_equal);
    hpc_creds *cr = g_hash_table_lookup(known, GUINT_TO_POINTER(uid + 1u));
    if (!cr) {
        cr = g_new0(hpc_creds, 1);
        creds_lookup(cr, uid, fallback_gid);
        g_hash_table_insert(known, GUINT_TO_POINTER(uid + 1u), cr);
    }
    g_mutex_unlock(&lock);
    return cr;
}

gboolean hpc_creds_needed(uint32_t uid)
{
    return geteuid() == 0 && uid != 0;
}

/* Raw system calls: the kernel keeps credentials per thread, and glibc's
 * setgroups would change every thread of the daemon. */
static int thread_ids(const hpc_creds *cr)
{
    if (syscall(SYS_setgroups, (size_t)cr->ngroups, cr->groups) != 0)
        return -1;
    (void)syscall(SYS_setfsgid, (gid_t)cr->gid);
    if ((uint32_t)syscall(SYS_setfsgid, (gid_t)-1) != cr->gid)
        return -1;
    (void)syscall(SYS_setfsuid, (uid_t)cr->uid);
    return (uint32_t)syscall(SYS_setfsuid, (uid_t)-1) == cr->uid ? 0 : -1;
}

int hpc_creds_enter(const hpc_creds *cr, hpc_creds_saved *saved)
{
    saved->active = 0;
    if (!cr)
        return 0;
    self_init();
    if (thread_ids(cr) != 0) {
        int e = errno ? errno : EPERM;
        saved->active = 1;
        hpc_creds_leave(saved);
        errno = e;
        return -1;
    }
    saved->active = 1;
    return 0;
}

void hpc_creds_leave(hpc_creds_saved *saved)
{
    if (!saved->active)
        return;
    saved->active = 0;
    /* the uid first: with it come back the rights to set the rest */
    (void)syscall(SYS_setfsuid, (uid_t)self.uid);
    (void)syscall(SYS_setfsgid, (gid_t)self.gid);
    if (syscall(SYS_setgroups, (size_t)self.ngroups, self.groups) != 0 ||
        (uint32_t)syscall(SYS_setfsuid, (uid_t)-1) != self.uid)
        g_error("hpcmount: cannot restore the daemon's own credentials: %s", g_strerror(errno));
}

/* ---- read bits -------------------------------------------------------- */

enum { CLS_USER, CLS_GROUP, CLS_OTHER };

static gboolean grants(const hpc_perm_ref *ref, int cls, gboolean dir)
{
    uint32_t bit = (dir ? 0100u : 0400u) >> (3 * cls);
    return (ref->mode & bit) != 0;
}

static gboolean member(const hpc_creds *cr, uint32_t gid)
{
    if (cr->gid == gid)
        return TRUE;
    for (int i = 0; i < cr->ngroups; i++)
        if ((uint32_t)cr->groups[i] == gid)
            return TRUE;
    return FALSE;
}

/* Which class of ref applies to a user of the node's class: the owner is
 * known exactly; a member of the node's group, or anyone else, may be
 * ref's owner (unless that is the node's owner), in ref's group or not
 * (unless ref's group is the node's: then group members are in it and
 * others are not).  The class keeps its bit when every case grants it. */
uint32_t hpc_perm_narrow(uint32_t bits, const hpc_creds *owner, uint32_t node_uid,
                         uint32_t node_gid, const hpc_perm_ref *ref, gboolean dir)
{
    gboolean may_own = ref->uid != node_uid && !grants(ref, CLS_USER, dir);
    gboolean same_group = ref->gid == node_gid;
    if ((bits & 0400) && node_uid != 0) {
        int cls = ref->uid == node_uid ? CLS_USER : member(owner, ref->gid) ? CLS_GROUP : CLS_OTHER;
        if (!grants(ref, cls, dir))
            bits &= ~0400u;
    }
    if ((bits & 0040) && (may_own || !grants(ref, CLS_GROUP, dir) ||
                          (!same_group && !grants(ref, CLS_OTHER, dir))))
        bits &= ~0040u;
    if ((bits & 0004) && (may_own || !grants(ref, CLS_OTHER, dir) ||
                          (!same_group && !grants(ref, CLS_GROUP, dir))))
        bits &= ~0004u;
    return bits;
}

static hpc_perm_ref ref_of(const struct stat *st)
{
    return (hpc_perm_ref){ (uint32_t)st->st_uid, (uint32_t)st->st_gid, (uint32_t)st->st_mode };
}

/* Append the directories above the absolute path p, up to "/". */
static gboolean chain_above(GArray *refs, const char *p)
{
    char *dir = g_path_get_dirname(p);
    gboolean ok = TRUE;
    for (;;) {
        struct stat st;
        if (stat(dir, &st) != 0) {
            ok = FALSE;
            break;
        }
        hpc_perm_ref r = ref_of(&st);
        g_array_append_val(refs, r);
        if (strcmp(dir, "/") == 0 || strcmp(dir, ".") == 0)
            break;
        char *up = g_path_get_dirname(dir);
        g_free(dir);
        dir = up;
    }
    g_free(dir);
    return ok;
}

GArray *hpc_perm_chain(const char *path)
{
    GArray *refs = g_array_new(FALSE, FALSE, sizeof(hpc_perm_ref));
    char *given = g_canonicalize_filename(path, "/");
    char *real = realpath(path, NULL);
    gboolean ok = real && chain_above(refs, given) &&
                  (strcmp(real, given) == 0 || chain_above(refs, real));
    free(real);
    g_free(given);
    if (!ok) {
        g_array_free(refs, TRUE);
        return NULL;
    }
    return refs;
}

uint32_t hpc_perm_narrow_chain(uint32_t bits, const hpc_creds *owner, uint32_t node_uid,
                               uint32_t node_gid, const GArray *chain)
{
    if (!chain)
        return 0;
    for (guint i = 0; bits && i < chain->len; i++)
        bits = hpc_perm_narrow(bits, owner, node_uid, node_gid,
                               &g_array_index(chain, hpc_perm_ref, i), TRUE);
    return bits;
}

uint32_t hpc_perm_path(uint32_t bits, const hpc_creds *owner, uint32_t node_uid,
                       uint32_t node_gid, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    hpc_perm_ref ref = ref_of(&st);
    bits = hpc_perm_narrow(bits, owner, node_uid, node_gid, &ref, FALSE);
    if (S_ISDIR(st.st_mode))
        bits = hpc_perm_narrow(bits, owner, node_uid, node_gid, &ref, TRUE);
    GArray *chain = hpc_perm_chain(path);
    bits = hpc_perm_narrow_chain(bits, owner, node_uid, node_gid, chain);
    if (chain)
        g_array_free(chain, TRUE);
    return bits;
}

uint32_t hpc_perm_mode(uint32_t mode, uint32_t bits)
{
    if (S_ISLNK(mode))
        return mode;
    uint32_t keep = bits & HPC_PERM_ALL;
    keep |= keep >> 2;           /* search (or execute) only with read */
    return (mode & S_IFMT) | (mode & keep);
}
