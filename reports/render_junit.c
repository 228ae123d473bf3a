/* render_junit.c — JUnit XML (the Jenkins xUnit "junit-10.xsd" dialect, kept in
 * reports/schema/): one <testsuite> per kernel, one <testcase> per case with
 * classname = kernel and name = case ID; FAIL -> <failure>, ERROR -> <error>, SKIP -> <skipped>,
 * each with the reasons and the message; the environment as <properties>.
 * The skipped count is on each <testsuite>, not on <testsuites>: the Jenkins xUnit plugin
 * validates its input against junit-10.xsd, whose root allows only name, time, tests, failures
 * and errors; GitLab, pytest's readers and the JUnit plugin sum the suites' counts. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/report.h"
#include "render.h"

void mmp_xml_escape(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p;
        if (c == '&') fputs("&amp;", out);
        else if (c == '<') fputs("&lt;", out);
        else if (c == '>') fputs("&gt;", out);
        else if (c == '"') fputs("&quot;", out);
        else if (c == '\'') fputs("&#39;", out);
        else if (c == '\n') fputs("&#10;", out);
        else if (c == '\t') fputs("&#9;", out);
        else if (c < 0x20 || c == 0x7f) { /* not allowed in XML 1.0 (0x7f discouraged): dropped */ }
        else if (c < 0x80) fputc((int)c, out);
        else {
            int n = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
            unsigned cp = n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
            int ok = n != 0;
            for (int i = 1; ok && i < n; i++) {
                if ((p[i] & 0xC0) != 0x80) ok = 0;   /* also stops at the NUL terminator */
                else cp = (cp << 6) | (p[i] & 0x3F);
            }
            static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
            if (ok && (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE ||
                       cp == 0xFFFF))
                ok = 0;
            if (ok) { fwrite(p, 1, (size_t)n, out); p += n; continue; }
            fputs("\xEF\xBF\xBD", out);
        }
        p++;
    }
}

static void prop(FILE *out, const char *name, const char *value)
{
    fprintf(out, "      <property name=\"%s\" value=\"", name);
    mmp_xml_escape(out, value);
    fputs("\"/>\n", out);
}

static void env_properties(FILE *out, const mmp_env *e)
{
    char buf[64];
    fputs("    <properties>\n", out);
    prop(out, "gpu", e->gpu);
    snprintf(buf, sizeof buf, "%d.%d", e->cc_major, e->cc_minor);
    prop(out, "compute_capability", buf);
    prop(out, "driver", e->driver);
    prop(out, "cuda_runtime", e->runtime);
    prop(out, "cublas", e->cublas);
    prop(out, "mpfr", e->mpfr);
    prop(out, "git_sha", e->git_sha);
    snprintf(buf, sizeof buf, "%" PRIu64, e->seed);
    prop(out, "seed", buf);
    prop(out, "command", e->command);
    fputs("    </properties>\n", out);
}

static double seconds(double ms) { return ms > 0 ? ms / 1000.0 : 0.0; }

static void testcase(FILE *out, const mmp_case_result *c)
{
    char reasons[512];
    mmp_reason_format(reasons, sizeof reasons, c->reasons);
    fputs("    <testcase classname=\"", out);
    mmp_xml_escape(out, c->kernel);
    fputs("\" name=\"", out);
    mmp_xml_escape(out, c->id);
    fprintf(out, "\" time=\"%.6f\"", seconds(c->time_total_ms));
    static const char *const tag[MMP_VERDICT_COUNT_] = {NULL, "failure", "error", "skipped"};
    const char *t = (unsigned)c->verdict < MMP_VERDICT_COUNT_ ? tag[c->verdict] : "error";
    if (!t) { fputs("/>\n", out); return; }
    fprintf(out, ">\n      <%s type=\"", t);
    mmp_xml_escape(out, reasons[0] ? reasons : mmp_verdict_name(c->verdict));
    fputs("\" message=\"", out);
    mmp_xml_escape(out, c->message[0] ? c->message : reasons);
    fputs("\">", out);
    if (c->verdict == MMP_VERDICT_FAIL) {
        char body[1024];
        const mmp_metrics *m = &c->metrics;
        snprintf(body, sizeof body,
                 "reasons: %s\nprecision: %s  shape: %" PRId64 "x%" PRId64 "x%" PRId64 "  seed: %" PRIu64
                 "\ntolerance: %s\nmax |err|/bound: %.6g (probabilistic: %.6g)  max ULP: %.6g\n"
                 "elements beyond tolerance: %" PRId64 " of %" PRId64 "  worst at (%" PRId64 ",%" PRId64
                 "): got %.9g want %.9g\n",
                 reasons, c->precision, c->m, c->n, c->k, c->seed, c->tolerance, m->max_ratio_det,
                 m->max_ratio_prob, m->max_ulp, m->above_tol, m->count, m->worst_i, m->worst_j, m->worst_got,
                 m->worst_want);
        mmp_xml_escape(out, body);
    } else {
        mmp_xml_escape(out, reasons);
    }
    fprintf(out, "</%s>\n    </testcase>\n", t);
}

void mmp_report_print_junit(FILE *out, const mmp_run *run)
{
    int64_t counts[MMP_VERDICT_COUNT_];
    mmp_report_counts(run, counts);
    double total = 0;
    for (size_t i = 0; i < run->n_cases; i++) total += seconds(run->cases[i].time_total_ms);
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
    fputs("<testsuites name=\"mmaprobe ", out);
    mmp_xml_escape(out, run->kind);
    fprintf(out, "\" tests=\"%zu\" failures=\"%" PRId64 "\" errors=\"%" PRId64 "\" time=\"%.6f\">\n",
            run->n_cases, counts[MMP_VERDICT_FAIL], counts[MMP_VERDICT_ERROR], total);
    /* one suite per kernel, in first-seen order */
    char *done = calloc(run->n_cases ? run->n_cases : 1, 1);
    for (size_t i = 0; done && i < run->n_cases; i++) {
        if (done[i]) continue;
        const char *kernel = run->cases[i].kernel;
        int64_t n = 0, f = 0, e = 0, s = 0;
        double t = 0;
        for (size_t j = i; j < run->n_cases; j++) {
            const mmp_case_result *c = &run->cases[j];
            if (strcmp(c->kernel, kernel) != 0) continue;
            n++;
            f += c->verdict == MMP_VERDICT_FAIL;
            e += c->verdict == MMP_VERDICT_ERROR || (unsigned)c->verdict >= MMP_VERDICT_COUNT_;
            s += c->verdict == MMP_VERDICT_SKIP;
            t += seconds(c->time_total_ms);
        }
        fputs("  <testsuite name=\"", out);
        mmp_xml_escape(out, kernel[0] ? kernel : "(no kernel)");
        fprintf(out, "\" tests=\"%" PRId64 "\" failures=\"%" PRId64 "\" errors=\"%" PRId64 "\" skipped=\"%" PRId64
                     "\" time=\"%.6f\" timestamp=\"",
                n, f, e, s, t);
        mmp_xml_escape(out, run->env.started);
        fputs("\" hostname=\"", out);
        mmp_xml_escape(out, run->env.hostname);
        fputs("\">\n", out);
        env_properties(out, &run->env);
        for (size_t j = i; j < run->n_cases; j++)
            if (strcmp(run->cases[j].kernel, kernel) == 0) {
                done[j] = 1;
                testcase(out, &run->cases[j]);
            }
        fputs("  </testsuite>\n", out);
    }
    free(done);
    fputs("</testsuites>\n", out);
}
