/* gsd_hoomd.c - the hoomd schema: the chunks frame 0 lends to frames
 * that lack them, shown as links, as gsd.hoomd reads them. */
#include "gsd_int.h"

/* ---- hoomd schema: what frame 0 lends ------------------------------------ */

/* gsd.hoomd (python3-gsd) fills a chunk a frame lacks from frame 0 for the
 * names it knows: configuration/{step,dimensions,box}, <group>/N,
 * <group>/types (not constraints), particles/type_shapes and every log/
 * name always; the per-item quantities of a group only when the frame's N
 * equals frame 0's N (else it makes defaults, which are no chunk). */
enum { LEND_NONE, LEND_ALWAYS, LEND_SAME_N };

static const char *const hoomd_group[NGROUPS] = { "particles", "bonds", "angles", "dihedrals",
                                                  "impropers", "constraints", "pairs" };
#define GROUP_PARTICLES 0
#define GROUP_CONSTRAINTS 5

static int in_list(const char *const *list, const char *q)
{
    for (; *list; list++)
        if (strcmp(*list, q) == 0)
            return 1;
    return 0;
}

/* How frame 0 lends chunk `name`; *group: the group of a LEND_SAME_N name. */
static int hoomd_lend_kind(const char *name, int *group)
{
    static const char *const conf[] = { "step", "dimensions", "box", NULL };
    static const char *const part[] = { "typeid", "mass", "charge", "diameter", "body",
                                        "moment_inertia", "position", "orientation",
                                        "velocity", "angmom", "image", NULL };
    static const char *const topo[] = { "typeid", "group", NULL };
    static const char *const cons[] = { "value", "group", NULL };
    const char *slash = strchr(name, '/');
    if (g_str_has_prefix(name, "log/"))
        return LEND_ALWAYS;
    if (!slash)
        return LEND_NONE;
    size_t glen = (size_t)(slash - name);
    const char *q = slash + 1;
    if (glen == 13 && memcmp(name, "configuration", 13) == 0)
        return in_list(conf, q) ? LEND_ALWAYS : LEND_NONE;
    int g = 0;
    while (g < NGROUPS && !(strlen(hoomd_group[g]) == glen && memcmp(name, hoomd_group[g], glen) == 0))
        g++;
    if (g == NGROUPS)
        return LEND_NONE;
    *group = g;
    if (strcmp(q, "N") == 0 || (strcmp(q, "types") == 0 && g != GROUP_CONSTRAINTS) ||
        (strcmp(q, "type_shapes") == 0 && g == GROUP_PARTICLES))
        return LEND_ALWAYS;
    if (g == GROUP_PARTICLES)
        return in_list(part, q) ? LEND_SAME_N : LEND_NONE;
    return in_list(g == GROUP_CONSTRAINTS ? cons : topo, q) ? LEND_SAME_N : LEND_NONE;
}

/* The first element of an N chunk as gsd.hoomd takes it (N_arr[0]): *ok 0
 * when it has none or is not a number (gsd.hoomd then fails or compares
 * arrays; no link is made). */
static int chunk_first_value(const gsd_state *s, const gsd_entry *e, long double *v, int *ok)
{
    unsigned char b[8];
    *ok = 0;
    if (e->N == 0 || e->M != 1 || e->type < 1 || e->type > 10)
        return HPC_OK;
    int rc = gsd_snap_read(s, b, gsd_type_size(e->type), (uint64_t)e->location);
    if (rc != HPC_OK)
        return rc;
    union { uint8_t u1; uint16_t u2; uint32_t u4; uint64_t u8; int8_t i1; int16_t i2;
            int32_t i4; int64_t i8; float f4; double f8; } x;
    memcpy(&x, b, gsd_type_size(e->type));
    switch (e->type) {
    case 1: *v = x.u1; break;
    case 2: *v = x.u2; break;
    case 3: *v = x.u4; break;
    case 4: *v = x.u8; break;
    case 5: *v = x.i1; break;
    case 6: *v = x.i2; break;
    case 7: *v = x.i4; break;
    case 8: *v = x.i8; break;
    case 9: *v = x.f4; break;
    default: *v = x.f8; break;
    }
    *ok = 1;
    return HPC_OK;
}

/* Name ids as gsd.hoomd looks chunks up (the first id of a name): the
 * group N names and those it takes element 0 of (the N names,
 * configuration/step and configuration/dimensions). */
static void hoomd_ids(gsd_state *s)
{
    static const char *const conf[] = { "configuration/step", "configuration/dimensions" };
    for (int i = 0; i < NFIRST; i++)
        s->first_id[i] = -1;
    for (uint32_t id = 0; id < s->nnames; id++) {
        const char *name = s->names[id];
        size_t len = strlen(name);
        for (int g = 0; g < NGROUPS; g++)
            if (len == strlen(hoomd_group[g]) + 2 && g_str_has_prefix(name, hoomd_group[g]) &&
                strcmp(name + len - 2, "/N") == 0 && s->n_id[g] < 0)
                s->n_id[g] = s->first_id[g] = (int32_t)id;
        for (int i = 0; i < 2; i++)
            if (strcmp(name, conf[i]) == 0 && s->first_id[NGROUPS + i] < 0)
                s->first_id[NGROUPS + i] = (int32_t)id;
    }
}

/* A bit per name id: which ones the frame's entries es hold (g_free). */
static guint8 *held_ids(const gsd_state *s, const gsd_entry *es, uint64_t k)
{
    guint8 *has = g_malloc0(s->nnames / 8 + 1);
    for (uint64_t i = 0; i < k; i++)
        has[es[i].id / 8] |= (guint8)(1u << (es[i].id % 8));
    return has;
}

static int is_held(const guint8 *has, uint32_t id)
{
    return (has[id / 8] >> (id % 8)) & 1;
}

/* The log/ names (first id of each) frame 0 lacks: gsd.hoomd fills a
 * frame's missing log/ quantity from frame 0 and fails (KeyError) when
 * frame 0 lacks it too.  has0: the ids frame 0 holds. */
static void hoomd_log_need(gsd_state *s, const guint8 *has0)
{
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    s->log_need = g_new(uint16_t, s->nnames ? s->nnames : 1);
    for (uint32_t id = 0; id < s->nnames; id++) {
        const char *name = s->names[id];
        if (!g_str_has_prefix(name, "log/") || !g_hash_table_add(seen, (gpointer)name))
            continue;
        if (!is_held(has0, id))
            s->log_need[s->nlog_need++] = (uint16_t)id;
    }
    g_hash_table_destroy(seen);
}

/* Can gsd.hoomd read a frame (entries es, has: the ids it holds)?  Not
 * when it lacks a log/ name frame 0 lacks too (only asked of frames after
 * 0), nor when a chunk it takes element 0 of is empty (IndexError). */
static int frame_readable(const gsd_state *s, const gsd_entry *es, uint64_t k, const guint8 *has,
                          int later)
{
    for (uint32_t i = 0; later && i < s->nlog_need; i++)
        if (!is_held(has, s->log_need[i]))
            return 0;
    for (uint64_t i = 0; i < k; i++)
        for (int j = 0; j < NFIRST; j++)
            if ((int32_t)es[i].id == s->first_id[j] && es[i].N == 0)
                return 0;
    return 1;
}

/* Frame 0's lending: the names it holds that it lends, its N values. */
static int hoomd_frame0(gsd_state *s, const gsd_entry *es, uint64_t k)
{
    int rc = HPC_OK;
    s->lend_id = g_new(uint16_t, k ? k : 1);
    s->lend_group = g_new(int8_t, k ? k : 1);
    s->n0_ok = 1;
    for (uint64_t i = 0; i < k && rc == HPC_OK; i++) {
        int group = -1, kind = hoomd_lend_kind(s->names[es[i].id], &group);
        for (int g = 0; g < NGROUPS; g++) {
            int ok = 1;
            if ((int32_t)es[i].id == s->n_id[g] && (rc = chunk_first_value(s, &es[i], &s->n0[g], &ok)) == HPC_OK)
                s->n0_ok = s->n0_ok && ok;
        }
        if (kind == LEND_NONE || s->leaf[es[i].id] == NO_NODE)
            continue;
        s->lend_id[s->nlend] = es[i].id;
        s->lend_group[s->nlend++] = (int8_t)(kind == LEND_ALWAYS ? -1 : group);
    }
    return rc;
}

/* For a hoomd file (schema "hoomd", version 1.x, as gsd.hoomd opens): the
 * names frame 0 holds and lends, and frame 0's N of each group.  When
 * gsd.hoomd cannot read frame 0, it reads no frame: nothing is lent. */
int gsd_hoomd_setup(hpc_container *c, gsd_state *s)
{
    gsd_entry *es = NULL;
    uint64_t k = 0;
    for (int g = 0; g < NGROUPS; g++) {
        s->n_id[g] = -1;
        s->n0[g] = 0;
    }
    s->hoomd = strcmp(s->schema, "hoomd") == 0 && (s->schema_version >> 16) == 1;
    if (!s->hoomd || s->nframes < 2)
        return HPC_OK;
    hoomd_ids(s);
    int rc = gsd_frame_entries(c, s, 0, &es, &k);
    if (rc != HPC_OK)
        return rc;
    guint8 *has0 = held_ids(s, es, k);
    hoomd_log_need(s, has0);
    rc = hoomd_frame0(s, es, k);
    if (!frame_readable(s, es, k, has0, 0))
        s->nlend = 0;
    g_free(has0);
    g_free(es);
    return rc;
}

/* Does frame f's N of group g equal frame 0's?  es: frame f's entries. */
static int same_n(const gsd_state *s, int g, const gsd_entry *es, uint64_t k, int *same)
{
    *same = s->n0_ok;
    for (uint64_t i = 0; i < k && s->n_id[g] >= 0; i++) {
        if ((int32_t)es[i].id != s->n_id[g])
            continue;
        long double v;
        int ok;
        int rc = chunk_first_value(s, &es[i], &v, &ok);
        *same = *same && ok && v == s->n0[g];
        return rc;
    }
    return HPC_OK;
}

/* The names frame 0 lends to frame f (entries es), into *out (g_free):
 * none when gsd.hoomd cannot read frame f. */
int gsd_frame_lent(const gsd_state *s, uint64_t f, const gsd_entry *es, uint64_t k,
                   uint16_t **out, uint32_t *n)
{
    int rc = HPC_OK, same[NGROUPS];
    *out = NULL;
    *n = 0;
    if (!s->hoomd || f == 0 || s->nlend == 0)
        return HPC_OK;
    for (int g = 0; g < NGROUPS && rc == HPC_OK; g++)
        rc = same_n(s, g, es, k, &same[g]);
    guint8 *has = held_ids(s, es, k);
    if (rc != HPC_OK || !frame_readable(s, es, k, has, 1)) {
        g_free(has);
        return rc;
    }
    *out = g_new(uint16_t, s->nlend);
    for (uint32_t i = 0; i < s->nlend; i++) {
        uint16_t id = s->lend_id[i];
        if (!is_held(has, id) && (s->lend_group[i] < 0 || same[s->lend_group[i]]))
            (*out)[(*n)++] = id;
    }
    g_free(has);
    return HPC_OK;
}

/* .info lines of a hoomd file. */
void gsd_hoomd_info(const gsd_state *s, GString *o)
{
    g_string_append_printf(o, "hoomd: frame 0 lends %u chunks to frames without them (links)\n",
                           s->nlend);
    if (s->nlog_need == 0)
        return;
    char *esc = g_strescape(s->names[s->log_need[0]], NULL);
    g_string_append_printf(o, "hoomd: frame 0 lacks %u log/ names (%s%s): gsd.hoomd cannot read "
                           "a frame that lacks one of them too, so such frames have no links\n",
                           s->nlog_need, esc, s->nlog_need > 1 ? ", ..." : "");
    g_free(esc);
}

/* Target of a lent chunk's link: up to the frames directory, into frame 0. */
char *gsd_lend_target(const gsd_state *s, uint32_t n)
{
    GString *t = g_string_new(NULL);
    for (uint32_t d = 0; d < s->nodes[n].depth; d++)
        g_string_append(t, "../");
    g_string_append_printf(t, "000000/%s", s->names[s->nodes[n].chunk]);
    return g_string_free(t, FALSE);
}
