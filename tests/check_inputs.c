/* check_inputs.c — the built `mmaprobe` program (MMP_BINARY) against hostile inputs: paths that
 * a shell would run, FIFOs where files are expected, counts that would saturate or wrap, unknown
 * accumulator models, missing documents, escape sequences bound for the terminal, a suite file
 * that expands forever and a JSON document that would exhaust memory. Each must end in a
 * one-line error with the documented exit code (2 for bad input), quickly, and run nothing. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "memory_internal.h"
#include "mmaprobe/probe.h"
#include "mmaprobe/report.h"
#include "mmaprobe/sysio.h"
#include "tests/check_main.h"
#include "tests/lib/drive.h"
#include "tests/lib/sample.h"

#ifndef MMP_BINARY
#error "MMP_BINARY (path of the mmaprobe program) must be defined by CMake"
#endif

static double last_seconds;          /* wall time of the last run */
static long last_maxrss_kb;          /* its peak resident memory */

static void setup(void) { drive_tmpdir_make("check_inputs"); }
static void teardown(void) { drive_tmpdir_remove(); }

/* Run mmaprobe with argv (NULL-terminated, argv[0] ignored), stdout/stderr to files; killed
 * after limit_s seconds (a hang fails the test instead of stalling it). Returns the exit code. */
static int run_argv(char *const *argv, double limit_s)
{
    return drive_finish(drive_start(argv, NULL), limit_s, &last_seconds, &last_maxrss_kb);
}

/* Run "mmaprobe args..." (space-separated; "@" is replaced by the temp dir). Hangs and runaway work fail through the kill limit, never through a wall-time assertion (the
 * CI machine may be loaded): a FIFO that blocks would hang until killed. */
static double run_limit_s = 60;
static int run(const char *args) { return run_argv(drive_split(args), run_limit_s); }

static void expect(const char *args, int code, const char *says_at)
{
    char says[1024];
    size_t o = 0;
    for (const char *p = says_at; *p && o + 80 < sizeof says; p++) {
        if (*p == '@') o += (size_t)snprintf(says + o, sizeof says - o, "%s", tmpdir);
        else says[o++] = *p;
    }
    says[o] = '\0';
    int rc = run(args);
    const char *line = last_err_line();
    printf("%-64s -> %d (%.2f s) %s\n", args, rc, last_seconds, line);
    ck_assert_msg(rc == code, "%s: exit %d, want %d (%s)", args, rc, code, line);
    ck_assert_msg(strstr(line, says), "%s: '%s' should say '%s'", args, line, says);
    ck_assert_msg(strstr(line, "mmaprobe"), "the message names the program: %s", line);
}

/* ---- device strings and count bounds ---- */

START_TEST(test_device_strings)
{
    char *argv[] = {"mmaprobe", "env", "--device", "", NULL};
    ck_assert_int_eq(run_argv(argv, 30), 2);
    ck_assert_ptr_nonnull(strstr(last_err_line(), "bad --device ''"));
    expect("env --device 4294967296", 2, "bad --device '4294967296' (a device ordinal 0..1023)");
    expect("env --device -1", 2, "bad --device '-1'");
    expect("env --device 1x", 2, "bad --device '1x'");
    char *pargv[] = {"mmaprobe", "probe", "--layout", "--device", "", NULL};
    ck_assert_int_eq(run_argv(pargv, 30), 2);
    ck_assert_ptr_nonnull(strstr(last_err_line(), "bad --device ''"));
    expect("probe --layout --device 4294967296", 2, "bad --device '4294967296'");
    expect("validate --device 4294967296", 2, "bad --device '4294967296'");
}
END_TEST

START_TEST(test_count_bounds)
{
    expect("probe --arith --synthetic H200 --random -1", 2, "bad --random '-1' (random vectors per instruction: an integer 0..1000000)");
    expect("probe --arith --synthetic H200 --random 18446744073709551615", 2, "bad --random '18446744073709551615'");
    expect("probe --arith --synthetic H200 --random 1000001", 2, "bad --random '1000001'");
    expect("probe --arith --synthetic H200 --capture-keep -1", 2, "bad --capture-keep '-1'");
    expect("probe --arith --synthetic H200 --threads 0", 2, "bad --threads '0'");
    expect("probe --arith --synthetic H200 --threads 33", 2, "bad --threads '33'");
    expect("probe --arith --synthetic H200 --seed -1", 2, "bad --seed '-1'");
    expect("probe --memory --size 10", 2, "bad --size '10'");
    expect("probe --memory --counters magic", 2, "bad --counters 'magic'");
    expect("probe --arith --synthetic NOPE", 2, "unknown --synthetic GPU 'NOPE'");
    expect("probe --arith --instr mma.f16.f32,nope", 2, "unknown --instr 'nope'");
    expect("probe --random", 2, "option '--random' needs a value");
    /* within the bounds it runs: the synthetic model needs no device */
    int rc = run("probe --arith --synthetic H200 --instr mma.f16.f32 --random 10 --threads 1");
    ck_assert_msg(rc == 0, "a bounded synthetic probe: exit %d (%s)", rc, last_err_line());
}
END_TEST

/* ---- missing files: bad input (2) for every subcommand ---- */

START_TEST(test_missing_inputs_exit_2)
{
    expect("report @/missing.json", 2, "cannot open @/missing.json: No such file or directory");
    expect("report @/missing.jsonl", 2, "No such file or directory");
    expect("diff @/missing.json @/missing.json", 2, "cannot open @/missing.json: No such file or directory");
    expect("merge @/missing.json -o @/all.json", 2, "cannot open @/missing.json: No such file or directory");
    expect("validate --suite @/missing.suite -o @/r.json", 2, "No such file or directory");
    ck_assert_int_ne(access("all.json", F_OK), 0);
}
END_TEST

/* ---- FIFOs where files are expected: refused at once, never waited on ---- */

START_TEST(test_fifo_inputs)
{
    char fifo[256], fifo_json[256], fifo_jsonl[256];
    path_in(fifo, sizeof fifo, "fifo");
    path_in(fifo_json, sizeof fifo_json, "fifo.json");
    path_in(fifo_jsonl, sizeof fifo_jsonl, "run.jsonl");
    ck_assert_int_eq(mkfifo(fifo, 0644), 0);
    ck_assert_int_eq(mkfifo(fifo_json, 0644), 0);
    ck_assert_int_eq(mkfifo(fifo_jsonl, 0644), 0);
    static const char *const cases[] = {
        "validate --suite @/fifo -o @/r.json",
        "list --suite @/fifo",
        "report @/fifo.json",
        "report @/run.jsonl",
        "diff @/fifo.json @/fifo.json",
        "merge @/fifo.json -o @/all.json",
        "validate --acc-model @/fifo.json -o @/r.json",
    };
    run_limit_s = 20;   /* a read that waits on a FIFO never returns: killed, the test fails */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) expect(cases[i], 2, "a FIFO");
    /* a capture that is a FIFO: that instruction is not analysed, the probe does not block */
    char dir[256], cap[320];
    path_in(dir, sizeof dir, "caps");
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    snprintf(cap, sizeof cap, "%s/mma.f16.f32.txt", dir);
    ck_assert_int_eq(mkfifo(cap, 0644), 0);
    int rc = run("probe --arith --from-capture @/caps --instr mma.f16.f32");
    printf("probe --arith --from-capture FIFO -> %d (%.2f s)\n%s", rc, last_seconds, out_text);
    ck_assert_int_ne(rc, 0);
    ck_assert_ptr_nonnull(strstr(out_text, "not a regular file (a FIFO)"));
    run_limit_s = 60;
}
END_TEST

/* ---- --acc-model and the other file-valued options: checked up front ---- */

START_TEST(test_acc_model)
{
    expect("validate --acc-model NOPE -o @/r.json", 2, "bad --acc-model 'NOPE': neither a GPU of the model table");
    expect("validate --acc-model /nonexistent.json -o @/r.json", 2, "bad --acc-model '/nonexistent.json': No such file or directory");
    expect("validate --acc-model /etc/passwd -o @/r.json", 2, "bad --acc-model '/etc/passwd': neither a GPU");
    write_file("nomodel.json", "{\"format\":\"mmaprobe-run\",\"probes\":{\"arith\":[]}}\n");
    expect("validate --acc-model @/nomodel.json -o @/r.json", 2, "no accumulator model in it");
    expect("validate --acc-model @ -o @/r.json", 2, "neither a GPU");
    char r[256];
    path_in(r, sizeof r, "r.json");
    ck_assert_msg(access(r, F_OK) != 0, "nothing ran: no report");
    /* a GPU of the table and a probe document with models are accepted */
    int rc = run("validate --acc-model h200 --filter host_f32/*/exact/* -o @/r.json");
    ck_assert_msg(rc == 0, "--acc-model h200: exit %d (%s)", rc, last_err_line());
    rc = run("validate --acc-model " MMP_SOURCE_DIR "/results/h200/probe/probe.json --filter host_f32/*/exact/* -o @/r.json");
    ck_assert_msg(rc == 0, "--acc-model probe.json: exit %d (%s)", rc, last_err_line());
}
END_TEST

START_TEST(test_probe_paths)
{
    expect("probe --arith --from-capture @/none", 2, "bad --from-capture '@/none': No such file or directory");
    expect("probe --layout --from-capture /etc/passwd", 2, "bad --from-capture '/etc/passwd': not a directory");
    expect("probe --memory --ncu @/none", 2, "bad --ncu '@/none': No such file or directory");
    expect("probe --memory --ncu /etc/passwd", 2, "bad --ncu '/etc/passwd': not an executable file");
    expect("probe --arith --synthetic H200 --capture-dir /etc/passwd/x", 3, "cannot write --capture-dir '/etc/passwd/x'");
    expect("probe --layout --write-capture /etc/passwd", 3, "/etc/passwd is not a directory");
}
END_TEST

/* ---- no shell: a path is one argument, whatever it holds ---- */

static void mkdirs(const char *path)
{
    char p[1024];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    mkdir(p, 0755);
}

/* An executable stand-in for ncu at dir/ncu that appends its arguments, one a line, to dir/args. */
static void stand_in(char *ncu, size_t size, const char *dir)
{
    mkdirs(dir);
    snprintf(ncu, size, "%s/ncu", dir);
    FILE *f = fopen(ncu, "w");
    ck_assert_ptr_nonnull(f);
    fputs("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> \"$(dirname \"$0\")/args\"\n", f);
    fclose(f);
    ck_assert_int_eq(chmod(ncu, 0755), 0);
}

START_TEST(test_ncu_no_shell)
{
    char marker[256], dir[768], ncu[800], args[800], text[4096];
    path_in(marker, sizeof marker, "MARK");
    /* the shell would read: <tmp>/d ; touch ${IFS}<tmp>/MARK ; /ncu */
    snprintf(dir, sizeof dir, "%s/d;touch${IFS}%s;", tmpdir, marker);
    stand_in(ncu, sizeof ncu, dir);
    mmp_memory_counters out[4];
    char why[256] = "";
    int n = mmp_memory_ncu_run(ncu, "--size 64 --launch-child some_kernel", "^(?!mmp_calib_)", out, 4, why, sizeof why);
    ck_assert_int_eq(n, -1);   /* the stand-in prints no counters */
    ck_assert_msg(access(marker, F_OK) != 0, "the path was run as a shell command: %s exists", marker);
    snprintf(args, sizeof args, "%s/args", dir);
    slurp(text, sizeof text, args);
    printf("ncu stand-in got:\n%s(why: %s)\n", text, why);
    ck_assert_ptr_nonnull(strstr(text, "--query-metrics\n"));
    ck_assert_ptr_nonnull(strstr(text, "--kernel-name\nregex:^(?!mmp_calib_)\n"));
    ck_assert_ptr_nonnull(strstr(text, "\nprobe\n--memory\n--size\n64\n--launch-child\nsome_kernel\n"));
    ck_assert_ptr_nonnull(strstr(why, "no counters"));
    /* a path with spaces is one path too */
    snprintf(dir, sizeof dir, "%s/with space/and more", tmpdir);
    stand_in(ncu, sizeof ncu, dir);
    ck_assert_ptr_eq(mmp_memory_ncu_find(ncu), ncu);
    n = mmp_memory_ncu_run(ncu, "--calib-child", "mmp_calib_", out, 4, why, sizeof why);
    ck_assert_int_eq(n, -1);
    snprintf(args, sizeof args, "%s/args", dir);
    slurp(text, sizeof text, args);
    ck_assert_ptr_nonnull(strstr(text, "--memory\n--calib-child\n"));
    /* and through the program: a path that names nothing is refused before anything runs */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/x;touch${IFS}%s;", tmpdir, marker);
    char *argv[] = {"mmaprobe", "probe", "--memory", "--counters", "ncu", "--ncu", bad, NULL};
    ck_assert_int_eq(run_argv(argv, 60), 2);
    ck_assert_ptr_nonnull(strstr(last_err_line(), "No such file or directory"));
    char *argv2[] = {"mmaprobe", "probe", "--memory", "--no-measure", "--ncu", ncu, NULL};
    int rc = run_argv(argv2, 120);
    ck_assert_msg(rc != 2, "a path with spaces is a valid --ncu: exit %d (%s)", rc, last_err_line());
    ck_assert_msg(access(marker, F_OK) != 0, "%s exists", marker);
}
END_TEST

START_TEST(test_xz_capture_path)
{
    /* a capture stored as .xz, at a path with a quote, a ';' and spaces: read through xz -dc */
    if (system("xz --version >/dev/null 2>&1") != 0) { printf("SKIP: no xz\n"); return; }
    char dir[512], path[640], cmd[2048], marker[256];
    path_in(marker, sizeof marker, "MARK");
    snprintf(dir, sizeof dir, "%s/it's; touch %s; x", tmpdir, marker);
    mkdirs(dir);
    snprintf(path, sizeof path, "%s/h200-wmma.f16.f32.txt.xz", dir);
    snprintf(cmd, sizeof cmd, "cp '%s/results/h200/captures/arith/h200-wmma.f16.f32.txt.xz' \"%s\"", MMP_SOURCE_DIR, path);
    ck_assert_int_eq(system(cmd), 0);
    mmp_capture cap;
    mmp_status st = mmp_capture_read(&cap, path);
    ck_assert_msg(st == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_int_gt((int)cap.count, 0);
    mmp_capture_clear(&cap);
    ck_assert_int_ne(access(marker, F_OK), 0);
}
END_TEST

/* ---- escape sequences never reach the terminal ---- */

/* A byte a terminal would obey: C0 controls but newline and tab, DEL, a C1 control (U+0080..
 * U+009F) or a lone byte 0x80..0xFF outside a valid UTF-8 sequence. */
static int has_control(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        unsigned c = *p;
        if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f)) { p++; continue; }
        if (c < 0x20 || c == 0x7f) return 1;
        size_t n = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (!n || c == 0xC2 * (p[1] >= 0x80 && p[1] <= 0x9f)) return 1;
        for (size_t i = 1; i < n; i++)
            if ((p[i] & 0xC0) != 0x80) return 1;
        p += n;
    }
    return 0;
}

#define EVIL "\033[2J\033]0;owned\007\302\233"

START_TEST(test_escapes_list)
{
    char plugin[512];
    snprintf(plugin, sizeof plugin, "list --plugin %s/fix_esc_desc.so", MMP_PLUGIN_FIXTURES);
    ck_assert_int_eq(run(plugin), 0);
    printf("%s", out_text);
    ck_assert_ptr_nonnull(strstr(out_text, "fix_esc_f32"));
    ck_assert_ptr_nonnull(strstr(out_text, "evil \\x1B[2J\\x1B]0;owned\\x07 \\xC2\\x9B \\x9B end"));
    ck_assert_msg(!has_control(out_text) && !has_control(err_text), "list passed a control byte to the terminal");
    /* an error message quoting a file's text: no control byte either */
    write_file("esc.suite", "shape=8x8x8 kernel=" EVIL "\n");
    expect("list --suite @/esc.suite", 2, "matches no kernel");
    ck_assert(!has_control(err_text));
}
END_TEST

START_TEST(test_escapes_report)
{
    mmp_run run_doc;
    mmp_run_init(&run_doc);
    ck_assert_int_eq(mmp_report_sample(&run_doc), MMP_STATUS_OK);
    snprintf(run_doc.env.gpu, sizeof run_doc.env.gpu, "GPU" EVIL);
    snprintf(run_doc.env.hostname, sizeof run_doc.env.hostname, "host" EVIL);
    snprintf(run_doc.env.command, sizeof run_doc.env.command, "cmd" EVIL);
    for (size_t i = 0; i < run_doc.n_cases; i++) {
        snprintf(run_doc.cases[i].message, sizeof run_doc.cases[i].message, "message" EVIL);
        size_t n = strlen(run_doc.cases[i].id);
        snprintf(run_doc.cases[i].id + n, sizeof run_doc.cases[i].id - n, EVIL);
        snprintf(run_doc.cases[i].kernel, sizeof run_doc.cases[i].kernel, "k" EVIL);
    }
    if (run_doc.probes) snprintf(run_doc.probes->memory.why, sizeof run_doc.probes->memory.why, "why" EVIL);
    char doc[256], clean_doc[256];
    path_in(doc, sizeof doc, "evil.json");
    ck_assert_msg(mmp_report_write_json(doc, &run_doc) == MMP_STATUS_OK, "%s", mmp_error_last());
    mmp_run_clear(&run_doc);
    mmp_run_init(&run_doc);
    ck_assert_int_eq(mmp_report_sample(&run_doc), MMP_STATUS_OK);
    path_in(clean_doc, sizeof clean_doc, "clean.json");
    ck_assert_int_eq(mmp_report_write_json(clean_doc, &run_doc), MMP_STATUS_OK);
    mmp_run_clear(&run_doc);
    static const char *const cmds[] = {"report @/evil.json", "report @/evil.json --format md",
                                       "diff @/evil.json @/clean.json", "diff @/clean.json @/evil.json",
                                       "diff @/clean.json @/evil.json --format md"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        int rc = run(cmds[i]);
        ck_assert_msg(rc == 0 || rc == 1, "%s: exit %d (%s)", cmds[i], rc, last_err_line());
        if (has_control(out_text)) { printf("%s", out_text); fflush(stdout); }
        ck_assert_msg(!has_control(out_text), "%s passed a control byte to the terminal", cmds[i]);
        ck_assert_msg(!has_control(err_text), "%s: control byte on stderr", cmds[i]);
    }
    ck_assert_int_eq(run("report @/evil.json"), 0);
    ck_assert_ptr_nonnull(strstr(out_text, "GPU\\x1B[2J"));
    ck_assert_ptr_nonnull(strstr(out_text, "message\\x1B[2J\\x1B]0;owned\\x07\\xC2\\x9B"));
}
END_TEST

/* ---- unbounded work: suite expansion, JSON memory ---- */

START_TEST(test_suite_expansion_bounded)
{
    /* 17 MB of lines expanding to 16 x 16 cases per host kernel, under a filter keeping none */
    char p[256];
    path_in(p, sizeof p, "huge.suite");
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    const char *line = "shape=8x8x8 dist=exact,uniform,normal,wide,cancel,onehot,special,exact,uniform,normal,"
                       "wide,cancel,onehot,special,exact,uniform seed=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 "
                       "kernel=host_*\n";
    for (size_t written = 0; written < (17u << 20); written += strlen(line)) fputs(line, f);
    fclose(f);
    run_limit_s = 150;   /* an expansion that is not bounded runs for many minutes: killed */
    expect("validate --suite @/huge.suite --filter nomatch -o @/r.json", 2,
           "the suite expands to more than 1048576 cases before the filter");
    run_limit_s = 60;
}
END_TEST

START_TEST(test_json_memory_bounded)
{
    /* 40 MB of small values: the old reader needed ~60 bytes of tree per byte (2.4 GB) */
    char p[256];
    path_in(p, sizeof p, "dense.json");
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"format\":\"mmaprobe-run\",\"cases\":[", f);
    for (int i = 0; i < 20 << 20; i++) fputs("0,", f);
    fputs("0]}\n", f);
    fclose(f);
    run_limit_s = 150;
    expect("report @/dense.json", 2, "too many values for the document's size");
    run_limit_s = 60;
    printf("peak RSS %ld MB, %.2f s\n", last_maxrss_kb >> 10, last_seconds);
    ck_assert_msg(last_maxrss_kb < (400L << 10), "peak RSS %ld MB", last_maxrss_kb >> 10);
}
END_TEST

static Suite *inputs_suite(void)
{
    Suite *s = suite_create("inputs");
    TCase *tc = tcase_create("inputs");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, test_device_strings);
    tcase_add_test(tc, test_count_bounds);
    tcase_add_test(tc, test_missing_inputs_exit_2);
    tcase_add_test(tc, test_fifo_inputs);
    tcase_add_test(tc, test_acc_model);
    tcase_add_test(tc, test_probe_paths);
    tcase_add_test(tc, test_ncu_no_shell);
    tcase_add_test(tc, test_xz_capture_path);
    tcase_add_test(tc, test_escapes_list);
    tcase_add_test(tc, test_escapes_report);
    tcase_add_test(tc, test_suite_expansion_bounded);
    tcase_add_test(tc, test_json_memory_bounded);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(inputs_suite)
