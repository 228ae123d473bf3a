/* merge.c — merge shard runs into one document.
 *
 * Refuses inputs of different schema versions or kinds (naming both files and versions), and
 * a case ID present in two inputs with different results (verdict, reasons, message,
 * metrics; timing, shard and device may differ). Identical duplicates are kept once. Shard
 * coverage: a run's shard is its cases' (shard_index, shard_count), or "--shard I/N" in its
 * command line (a shard the filter left empty); all must share N, and an index of 0..N-1 that
 * no input has makes the merged run incomplete. The merged env is the first input's; "shards" keeps every input's env (flattened when an input
 * is itself a merge). Probe results: members of the same name that are arrays are
 * concatenated; others must be identical.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/report.h"
#include "mmaprobe/json.h"
#include "json_run.h"

typedef struct ref { const char *id; size_t run, i; } ref;

static int ref_cmp(const void *a, const void *b)
{
    const ref *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    if (c) return c;
    return x->run != y->run ? (x->run < y->run ? -1 : 1) : (x->i < y->i ? -1 : x->i > y->i);
}

/* The case as JSON with the fields that may differ between identical results zeroed. */
static char *result_key(const mmp_case_result *c)
{
    mmp_case_result r = *c;
    r.time_kernel_ms = r.time_reference_ms = r.time_total_ms = 0;
    memset(r.time_stage_ms, 0, sizeof r.time_stage_ms);
    r.shard_index = 0;
    r.shard_count = 1;
    r.device = 0;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    mmp_jw w;
    mmp_jw_init(&w, f, 0);
    mmp_json_write_case(&w, &r);
    fclose(f);
    return buf;
}

static mmp_status add_env(mmp_run *out, const mmp_env *e)
{
    mmp_env *s = realloc(out->shards, (out->n_shards + 1) * sizeof *s);
    if (!s) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory merging");
    out->shards = s;
    out->shards[out->n_shards++] = *e;
    return MMP_STATUS_OK;
}

/* Merge the shards' probe results: every group's entries in shard order (instructions,
 * captures and kernels of all shards; layout counts and memory disagreements summed). */
static mmp_status merge_probes(mmp_run *out, const mmp_run *const *runs, size_t n)
{
    for (size_t r = 0; r < n; r++) {
        if (!runs[r]->probes) continue;
        if (!out->probes) {
            out->probes = malloc(sizeof *out->probes);
            if (!out->probes) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory merging probes");
            mmp_probe_results_init(out->probes);
        }
        MMP_TRY(mmp_probe_results_append(out->probes, runs[r]->probes));
    }
    return MMP_STATUS_OK;
}

/* "--shard I/N" (or --shard=I/N) in a command line: 1 with *idx, *cnt */
static int command_shard(int *idx, int *cnt, const char *cmd)
{
    for (const char *p = strstr(cmd, "--shard"); p; p = strstr(p + 1, "--shard")) {
        const char *v = p + 7;
        if (*v != ' ' && *v != '=') continue;
        int a, b;
        if (sscanf(v + 1, "%d/%d", &a, &b) == 2 && b >= 1 && a >= 0 && a < b) { *idx = a; *cnt = b; return 1; }
    }
    return 0;
}

/* Every shard index of the inputs' shard count present, else out->complete = 0 with the
 * missing ones named in interrupted_by; INVALID for inputs of different shard counts. */
static mmp_status check_coverage(mmp_run *out, const mmp_run *const *runs, const char *const *names, size_t n)
{
    int count = 0;
    size_t first = 0;
    for (size_t r = 0; r < n; r++) {
        int idx, cnt = 0;   /* the run's shard count: its command line's, else its cases' */
        if (!command_shard(&idx, &cnt, runs[r]->env.command))
            for (size_t i = 0; i < runs[r]->n_cases && cnt <= 1; i++) cnt = runs[r]->cases[i].shard_count;
        if (cnt <= 1) continue;
        if (count && cnt != count)
            return MMP_ERR(MMP_STATUS_INVALID, "cannot merge %s (shards of %d) with %s (shards of %d)", names[first], count,
                           names[r], cnt);
        if (!count) { count = cnt; first = r; }
    }
    if (count <= 1) return MMP_STATUS_OK;
    unsigned char *seen = calloc((size_t)count, 1);
    if (!seen) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory merging");
    for (size_t r = 0; r < n; r++) {
        int idx, cnt;
        if (command_shard(&idx, &cnt, runs[r]->env.command) && cnt == count) seen[idx] = 1;
        for (size_t i = 0; i < runs[r]->n_cases; i++) {
            const mmp_case_result *c = &runs[r]->cases[i];
            if (c->shard_count == count && c->shard_index >= 0 && c->shard_index < count) seen[c->shard_index] = 1;
        }
    }
    int missing = 0, first_missing = -1;
    for (int s = 0; s < count; s++)
        if (!seen[s]) { missing++; if (first_missing < 0) first_missing = s; }
    free(seen);
    if (missing) {
        out->complete = 0;
        if (missing == 1) snprintf(out->interrupted_by, sizeof out->interrupted_by, "shard %d/%d missing", first_missing, count);
        else snprintf(out->interrupted_by, sizeof out->interrupted_by, "%d of %d shards missing", missing, count);
    }
    return MMP_STATUS_OK;
}

mmp_status mmp_report_merge(mmp_run *out, const mmp_run *const *runs, const char *const *names, size_t n)
{
    if (n == 0) return MMP_ERR(MMP_STATUS_INVALID, "merge needs at least one input");
    for (size_t r = 1; r < n; r++) {
        if (runs[r]->schema_major != runs[0]->schema_major || runs[r]->schema_minor != runs[0]->schema_minor)
            return MMP_ERR(MMP_STATUS_INVALID, "cannot merge %s (schema %d.%d) with %s (schema %d.%d): different schema versions",
                           names[0], runs[0]->schema_major, runs[0]->schema_minor, names[r], runs[r]->schema_major,
                           runs[r]->schema_minor);
        if (strcmp(runs[r]->kind, runs[0]->kind) != 0)
            return MMP_ERR(MMP_STATUS_INVALID, "cannot merge %s (a %s run) with %s (a %s run)", names[0], runs[0]->kind,
                           names[r], runs[r]->kind);
    }
    size_t total = 0;
    for (size_t r = 0; r < n; r++) total += runs[r]->n_cases;
    ref *refs = malloc((total ? total : 1) * sizeof *refs);
    char *keep = calloc(total ? total : 1, 1);
    if (!refs || !keep) { free(refs); free(keep); return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory merging"); }
    size_t k = 0;
    for (size_t r = 0; r < n; r++)
        for (size_t i = 0; i < runs[r]->n_cases; i++) refs[k++] = (ref){runs[r]->cases[i].id, r, i};
    qsort(refs, total, sizeof *refs, ref_cmp);
    mmp_status st = MMP_STATUS_OK;
    /* keep[] is indexed by the position of the case in input order */
    size_t *base = calloc(n + 1, sizeof *base);
    if (!base) st = MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory merging");
    for (size_t r = 0; base && r < n; r++) base[r + 1] = base[r] + runs[r]->n_cases;
    for (size_t a = 0; st == MMP_STATUS_OK && a < total;) {
        size_t b = a + 1;
        while (b < total && strcmp(refs[b].id, refs[a].id) == 0) b++;
        keep[base[refs[a].run] + refs[a].i] = 1;       /* the first occurrence in input order */
        if (b - a > 1) {
            const mmp_case_result *first = &runs[refs[a].run]->cases[refs[a].i];
            char *ka = result_key(first);
            for (size_t j = a + 1; ka && j < b && st == MMP_STATUS_OK; j++) {
                const mmp_case_result *other = &runs[refs[j].run]->cases[refs[j].i];
                char *kb = result_key(other);
                if (!kb || strcmp(ka, kb) != 0)
                    st = MMP_ERR(MMP_STATUS_INVALID, "case %s is in %s (%s) and %s (%s) with different results",
                                 first->id, names[refs[a].run], mmp_verdict_name(first->verdict), names[refs[j].run],
                                 mmp_verdict_name(other->verdict));
                free(kb);
            }
            if (!ka) st = MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory merging");
            free(ka);
        }
        a = b;
    }
    out->env = runs[0]->env;
    snprintf(out->kind, sizeof out->kind, "%s", runs[0]->kind);
    snprintf(out->suite, sizeof out->suite, "%s", runs[0]->suite);
    out->complete = 1;
    out->schema_major = runs[0]->schema_major;
    out->schema_minor = runs[0]->schema_minor;
    for (size_t r = 0; st == MMP_STATUS_OK && r < n; r++) {
        if (strcmp(runs[r]->suite, out->suite) != 0) snprintf(out->suite, sizeof out->suite, "(several)");
        if (!runs[r]->complete) {
            out->complete = 0;
            if (!out->interrupted_by[0])
                snprintf(out->interrupted_by, sizeof out->interrupted_by, "%s", runs[r]->interrupted_by);
        }
        if (runs[r]->n_shards)
            for (size_t s = 0; st == MMP_STATUS_OK && s < runs[r]->n_shards; s++) st = add_env(out, &runs[r]->shards[s]);
        else
            st = add_env(out, &runs[r]->env);
        for (size_t i = 0; st == MMP_STATUS_OK && i < runs[r]->n_cases; i++)
            if (keep[base[r] + i]) st = mmp_run_add(out, &runs[r]->cases[i]);
    }
    if (st == MMP_STATUS_OK) st = merge_probes(out, runs, n);
    if (st == MMP_STATUS_OK) st = check_coverage(out, runs, names, n);
    free(base);
    free(refs);
    free(keep);
    return st;
}
