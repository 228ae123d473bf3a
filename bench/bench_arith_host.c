/* bench_arith_host.c — the host side of `mmaprobe probe --arith`, timed per instruction on CPU.
 *
 * Build: part of the normal build (bench/ sources). Run: build/bench_arith_host [N_RANDOM] [H200]
 * For every instruction with a parameter-table row for the GPU (and every integer instruction),
 * the steps the real run does on the host, each timed on one core:
 *   design  the probe vectors + N_RANDOM random ones (the GPU child does this, in threads);
 *   [model  outputs from the table's model: stands in for the GPU capture, not counted];
 *   bin     write + read the binary capture (child -> parent hand-over);
 *   analyse fit the model parameters and replay every vector (the parent, in threads).
 * It prints the sums and the wall-clock estimate for T threads: max(sum / T, longest single
 * instruction) for each of the two parallel phases.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mmaprobe/probe.h"
#include "probes/arith_internal.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    size_t nr = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000;
    const char *gpu = argc > 2 ? argv[2] : "H200";
    size_t n;
    const mmp_arith_instr *ins = mmp_arith_instrs(&n);
    double sd = 0, sb = 0, sa = 0, md = 0, ma = 0;
    int count = 0;
    char path[] = "/tmp/mmp-bench-arith-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) { perror("mkstemp"); return 3; }
    close(fd);
    printf("# bench_arith_host: %zu random vectors per instruction, model %s\n", nr, gpu);
    printf("%-26s %8s %8s %8s %8s\n", "instruction", "vectors", "design", "bin", "analyse");
    for (size_t i = 0; i < n; i++) {
        const mmp_model_preset *row = mmp_model_preset_find(gpu, ins[i].id);
        if (!row && !mmp_arith_is_integer(ins[i].in_format)) continue;
        mmp_capture cap, back;
        double t0 = now();
        if (mmp_arith_design(&cap, &ins[i], nr, 1) != MMP_STATUS_OK) { puts(mmp_error_last()); return 4; }
        double t1 = now();
        if (mmp_arith_model_outputs(&cap, row ? &row->params : NULL) != MMP_STATUS_OK) { puts(mmp_error_last()); return 4; }
        double t2 = now();
        if (mmp_capture_write_bin(path, &cap) != MMP_STATUS_OK || mmp_capture_read_bin(&back, path) != MMP_STATUS_OK) {
            puts(mmp_error_last());
            return 3;
        }
        double t3 = now();
        mmp_arith_report rep;
        if (mmp_arith_analyse(&rep, &back) != MMP_STATUS_OK) { puts(mmp_error_last()); return 4; }
        double t4 = now();
        printf("%-26s %8zu %7.3fs %7.3fs %7.3fs  mismatches %zu\n", ins[i].id, cap.count, t1 - t0, t3 - t2,
               t4 - t3, rep.total_mismatches);
        sd += t1 - t0; sb += t3 - t2; sa += t4 - t3;
        if (t1 - t0 > md) md = t1 - t0;
        if (t4 - t3 + (t3 - t2) > ma) ma = t4 - t3 + (t3 - t2);
        count++;
        mmp_capture_clear(&cap);
        mmp_capture_clear(&back);
    }
    unlink(path);
    printf("# %d instructions: design %.2f s, binary hand-over %.2f s, analysis %.2f s (one core, sums)\n",
           count, sd, sb, sa);
    for (int t = 2; t <= 16; t *= 2) {
        double w = (sd / t > md ? sd / t : md) + ((sb + sa) / t > ma ? (sb + sa) / t : ma);
        printf("# estimated host wall time with %2d threads: %.2f s (+ GPU capture)\n", t, w);
    }
    return 0;
}
