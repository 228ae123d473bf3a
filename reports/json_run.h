/* reports/json_run.h — records <-> JSON values (internal to reports/; see json_run.c). */
#ifndef MMAPROBE_REPORTS_JSON_RUN_H
#define MMAPROBE_REPORTS_JSON_RUN_H

#include "mmaprobe/result.h"
#include "mmaprobe/json.h"
#include "mmaprobe/probe.h"

typedef struct mmp_json_ctx {
    const char *name;              /* file name for messages */
    int major, minor;              /* schema version of the document being read */
} mmp_json_ctx;

void mmp_json_write_env(mmp_jw *w, const mmp_env *e);
void mmp_json_write_case(mmp_jw *w, const mmp_case_result *r);
mmp_status mmp_json_read_env(const mmp_json_ctx *cx, mmp_env *e, const mmp_json *v, const char *path);
mmp_status mmp_json_read_case(const mmp_json_ctx *cx, mmp_case_result *r, const mmp_json *v, const char *path);
mmp_status mmp_json_expect(const mmp_json_ctx *cx, const mmp_json *v, mmp_json_type t, const char *path);
mmp_status mmp_json_read_string(const mmp_json_ctx *cx, char *dst, size_t size, const mmp_json *v,
                                const char *path, const char *key);
/* The typed probe results (json_probes.c): NULL writes null. */
void mmp_json_write_probes(mmp_jw *w, const mmp_probe_results *p);
mmp_status mmp_json_read_probes(const mmp_json_ctx *cx, mmp_probe_results *p, const mmp_json *v);
/* Its memory group (json_memory.c). */
void mmp_json_write_memory(mmp_jw *w, const mmp_memory_results *M);
mmp_status mmp_json_read_memory(const mmp_json_ctx *cx, mmp_memory_results *M, const mmp_json *v);

#endif
