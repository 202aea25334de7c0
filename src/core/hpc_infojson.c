/* hpc_infojson.c - .info text as JSON (hpc_infojson.h). */
#include "config.h"

#include <string.h>

#include "hpc_infojson.h"
#include "hpc_json.h"

/* Integers of up to 15 digits are exact in every JSON reader (jq and
 * JavaScript hold numbers as doubles); longer ones stay strings. */
#define IJ_MAX_DIGITS 15

typedef struct ij_table {
    const char *title;         /* the line above the header, or NULL */
    char **cols;
    GPtrArray *rows;           /* char ** each */
} ij_table;

typedef struct ij {
    GPtrArray *keys;           /* fact keys in the order first seen */
    GHashTable *vals;          /* key -> GPtrArray of its values, in order */
    GPtrArray *notes;          /* lines that are neither facts nor tables */
    GPtrArray *tables;         /* ij_table * */
    ij_table *cur;             /* the table whose rows follow */
    const char *pending;       /* a line that is a title if a header follows */
} ij;

static void table_free(gpointer p)
{
    ij_table *t = p;
    g_strfreev(t->cols);
    g_ptr_array_free(t->rows, TRUE);
    g_free(t);
}

static void add_fact(ij *s, char *line, char *sep)
{
    *sep = '\0';
    GPtrArray *v = g_hash_table_lookup(s->vals, line);
    if (!v) {
        v = g_ptr_array_new();
        g_hash_table_insert(s->vals, line, v);
        g_ptr_array_add(s->keys, line);
    }
    g_ptr_array_add(v, sep + 2);
}

static void flush_pending(ij *s)
{
    if (s->pending)
        g_ptr_array_add(s->notes, (gpointer)s->pending);
    s->pending = NULL;
}

/* A line with a tab: a row of the current table, or the header of a new
 * one (titled by the line above it). */
static void add_tab_line(ij *s, const char *line)
{
    if (s->cur) {
        g_ptr_array_add(s->cur->rows, g_strsplit(line, "\t", -1));
        return;
    }
    ij_table *t = g_new0(ij_table, 1);
    t->title = s->pending;
    s->pending = NULL;
    t->cols = g_strsplit(line, "\t", -1);
    t->rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
    g_ptr_array_add(s->tables, t);
    s->cur = t;
}

static void parse_line(ij *s, char *line)
{
    if (strchr(line, '\t')) {
        add_tab_line(s, line);
        return;
    }
    flush_pending(s);
    s->cur = NULL;
    char *sep = strstr(line, ": ");
    if (sep && sep > line)
        add_fact(s, line, sep);
    else if (*line)
        s->pending = line;
}

/* A value: an integer as a JSON number (its text, exactly), else a string. */
static void put_value(GString *o, const char *v)
{
    const char *d = v + (*v == '-');
    size_t n = strspn(d, "0123456789");
    if (n > 0 && n <= IJ_MAX_DIGITS && d[n] == '\0' && (d[0] != '0' || n == 1) && strcmp(v, "-0"))
        g_string_append(o, v);
    else
        hpc_json_str(o, v);
}

static void put_strings(GString *o, char *const *items, guint n)
{
    g_string_append_c(o, '[');
    for (guint i = 0; i < n; i++) {
        if (i)
            g_string_append_c(o, ',');
        hpc_json_str(o, items[i]);
    }
    g_string_append_c(o, ']');
}

static void put_list(GString *o, GPtrArray *a)
{
    put_strings(o, a ? (char *const *)a->pdata : NULL, a ? a->len : 0);
}

/* "facts": each key with its value, or the list of its values when .info
 * gives it more than once. */
static void put_facts(GString *o, const ij *s)
{
    g_string_append(o, "\"facts\":{");
    for (guint i = 0; i < s->keys->len; i++) {
        const char *k = g_ptr_array_index(s->keys, i);
        GPtrArray *v = g_hash_table_lookup(s->vals, k);
        g_string_append(o, i ? ",\n " : "\n ");
        hpc_json_str(o, k);
        g_string_append_c(o, ':');
        if (v->len == 1) {
            put_value(o, g_ptr_array_index(v, 0));
            continue;
        }
        g_string_append_c(o, '[');
        for (guint j = 0; j < v->len; j++) {
            if (j)
                g_string_append_c(o, ',');
            put_value(o, g_ptr_array_index(v, j));
        }
        g_string_append_c(o, ']');
    }
    g_string_append(o, "}");
}

/* The rows as objects keyed by the header's columns; a cell beyond them
 * joins the last column (a tab inside it), a missing one is null. */
static void put_rows(GString *o, const ij_table *t)
{
    guint ncols = g_strv_length(t->cols);
    g_string_append_c(o, '[');
    for (guint r = 0; r < t->rows->len; r++) {
        char **cells = g_ptr_array_index(t->rows, r);
        guint n = g_strv_length(cells);
        g_string_append(o, r ? ",\n {" : "\n {");
        for (guint c = 0; c < ncols; c++) {
            if (c)
                g_string_append_c(o, ',');
            hpc_json_str(o, t->cols[c]);
            g_string_append_c(o, ':');
            char *joined = c + 1 == ncols && n > ncols ? g_strjoinv("\t", cells + c) : NULL;
            if (joined)
                hpc_json_str(o, joined);
            else if (c < n)
                put_value(o, cells[c]);
            else
                g_string_append(o, "null");
            g_free(joined);
        }
        g_string_append_c(o, '}');
    }
    g_string_append_c(o, ']');
}

static void put_first(GString *o, const ij *s, const char *key)
{
    GPtrArray *v = g_hash_table_lookup(s->vals, key);
    g_string_append_printf(o, "\"%s\":", key);
    if (v)
        hpc_json_str(o, g_ptr_array_index(v, 0));
    else
        g_string_append(o, "null");
    g_string_append(o, ",\n");
}

/* "columns" and "table": the first table; "tables": the ones after it. */
static void put_tables(GString *o, const ij *s)
{
    ij_table *main = s->tables->len ? g_ptr_array_index(s->tables, 0) : NULL;
    g_string_append(o, "\"columns\":");
    put_strings(o, main ? main->cols : NULL, main ? g_strv_length(main->cols) : 0);
    g_string_append(o, ",\n\"table\":");
    if (main)
        put_rows(o, main);
    else
        g_string_append(o, "[]");
    g_string_append(o, ",\n\"tables\":[");
    for (guint i = 1; i < s->tables->len; i++) {
        ij_table *t = g_ptr_array_index(s->tables, i);
        g_string_append(o, i > 1 ? ",\n{\"title\":" : "\n{\"title\":");
        if (t->title)
            hpc_json_str(o, t->title);
        else
            g_string_append(o, "null");
        g_string_append(o, ",\"columns\":");
        put_strings(o, t->cols, g_strv_length(t->cols));
        g_string_append(o, ",\"rows\":");
        put_rows(o, t);
        g_string_append_c(o, '}');
    }
    g_string_append(o, "]");
}

GString *hpc_info_json(const char *text)
{
    char **lines = g_strsplit(text, "\n", -1);
    ij s = { g_ptr_array_new(), g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
                                                      (GDestroyNotify)g_ptr_array_unref),
             g_ptr_array_new(), g_ptr_array_new_with_free_func(table_free), NULL, NULL };
    for (char **l = lines; *l; l++)
        parse_line(&s, *l);
    flush_pending(&s);
    GString *o = g_string_new(NULL);
    g_string_append_printf(o, "{\"schema\":%d,\n", HPC_INFO_JSON_SCHEMA);
    put_first(o, &s, "format");
    put_first(o, &s, "source");
    g_string_append(o, "\"warnings\":");
    put_list(o, g_hash_table_lookup(s.vals, "warning"));
    g_string_append(o, ",\n\"damaged\":");
    put_list(o, g_hash_table_lookup(s.vals, "damaged"));
    g_string_append(o, ",\n\"notes\":");
    put_list(o, s.notes);
    g_string_append(o, ",\n");
    put_facts(o, &s);
    g_string_append(o, ",\n");
    put_tables(o, &s);
    g_string_append(o, "}\n");
    g_ptr_array_free(s.keys, TRUE);
    g_hash_table_destroy(s.vals);
    g_ptr_array_free(s.notes, TRUE);
    g_ptr_array_free(s.tables, TRUE);
    g_strfreev(lines);
    return o;
}
