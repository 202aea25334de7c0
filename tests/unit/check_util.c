/* check_util.c - helpers shared by the Check unit tests. */
#include "check_util.h"

#include <check.h>
#include <stdlib.h>

/* Check kills a test after its timeout (4 s unless the suite set one).  No
 * test may depend on the machine's speed: before main() builds the suites,
 * the default becomes 10 minutes and every timeout a suite sets is taken
 * ten times (Check reads both variables in tcase_create and
 * tcase_set_timeout), unless the caller set them.  A timeout is a limit
 * for a hung test, not a speed. */
__attribute__((constructor)) static void generous_timeouts(void)
{
    setenv("CK_DEFAULT_TIMEOUT", "600", 0);
    setenv("CK_TIMEOUT_MULTIPLIER", "10", 0);
}

const char *test_data_dir(void)
{
    static char *dir;
    if (!dir) {
        const char *top = getenv("top_srcdir");
        dir = g_build_filename(top ? top : "..", "tests", "data", NULL);
    }
    return dir;
}

hpc_container *test_open(const char *path, const char *format)
{
    return test_open_in(path, format, 0);
}

hpc_container *test_open_in(const char *path, const char *format, int inproc)
{
    hpc_options o;
    hpc_options_init(&o);
    o.format = (char *)format;
    o.inproc = inproc;
    hpc_container *c = NULL;
    GError *err = NULL;
    int rc = hpc_container_open(path, &o, &c, &err);
    ck_assert_msg(rc == HPC_OK, "open %s: %s", path, err ? err->message : "?");
    return c;
}

char *test_sha256_node(hpc_container *c, hpc_ino ino, size_t step, uint64_t *len)
{
    GChecksum *ck = g_checksum_new(G_CHECKSUM_SHA256);
    char *buf = g_malloc(step);
    uint64_t off = 0;
    char *hex = NULL;
    for (;;) {
        size_t n;
        if (hpc_container_read(c, ino, buf, step, off, &n) != HPC_OK)
            goto out;
        if (n == 0)
            break;
        g_checksum_update(ck, (guchar *)buf, n);
        off += n;
    }
    *len = off;
    hex = g_strdup(g_checksum_get_string(ck));
out:
    g_free(buf);
    g_checksum_free(ck);
    return hex;
}

char *test_sha256_path(hpc_container *c, const char *path, uint64_t *len)
{
    hpc_stat st;
    if (hpc_container_resolve(c, path, &st) != HPC_OK)
        return NULL;
    return test_sha256_node(c, st.ino, 1000, len);
}

int test_run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
