/* check_fatbin.c — the GPU code a shared library carries (suites/fatbin.c), on the CPU: the
 * parser on real libraries nvcc built here with different -gencode sets (tests/fixtures/
 * plugin_cuda.cu as fixcu_<variant>.so, and the example plugin), on a host-only library (no fat
 * binary), on hand-made sections (the family flag, several containers, padding, damage), and the
 * rule of which compute capability runs which code. The real libraries exist in a CUDA build
 * (MMP_CUDA_PLUGINS); the rest runs in every build.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmaprobe/runner.h"
#include "tests/check_main.h"

#ifndef MMP_PLUGIN_FIXTURES
#error "MMP_PLUGIN_FIXTURES (directory of the fixture plugins) must be defined by CMake"
#endif

/* ---- the rule ---- */
typedef struct {
    mmp_fatbin_code code;
    int cc;
    int runs;
} rule_case;
static const rule_case rules[] = {
    {{80, 0, 0}, 80, 1},   {{80, 0, 0}, 86, 1},   {{80, 0, 0}, 89, 1},  {{80, 0, 0}, 90, 0},
    {{80, 0, 0}, 75, 0},   {{86, 0, 0}, 80, 0},   {{90, 0, 'a'}, 90, 1}, {{90, 0, 'a'}, 80, 0},
    {{90, 0, 'a'}, 100, 0}, {{80, 1, 0}, 80, 1},  {{80, 1, 0}, 90, 1},  {{80, 1, 0}, 120, 1},
    {{80, 1, 0}, 75, 0},   {{90, 1, 'a'}, 90, 1}, {{90, 1, 'a'}, 100, 0}, {{100, 0, 'f'}, 103, 1},
    {{100, 0, 'f'}, 120, 0}, {{100, 1, 'f'}, 103, 1}, {{100, 1, 'f'}, 110, 0}, {{90, 0, 0}, 100, 0},
};

START_TEST(test_rule)
{
    const rule_case *t = &rules[_i];
    ck_assert_msg(mmp_fatbin_code_runs_on(&t->code, t->cc) == t->runs, "%s_%d%c on %d: expected %d",
                  t->code.ptx ? "compute" : "sm", t->code.arch, t->code.suffix ? t->code.suffix : ' ', t->cc, t->runs);
}
END_TEST

/* ---- hand-made sections ---- */
typedef struct {
    unsigned char b[4096];
    size_t n;
    size_t container;              /* offset of the open container's header */
} section;

static void put(section *s, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++) s->b[s->n++] = (unsigned char)(v >> (8 * i));
}
static void open_container(section *s)
{
    s->container = s->n;
    put(s, 0xBA55ED50u, 4);
    put(s, 1, 2);
    put(s, 16, 2);
    put(s, 0, 8);   /* size, set by close_container */
}
static void close_container(section *s)
{
    uint64_t size = s->n - s->container - 16;
    for (int i = 0; i < 8; i++) s->b[s->container + 8 + i] = (unsigned char)(size >> (8 * i));
}
/* one entry: kind 1 PTX / 2 ELF, header of hsize bytes, payload of psize bytes */
static void entry(section *s, int kind, int arch, uint64_t flags, uint32_t hsize, uint32_t psize)
{
    size_t at = s->n;
    memset(s->b + at, 0, hsize + psize);
    put(s, (uint64_t)kind, 2);
    put(s, 0x0101, 2);
    put(s, hsize, 4);
    put(s, psize, 8);
    s->n = at + 28;
    put(s, (uint64_t)arch, 4);
    s->n = at + 40;
    put(s, flags, 8);
    s->n = at + hsize + psize;
}

START_TEST(test_parse_made)
{
    section s = {.n = 0};
    open_container(&s);
    entry(&s, 2, 100, 0x200011, 112, 40);   /* sm_100f, a 112-byte header */
    entry(&s, 2, 90, 0x100011, 64, 8);      /* sm_90a */
    close_container(&s);
    put(&s, 0, 8);                          /* zeros between containers */
    open_container(&s);
    close_container(&s);                    /* an empty container */
    open_container(&s);
    entry(&s, 1, 80, 0x8011, 80, 24);       /* compute_80 PTX, compressed flag, 80-byte header */
    entry(&s, 2, 90, 0x100011, 64, 8);      /* sm_90a again: listed once */
    close_container(&s);
    mmp_fatbin_info fi;
    ck_assert_msg(mmp_fatbin_parse(&fi, s.b, s.n) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_int_eq(fi.n, 3);
    char d[200];
    mmp_fatbin_describe(d, sizeof d, &fi);
    ck_assert_str_eq(d, "sm_100f, sm_90a, compute_80 (PTX)");
    ck_assert(mmp_fatbin_runs_on(&fi, 75) == 0);
    ck_assert(mmp_fatbin_runs_on(&fi, 86) == 1);   /* the PTX */

    /* damage: every one a PARSE error, never a read past the buffer */
    section bad = s;
    bad.b[16 + 4] = 0xff;   /* the first entry's header size: past its container */
    bad.b[16 + 5] = 0xff;
    ck_assert_int_eq(mmp_fatbin_parse(&fi, bad.b, bad.n), MMP_STATUS_PARSE);
    bad = s;
    bad.b[16 + 8 + 3] = 0x7f;   /* the first entry's payload size */
    ck_assert_int_eq(mmp_fatbin_parse(&fi, bad.b, bad.n), MMP_STATUS_PARSE);
    bad = s;
    bad.b[0] = 0x51;   /* the magic */
    ck_assert_int_eq(mmp_fatbin_parse(&fi, bad.b, bad.n), MMP_STATUS_PARSE);
    ck_assert_ptr_nonnull(strstr(mmp_error_last(), "no container magic at byte 0"));
    for (size_t cut = 1; cut < s.n; cut++) {   /* every truncation: refused or parsed, within bounds */
        unsigned char *copy = malloc(cut);
        memcpy(copy, s.b, cut);
        mmp_status st = mmp_fatbin_parse(&fi, copy, cut);
        ck_assert(st == MMP_STATUS_OK || st == MMP_STATUS_PARSE);
        free(copy);
    }
}
END_TEST

/* ---- real libraries ---- */
static void lib_path(char *path, size_t size, const char *name)
{
    snprintf(path, size, "%s/%s", MMP_PLUGIN_FIXTURES, name);
}

START_TEST(test_host_library)
{
    char path[4096];
    lib_path(path, sizeof path, "fix_good.so");
    mmp_fatbin_info fi;
    ck_assert_msg(mmp_fatbin_read_elf(&fi, path) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_int_eq(fi.have_fatbin, 0);
    ck_assert_int_eq(mmp_fatbin_runs_on(&fi, 80), 1);   /* nothing known against it */
    char d[64];
    mmp_fatbin_describe(d, sizeof d, &fi);
    ck_assert_str_eq(d, "no fat binary");
    lib_path(path, sizeof path, "does_not_exist.so");
    ck_assert_int_eq(mmp_fatbin_read_elf(&fi, path), MMP_STATUS_IO);
    char tmp[] = "/tmp/check_fatbin.XXXXXX";
    int fd = mkstemp(tmp);
    ck_assert_int_ge(fd, 0);
    static const char text[] = "not an ELF file at all, but longer than any ELF header is, 64 bytes or more\n";
    ck_assert_int_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    ck_assert_int_eq(mmp_fatbin_read_elf(&fi, tmp), MMP_STATUS_PARSE);
    ck_assert_ptr_nonnull(strstr(mmp_error_last(), "not a 64-bit little-endian ELF file"));
    unlink(tmp);
}
END_TEST

#ifdef MMP_CUDA_PLUGINS
typedef struct {
    const char *lib;
    const char *codes;             /* mmp_fatbin_describe */
    int runs[6];                   /* on 75, 80, 86, 90, 100, 120 */
} real_case;
static const int real_cc[6] = {75, 80, 86, 90, 100, 120};
static const real_case reals[] = {
    {"fixcu_sm80.so", "sm_80", {0, 1, 1, 0, 0, 0}},
    {"fixcu_sm90a.so", "sm_90a", {0, 0, 0, 1, 0, 0}},
    {"fixcu_ptx80.so", "compute_80 (PTX)", {0, 1, 1, 1, 1, 1}},
    {"fixcu_sm80_90.so", "sm_80, compute_90 (PTX)", {0, 1, 1, 1, 1, 1}},
};

START_TEST(test_real_library)
{
    const real_case *t = &reals[_i];
    char path[4096];
    lib_path(path, sizeof path, t->lib);
    mmp_fatbin_info fi;
    ck_assert_msg(mmp_fatbin_read_elf(&fi, path) == MMP_STATUS_OK, "%s", mmp_error_last());
    char d[200];
    mmp_fatbin_describe(d, sizeof d, &fi);
    printf("%s: %s\n", t->lib, d);
    ck_assert_int_eq(fi.have_fatbin, 1);
    ck_assert_str_eq(d, t->codes);
    for (int i = 0; i < 6; i++)
        ck_assert_msg(mmp_fatbin_runs_on(&fi, real_cc[i]) == t->runs[i], "%s on %d", t->lib, real_cc[i]);
}
END_TEST

/* The example plugin, built with the build's architectures: SASS for each, nothing else odd. */
START_TEST(test_example_library)
{
    char path[4096];
    lib_path(path, sizeof path, "libmyplugin.so");
    mmp_fatbin_info fi;
    ck_assert_msg(mmp_fatbin_read_elf(&fi, path) == MMP_STATUS_OK, "%s", mmp_error_last());
    char d[200];
    mmp_fatbin_describe(d, sizeof d, &fi);
    printf("libmyplugin.so: %s\n", d);
    ck_assert_int_ge(fi.n, 1);
    int sass = 0;
    for (int i = 0; i < fi.n; i++) sass += !fi.codes[i].ptx && fi.codes[i].arch >= 80 && fi.codes[i].suffix == 0;
    ck_assert_int_ge(sass, 1);
}
END_TEST
#endif

static Suite *fatbin_suite(void)
{
    Suite *s = suite_create("fatbin");
    TCase *tc = tcase_create("fatbin");
    tcase_add_loop_test(tc, test_rule, 0, (int)(sizeof rules / sizeof rules[0]));
    tcase_add_test(tc, test_parse_made);
    tcase_add_test(tc, test_host_library);
#ifdef MMP_CUDA_PLUGINS
    tcase_add_loop_test(tc, test_real_library, 0, (int)(sizeof reals / sizeof reals[0]));
    tcase_add_test(tc, test_example_library);
#endif
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(fatbin_suite)
