/* reports/sample.h — a synthetic run with a planted fragment bug (see sample.c). */
#ifndef MMAPROBE_REPORTS_SAMPLE_H
#define MMAPROBE_REPORTS_SAMPLE_H
#include "mmaprobe/report.h"
/* run is initialised here; clear it with mmp_run_clear. Deterministic: same bytes every time. */
mmp_status mmp_report_sample(mmp_run *run);
#endif
