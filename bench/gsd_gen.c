/* gsd_gen.c - write a GSD file layer 2.0 trajectory for the benchmark.
 *
 *   gsd_gen FILE NFRAMES [NPARTICLES]
 *
 * Ten chunks per frame (HOOMD-like names and types), values a function of
 * (frame, chunk, element) so that a reader can check them.  The layout is
 * the one the GSD 2.x library writes: header, name list of NUL-separated
 * names, an index sorted by (frame, id) whose allocation is a power of two
 * (unused entries are zero: location 0 ends the index), then the data.
 * bench/gsd_bench.sh checks a small output against python3-gsd.
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NCHUNK 10
#define NAMES_BYTES 1024
#define INDEX_AT (256 + NAMES_BYTES)
#define BATCH 8192

typedef struct chunk {
    const char *name;
    uint8_t type;     /* GSD type id */
    uint8_t size;     /* bytes per element */
    int per_particle; /* N = particles, else N = rows */
    uint32_t rows, M;
} chunk;

/* in name id order: the index is sorted by (frame, id) */
static const chunk chunks[NCHUNK] = {
    { "configuration/step", 4, 8, 0, 1, 1 },
    { "configuration/box", 9, 4, 0, 6, 1 },
    { "particles/N", 3, 4, 0, 1, 1 },
    { "particles/position", 9, 4, 1, 0, 3 },
    { "particles/velocity", 9, 4, 1, 0, 3 },
    { "particles/typeid", 3, 4, 1, 0, 1 },
    { "particles/image", 7, 4, 1, 0, 3 },
    { "particles/charge", 9, 4, 1, 0, 1 },
    { "log/energy", 10, 8, 0, 1, 1 },
    { "log/temperature", 10, 8, 0, 1, 1 },
};

static int pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = pwrite(fd, p, len, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        off += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Element i of chunk k in frame f, stored as the chunk's type. */
static void element(unsigned char *dst, uint64_t f, unsigned k, uint64_t i)
{
    double v = (double)f * 1000.0 + k * 10.0 + (double)i;
    uint64_t u = f * 1000 + k * 10 + i;
    switch (chunks[k].type) {
    case 3: { uint32_t x = GUINT32_TO_LE((uint32_t)u); memcpy(dst, &x, 4); break; }
    case 4: { uint64_t x = GUINT64_TO_LE(u); memcpy(dst, &x, 8); break; }
    case 7: { uint32_t x = GUINT32_TO_LE((uint32_t)(int32_t)(u % 7) - 3); memcpy(dst, &x, 4); break; }
    case 9: { float x = (float)v * 0.5f; memcpy(dst, &x, 4); break; }
    default: { double x = v * 0.25; memcpy(dst, &x, 8); break; }
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: gsd_gen FILE NFRAMES [NPARTICLES]\n");
        return 2;
    }
    uint64_t nframes = g_ascii_strtoull(argv[2], NULL, 10);
    uint64_t np = argc > 3 ? g_ascii_strtoull(argv[3], NULL, 10) : 4;
    uint64_t nentries = nframes * NCHUNK, alloc = 128;
    while (alloc < nentries)
        alloc *= 2;
    uint64_t data_at = INDEX_AT + alloc * 32;
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    unsigned char h[256] = { 0 }, names[NAMES_BYTES] = { 0 };
    uint64_t v[5] = { GUINT64_TO_LE(UINT64_C(0x65DF65DF65DF65DF)), GUINT64_TO_LE(INDEX_AT),
                      GUINT64_TO_LE(alloc), GUINT64_TO_LE(256), GUINT64_TO_LE(NAMES_BYTES / 64) };
    memcpy(h, v, sizeof v);
    uint32_t schema_version = GUINT32_TO_LE(1u << 16 | 4), gsd_version = GUINT32_TO_LE(2u << 16);
    memcpy(h + 40, &schema_version, 4);
    memcpy(h + 44, &gsd_version, 4);
    strcpy((char *)h + 48, "hpcmount gsd_gen");
    strcpy((char *)h + 112, "hoomd");
    size_t at = 0;
    for (unsigned k = 0; k < NCHUNK; k++) {
        size_t l = strlen(chunks[k].name) + 1;
        memcpy(names + at, chunks[k].name, l);
        at += l;
    }
    int rc = pwrite_all(fd, h, sizeof h, 0) || pwrite_all(fd, names, sizeof names, 256);
    /* zeros up to the data: the unused index entries */
    rc = rc || ftruncate(fd, (off_t)data_at) != 0;

    unsigned char *idx = g_malloc(BATCH * 32);
    size_t maxchunk = (size_t)(np > 6 ? np : 6) * 3 * 8;
    GByteArray *data = g_byte_array_sized_new(1 << 22);
    unsigned char *buf = g_malloc(maxchunk);
    uint64_t pos = data_at, e = 0, idx_first = 0;
    for (uint64_t f = 0; f < nframes && !rc; f++) {
        for (unsigned k = 0; k < NCHUNK; k++) {
            const chunk *c = &chunks[k];
            uint64_t N = c->per_particle ? np : c->rows;
            uint64_t nel = N * c->M;
            for (uint64_t i = 0; i < nel; i++)
                element(buf + i * c->size, f, k, i);
            g_byte_array_append(data, buf, (guint)(nel * c->size));
            unsigned char *ent = idx + (e - idx_first) * 32;
            uint64_t fe = GUINT64_TO_LE(f), ne = GUINT64_TO_LE(N), le = GUINT64_TO_LE(pos);
            uint32_t me = GUINT32_TO_LE(c->M);
            uint16_t id = GUINT16_TO_LE((uint16_t)k);
            memcpy(ent, &fe, 8);
            memcpy(ent + 8, &ne, 8);
            memcpy(ent + 16, &le, 8);
            memcpy(ent + 24, &me, 4);
            memcpy(ent + 28, &id, 2);
            ent[30] = c->type;
            ent[31] = 0;
            pos += nel * c->size;
            e++;
            if (e - idx_first == BATCH) {
                rc = rc || pwrite_all(fd, idx, BATCH * 32, (off_t)(INDEX_AT + idx_first * 32));
                idx_first = e;
            }
        }
        if (data->len >= (1u << 22) || f + 1 == nframes) {
            rc = rc || pwrite_all(fd, data->data, data->len, (off_t)(pos - data->len));
            g_byte_array_set_size(data, 0);
        }
    }
    if (e > idx_first)
        rc = rc || pwrite_all(fd, idx, (size_t)(e - idx_first) * 32, (off_t)(INDEX_AT + idx_first * 32));
    g_free(idx);
    g_free(buf);
    g_byte_array_free(data, TRUE);
    if (close(fd) != 0 || rc) {
        fprintf(stderr, "gsd_gen: %s: write failed\n", argv[1]);
        return 1;
    }
    printf("%s: %" G_GUINT64_FORMAT " frames, %" G_GUINT64_FORMAT " index entries (%" G_GUINT64_FORMAT
           " allocated), %" G_GUINT64_FORMAT " bytes\n",
           argv[1], nframes, nentries, alloc, pos);
    return 0;
}
