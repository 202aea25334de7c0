/* fti_topo.c - who is in whose L2/L3 group: node_size, group_size and head
 * from config.fti, the node of every rank from Topology.fti.  When these
 * are missing or disagree, no group is assumed (docs/fti.md, "Groups").
 */
#include "fti.h"

#include <stdlib.h>
#include <string.h>

/* Ranks listed in Topology.fti: names[r] for r < *n, every r present. */
static int topo_names(const char *path, char ***names, uint32_t *n, GString *why)
{
    GKeyFile *k = g_key_file_new();
    GError *e = NULL;
    char **keys = NULL;
    gsize nkeys = 0;
    int rc = -1;
    *names = NULL;
    *n = 0;
    if (!g_key_file_load_from_file(k, path, G_KEY_FILE_NONE, &e)) {
        g_string_printf(why, "%s cannot be read: %s", path, e->message);
        goto out;
    }
    keys = g_key_file_get_keys(k, "topology", &nkeys, NULL);
    if (!keys || nkeys == 0 || nkeys > FTI_MAX_RANK) {
        g_string_printf(why, "%s has no [topology] section", path);
        goto out;
    }
    *names = g_new0(char *, nkeys + 1);
    for (gsize i = 0; i < nkeys; i++) {
        char *end;
        guint64 r = g_ascii_strtoull(keys[i], &end, 10);
        if (*end || end == keys[i] || r >= nkeys || (*names)[r]) {
            g_string_printf(why, "%s: [topology] key '%s' is not one of ranks 0-%u",
                            path, keys[i], (unsigned)nkeys - 1);
            goto out;
        }
        (*names)[r] = g_key_file_get_value(k, "topology", keys[i], NULL);
    }
    *n = (uint32_t)nkeys;
    rc = 0;
out:
    if (rc != 0 && *names) {
        g_strfreev(*names);
        *names = NULL;
    }
    g_strfreev(keys);
    g_clear_error(&e);
    g_key_file_free(k);
    return rc;
}

/* head = 0: rank r on node r / S at position r % S; Topology.fti, when
 * present, must put exactly the same ranks together. */
static int topo_head0(const fti *f, uint32_t nseen, char **names, uint32_t nnames,
                      fti_topo *t, GString *why)
{
    uint32_t S = (uint32_t)f->cfg_node, G = (uint32_t)f->cfg_group;
    uint64_t block = (uint64_t)S * G, n = nnames ? nnames : nseen;
    if (nnames && nnames < nseen) {
        g_string_printf(why, "Topology.fti lists %u ranks but rank %u has files",
                        nnames, nseen - 1);
        return -1;
    }
    if (nnames && nnames % block) {
        g_string_printf(why, "Topology.fti lists %u ranks, not whole blocks of group_size %u "
                        "nodes of node_size %u (config.fti)", nnames, G, S);
        return -1;
    }
    t->nranks = (uint32_t)((n + block - 1) / block * block);
    t->per_node = S;
    t->nnodes = t->nranks / S;
    t->node = g_new(int32_t, t->nranks);
    t->pos = g_new(int32_t, t->nranks);
    for (uint32_t r = 0; r < t->nranks; r++) {
        t->node[r] = (int32_t)(r / S);
        t->pos[r] = (int32_t)(r % S);
    }
    /* the first rank of each node names it; every rank must agree */
    GHashTable *first = g_hash_table_new(g_str_hash, g_str_equal);
    int rc = 0;
    for (uint32_t r = 0; r < nnames && rc == 0; r++) {
        uint32_t r0 = r - r % S;
        gpointer q;
        if (strcmp(names[r], names[r0]) != 0) {
            g_string_printf(why, "config.fti (node_size %u, head 0) puts ranks %u and %u on "
                            "one node, Topology.fti on %s and %s", S, r0, r, names[r0],
                            names[r]);
            rc = -1;
        } else if (r == r0 && g_hash_table_lookup_extended(first, names[r], NULL, &q)) {
            g_string_printf(why, "config.fti (node_size %u, head 0) puts ranks %u and %u on "
                            "two nodes, Topology.fti on one (%s)", S,
                            GPOINTER_TO_UINT(q), r, names[r]);
            rc = -1;
        } else if (r == r0) {
            g_hash_table_insert(first, names[r], GUINT_TO_POINTER(r));
        }
    }
    g_hash_table_destroy(first);
    return rc;
}

/* head = 1: nodes in the order their first rank appears in Topology.fti,
 * each with S - 1 application ranks, positions in rank order. */
static int topo_head1(const fti *f, uint32_t nseen, char **names, uint32_t nnames,
                      fti_topo *t, GString *why)
{
    uint32_t per = (uint32_t)f->cfg_node - 1, G = (uint32_t)f->cfg_group;
    if (!names) {
        g_string_assign(why, "config.fti has head = 1, so each rank's node must come from "
                        "Topology.fti, and none was found");
        return -1;
    }
    if (nnames < nseen) {
        g_string_printf(why, "Topology.fti lists %u ranks but rank %u has files",
                        nnames, nseen - 1);
        return -1;
    }
    GHashTable *idx = g_hash_table_new(g_str_hash, g_str_equal);
    uint32_t *count = g_new0(uint32_t, nnames);
    int rc = 0;
    t->nranks = nnames;
    t->per_node = per;
    t->node = g_new(int32_t, nnames);
    t->pos = g_new(int32_t, nnames);
    for (uint32_t r = 0; r < nnames && rc == 0; r++) {
        gpointer v;
        if (!g_hash_table_lookup_extended(idx, names[r], NULL, &v)) {
            v = GUINT_TO_POINTER(t->nnodes++);
            g_hash_table_insert(idx, names[r], v);
        }
        uint32_t n = GPOINTER_TO_UINT(v);
        t->node[r] = (int32_t)n;
        t->pos[r] = (int32_t)count[n]++;
        if (count[n] > per) {
            g_string_printf(why, "Topology.fti puts %u ranks on %s, config.fti (node_size %u, "
                            "head 1) leaves %u application ranks per node", count[n],
                            names[r], per + 1, per);
            rc = -1;
        }
    }
    for (uint32_t n = 0; n < t->nnodes && rc == 0; n++)
        if (count[n] != per) {
            g_string_printf(why, "Topology.fti puts %u ranks on node %u, config.fti (node_size "
                            "%u, head 1) says %u", count[n], n, per + 1, per);
            rc = -1;
        }
    if (rc == 0 && t->nnodes % G) {
        g_string_printf(why, "Topology.fti has %u nodes, not blocks of group_size %u",
                        t->nnodes, G);
        rc = -1;
    }
    g_free(count);
    g_hash_table_destroy(idx);
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
        (f->cfg_head != 0 && f->cfg_head != 1) || (f->cfg_head == 1 && f->cfg_node < 2)) {
        g_string_printf(why, "%s: [basic] node_size %d, group_size %d, head %d do not make "
                        "a topology (node_size >= 1, or >= 2 with head 1; group_size "
                        "2-%d; head 0 or 1; -1 = missing)", f->config, f->cfg_node,
                        f->cfg_group, f->cfg_head, FTI_RS_MAX_GROUP);
        return -1;
    }
    return 0;
}

int fti_topo_build(const fti *f, uint32_t nseen, fti_topo *t)
{
    GString *why = g_string_new(NULL);
    char **names = NULL;
    uint32_t nnames = 0;
    int rc = topo_config(f, why);
    memset(t, 0, sizeof *t);
    if (rc == 0 && f->topology)
        rc = topo_names(f->topology, &names, &nnames, why);
    if (rc == 0)
        rc = f->cfg_head == 0 ? topo_head0(f, nseen, names, nnames, t, why)
                              : topo_head1(f, nseen, names, nnames, t, why);
    if (rc == 0) {
        t->group = (uint32_t)f->cfg_group;
        t->rank_at = g_new(int32_t, (gsize)t->nnodes * t->per_node);
        for (uint64_t i = 0; i < (uint64_t)t->nnodes * t->per_node; i++)
            t->rank_at[i] = -1;
        for (uint32_t r = 0; r < t->nranks; r++)
            t->rank_at[(uint64_t)t->node[r] * t->per_node + (uint64_t)t->pos[r]] = (int32_t)r;
        t->how = g_strdup_printf("config.fti: node_size %d, group_size %d, head %d; nodes %s",
                                 f->cfg_node, f->cfg_group, f->cfg_head,
                                 names ? "confirmed by Topology.fti" : "from rank numbers");
        g_string_free(why, TRUE);
    } else {
        fti_topo_free(t);
        t->why = g_string_free(why, FALSE);
    }
    g_strfreev(names);
    return rc;
}

void fti_topo_free(fti_topo *t)
{
    g_free(t->node);
    g_free(t->pos);
    g_free(t->rank_at);
    g_free(t->why);
    g_free(t->how);
    memset(t, 0, sizeof *t);
}

int fti_topo_group(const fti_topo *t, int32_t r, int32_t *mem, uint32_t *gpos)
{
    uint32_t G = t->group;
    if (!t->rank_at || r < 0 || (uint32_t)r >= t->nranks)
        return 0;
    uint32_t n = (uint32_t)t->node[r], first = n / G * G;
    if (first + G > t->nnodes)
        return 0;
    for (uint32_t j = 0; j < G; j++) {
        mem[j] = t->rank_at[(uint64_t)(first + j) * t->per_node + (uint64_t)t->pos[r]];
        if (mem[j] < 0)
            return 0;
    }
    *gpos = n - first;
    return 1;
}
