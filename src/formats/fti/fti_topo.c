/* fti_topo.c - who is in whose L2/L3 group.  FTI places global rank r
 * (heads included) on node r / node_size at position r % node_size; a
 * group is one position on group_size consecutive nodes.  config.fti gives
 * node_size, group_size and head; Topology.fti (one line `<nodeID> =
 * <hostname>` per node) the number of nodes; the node directories the
 * files lie in confirm each rank's node.  Missing values leave the groups
 * unknown; values that contradict each other refuse the mount (docs/fti.md,
 * "Groups").
 */
#include "fti.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define TOPO_MAX_BYTES (16u << 20)  /* a Topology.fti of 16 MiB has ~10^6 nodes */

/* One `<nodeID> = <hostname>` line of Topology.fti. */
typedef struct topo_line {
    char *key, *host;
    uint64_t off;
} topo_line;

/* Topology.fti as read: host[k] of node k, where each line lies. */
typedef struct topo_file {
    const char *path;
    uint32_t nnodes;
    uint64_t sec_off;           /* offset of the [topology] header */
    char **host;                /* by node ID */
    uint64_t *off;              /* by node ID */
    GHashTable *node_of;        /* host -> node ID + 1 */
} topo_file;

static void topo_file_clear(topo_file *tf)
{
    g_strfreev(tf->host);
    g_free(tf->off);
    if (tf->node_of)
        g_hash_table_destroy(tf->node_of);
    memset(tf, 0, sizeof *tf);
}

/* A value as iniparser reads it: quotes removed, else up to a comment. */
static char *ini_value(const char *v)
{
    size_t n = strlen(v);
    if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0])
        return g_strndup(v + 1, n - 2);
    return g_strstrip(g_strndup(v, strcspn(v, ";#")));
}

/* The `key = value` lines of section [topology] (case as iniparser: any). */
static void ini_lines(const char *text, gsize len, GArray *out, uint64_t *sec_off)
{
    int in_topo = 0;
    for (gsize at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        gsize end = nl ? (gsize)(nl - text) : len;
        char *line = g_strstrip(g_strndup(text + at, end - at));
        char *eq = strchr(line, '=');
        if (line[0] == '[') {
            in_topo = g_ascii_strncasecmp(line, "[topology]", 10) == 0;
            if (in_topo && *sec_off == G_MAXUINT64)
                *sec_off = at;
        } else if (in_topo && eq && line[0] != '#' && line[0] != ';') {
            *eq = '\0';
            topo_line l = { g_strdup(g_strstrip(line)), ini_value(g_strstrip(eq + 1)), at };
            g_array_append_val(out, l);
        }
        g_free(line);
        at = end + 1;
    }
}

/* Each line's key must be a node ID 0..n-1, once; each host name once. */
static int topo_index(topo_file *tf, GArray *lines, GError **err)
{
    uint32_t n = lines->len;
    tf->host = g_new0(char *, n + 1);
    tf->off = g_new0(uint64_t, n);
    tf->node_of = g_hash_table_new(g_str_hash, g_str_equal);
    for (uint32_t i = 0; i < n; i++) {
        topo_line *l = &g_array_index(lines, topo_line, i);
        char *end;
        guint64 k = g_ascii_strtoull(l->key, &end, 10);
        if (*end || end == l->key || k >= n || tf->host[k])
            return hpc_fail(err, HPC_E_CORRUPT, tf->path, "[topology] key", l->off,
                            "'%s' is not one of node IDs 0-%u, or comes twice", l->key, n - 1);
        gpointer other;
        if (g_hash_table_lookup_extended(tf->node_of, l->host, NULL, &other))
            return hpc_fail(err, HPC_E_CORRUPT, tf->path, "[topology] host name", l->off,
                            "node %u and node %u are both '%s'", GPOINTER_TO_UINT(other) - 1,
                            (unsigned)k, l->host);
        tf->host[k] = g_strdup(l->host);
        tf->off[k] = l->off;
        g_hash_table_insert(tf->node_of, tf->host[k], GUINT_TO_POINTER((unsigned)k + 1));
    }
    tf->nnodes = n;
    return HPC_OK;
}

/* Read and check Topology.fti. */
static int topo_load(const char *path, topo_file *tf, GError **err)
{
    char *text = NULL;
    gsize len = 0;
    GError *e = NULL;
    GArray *lines = g_array_new(FALSE, FALSE, sizeof(topo_line));
    int rc;
    memset(tf, 0, sizeof *tf);
    tf->path = path;
    tf->sec_off = G_MAXUINT64;
    if (!g_file_get_contents(path, &text, &len, &e)) {
        rc = hpc_fail(err, HPC_E_IO, path, NULL, 0, "cannot read: %s", e->message);
        goto out;
    }
    if (len > TOPO_MAX_BYTES) {
        rc = hpc_fail(err, HPC_E_CORRUPT, path, "size", 0, "%" G_GSIZE_FORMAT " bytes, more "
                      "than a Topology.fti of %u MiB", len, TOPO_MAX_BYTES >> 20);
        goto out;
    }
    ini_lines(text, len, lines, &tf->sec_off);
    if (lines->len == 0) {
        rc = hpc_fail(err, HPC_E_CORRUPT, path, "[topology]",
                      tf->sec_off == G_MAXUINT64 ? 0 : tf->sec_off,
                      "no `<nodeID> = <hostname>` line");
        goto out;
    }
    rc = topo_index(tf, lines, err);
out:
    for (guint i = 0; i < lines->len; i++) {
        g_free(g_array_index(lines, topo_line, i).key);
        g_free(g_array_index(lines, topo_line, i).host);
    }
    g_array_free(lines, TRUE);
    g_clear_error(&e);
    g_free(text);
    return rc;
}

/* config.fti's numbers, checked. */
static int topo_config(const fti *f, GString *why)
{
    if (!f->config) {
        g_string_assign(why, "no config.fti was found below or above SOURCE "
                        "(name it with -o fticonfig=PATH)");
        return -1;
    }
    if (f->cfg_node < 1 || f->cfg_group < 2 || f->cfg_group > FTI_RS_MAX_GROUP ||
        (f->cfg_head != 0 && f->cfg_head != 1) || (f->cfg_head == 1 && f->cfg_node < 2) ||
        f->cfg_node > FTI_MAX_RANK) {
        g_string_printf(why, "%s: [basic] node_size %d, group_size %d, head %d do not make "
                        "a topology (node_size >= 1, or >= 2 with head 1; group_size "
                        "2-%d; head 0 or 1; -1 = missing)", f->config, f->cfg_node,
                        f->cfg_group, f->cfg_head, FTI_RS_MAX_GROUP);
        return -1;
    }
    return 0;
}

/* The node a file lies on by its directory, .../<node dir>/<execId>/l<k>/
 * (k = 1..3: L4 files are global): a host name of Topology.fti, or without
 * one FTI's local-test name node<k>.  -1 when the directory tells nothing;
 * *line is the Topology.fti line that named it, or -1. */
static int64_t dir_node(const topo_file *tf, const char *path, int64_t *line)
{
    char *lvl = g_path_get_dirname(path), *exec = g_path_get_dirname(lvl);
    char *node = g_path_get_dirname(exec), *lname = g_path_get_basename(lvl);
    char *nname = g_path_get_basename(node);
    int64_t n = -1;
    *line = -1;
    if (strcmp(lname, "l1") != 0 && strcmp(lname, "l2") != 0 && strcmp(lname, "l3") != 0) {
        /* not below a local level directory */
    } else if (tf->node_of) {
        gpointer v = g_hash_table_lookup(tf->node_of, nname);
        if (v)
            n = *line = (int64_t)GPOINTER_TO_UINT(v) - 1;
    } else if (g_str_has_prefix(nname, "node") && nname[4] && strspn(nname + 4, "0123456789") ==
               strlen(nname + 4) && strlen(nname + 4) <= 9) {
        n = (int64_t)g_ascii_strtoull(nname + 4, NULL, 10);
    }
    g_free(lvl);
    g_free(exec);
    g_free(node);
    g_free(lname);
    g_free(nname);
    return n;
}

/* File x of rank r must lie on r's node and r must be a checkpointing
 * process of the run. */
static int topo_check_file(const fti_topo *t, const topo_file *tf, const fti_found *x,
                           uint32_t r, GError **err)
{
    uint32_t S = t->node_size;
    if (r >= t->nranks)
        return hpc_fail(err, HPC_E_CORRUPT, tf->path ? tf->path : x->path,
                        tf->path ? "[topology]" : "rank", tf->path ? tf->sec_off : 0,
                        "%u nodes of node_size %u (config.fti) are ranks 0-%u, but %s exists",
                        t->nnodes, S, t->nranks - 1, x->path);
    if (fti_topo_is_head(t, r))
        return hpc_fail(err, HPC_E_CORRUPT, x->path, "rank", 0, "rank %u is the head of node %u "
                        "(config.fti: node_size %u, head 1), and heads write no checkpoint "
                        "file", r, r / S, S);
    int64_t line, n = dir_node(tf, x->path, &line);
    if (n < 0 || (uint64_t)n == r / S)
        return HPC_OK;
    if (line >= 0)
        return hpc_fail(err, HPC_E_CORRUPT, tf->path, "[topology] host name",
                        tf->off[line], "%s lies in the directory of node %" PRId64 " (%s), but "
                        "config.fti (node_size %u) puts rank %u on node %u", x->path, n,
                        tf->host[line], S, r, r / S);
    return hpc_fail(err, HPC_E_CORRUPT, x->path, "directory", 0, "the file lies in node %"
                    PRId64 "'s directory, but config.fti (node_size %u) puts rank %u on node %u",
                    n, S, r, r / S);
}

/* Nodes, ranks and the checks of every file of cf against them. */
static int topo_layout(const fti *f, const fti_ck_files *cf, const topo_file *tf, fti_topo *t,
                       GError **err)
{
    uint32_t S = (uint32_t)f->cfg_node, G = (uint32_t)f->cfg_group;
    uint64_t nodes = tf->path ? tf->nnodes
                              : ((uint64_t)cf->nranks + (uint64_t)S * G - 1) / ((uint64_t)S * G) * G;
    if (tf->path && nodes % G)
        return hpc_fail(err, HPC_E_CORRUPT, tf->path, "[topology]", tf->sec_off,
                        "%" PRIu64 " nodes, not a multiple of group_size %u (config.fti)",
                        nodes, G);
    if (nodes * S > FTI_MAX_RANK)
        return hpc_fail(err, HPC_E_RANGE, tf->path ? tf->path : f->config, "[topology]",
                        tf->path ? tf->sec_off : 0, "%" PRIu64 " nodes of node_size %u are "
                        "more processes than an FTI run has", nodes, S);
    t->node_size = S;
    t->group = G;
    t->head = (uint32_t)f->cfg_head;
    t->nnodes = (uint32_t)nodes;
    t->nranks = (uint32_t)(nodes * S);
    for (uint32_t r = 0; r < cf->nranks; r++) {
        const fti_found *x[3] = { cf->rank[r], cf->pcof[r], cf->rsed[r] };
        for (int k = 0; k < 3; k++) {
            int rc = x[k] ? topo_check_file(t, tf, x[k], r, err) : HPC_OK;
            if (rc != HPC_OK)
                return rc;
        }
    }
    return HPC_OK;
}

int fti_topo_build(const fti *f, const fti_ck_files *cf, fti_topo *t, GError **err)
{
    GString *why = g_string_new(NULL);
    topo_file tf = { 0 };
    memset(t, 0, sizeof *t);
    int rc = topo_config(f, why);
    if (rc != 0) {
        t->why = g_string_free(why, FALSE);
        return HPC_OK;
    }
    g_string_free(why, TRUE);
    if (f->topology)
        rc = topo_load(f->topology, &tf, err);
    if (rc == HPC_OK)
        rc = topo_layout(f, cf, &tf, t, err);
    if (rc == HPC_OK)
        t->how = g_strdup_printf("config.fti: node_size %d, group_size %d, head %d; %u nodes %s",
                                 f->cfg_node, f->cfg_group, f->cfg_head, t->nnodes,
                                 tf.path ? "listed by Topology.fti" : "from the ranks seen "
                                 "(no Topology.fti)");
    topo_file_clear(&tf);
    return rc;
}

void fti_topo_free(fti_topo *t)
{
    g_free(t->why);
    g_free(t->how);
    memset(t, 0, sizeof *t);
}

int fti_topo_is_head(const fti_topo *t, uint32_t r)
{
    return t->head && t->node_size && r % t->node_size == 0;
}

int fti_topo_group(const fti_topo *t, int32_t r, int32_t *mem, uint32_t *gpos)
{
    uint32_t G = t->group, S = t->node_size;
    if (!G || r < 0 || (uint32_t)r >= t->nranks || fti_topo_is_head(t, (uint32_t)r))
        return 0;
    uint32_t n = (uint32_t)r / S, first = n / G * G;
    if (first + G > t->nnodes)
        return 0;
    for (uint32_t j = 0; j < G; j++)
        mem[j] = (int32_t)((first + j) * S + (uint32_t)r % S);
    *gpos = n - first;
    return 1;
}
