/* memory_counters.c — the counters every measurement method returns (memory_internal.h) and the
 * one judgment of a calibration row: wavefronts per instruction against the model's.
 *
 * The trust check: a counter method (CUPTI first) is accepted only when every calibration row
 * (stride-s 4/8/16-byte loads, ldmatrix rows; known answers in memory_calib.c) agrees with the
 * model under the same judgment the table printed by `probe --memory` applies.
 */
#include <math.h>
#include <stdio.h>

#include "memory_internal.h"

const char *const mmp_memory_metrics[MMP_MEMORY_N_METRICS] = {
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum",
    "smsp__sass_inst_executed_op_shared_st.sum",
    "smsp__sass_inst_executed_op_ldsm.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
};

double mmp_memory_counter(const mmp_memory_counters *k, int m)
{
    return k->have[m] ? k->v[m] : NAN;
}

double mmp_memory_calib_measured(const mmp_memory_counters *k, const mmp_memory_calib *c)
{
    /* A calibration kernel issues only one kind of shared load in its loop (lds or ldmatrix);
     * its wavefronts may be reported under _op_ld, _op_ldsm or both, so both are summed. */
    double wld = mmp_memory_counter(k, MMP_MEMORY_M_WF_LD), wsm = mmp_memory_counter(k, MMP_MEMORY_M_WF_LDSM);
    if (isnan(wld) && isnan(wsm)) return NAN;
    double wf = (isnan(wld) ? 0 : wld) + (isnan(wsm) ? 0 : wsm);
    double inst = c->kind == MMP_ACCESS_LDSM ? mmp_memory_counter(k, MMP_MEMORY_M_INST_LDSM)
                                             : mmp_memory_counter(k, MMP_MEMORY_M_INST_LD);
    /* Without an instruction counter (a profiler that refuses the smsp__sass_* metrics), the
     * launch's own count: its loop issues exactly MMP_MEMORY_CALIB_LOADS loads. The trust
     * check below still compares every row with the model. */
    if (isnan(inst)) inst = MMP_MEMORY_CALIB_LOADS;
    return inst > 0 ? wf / inst : NAN;
}

int mmp_memory_calib_agree(double measured, int model_wavefronts)
{
    /* The calibration loop's 256 loads dominate; the one-off zeroing of shared memory is stores
     * (another counter), so a measured figure within 15 % + half a wavefront is the model's. */
    return !isnan(measured) && fabs(measured - model_wavefronts) <= 0.15 * model_wavefronts + 0.5;
}

mmp_status mmp_memory_counters_accept(const mmp_memory_counters *meas, int nmeas, const char *label)
{
    size_t nc;
    const mmp_memory_calib *c = mmp_memory_calibs(&nc);
    if (!meas || nmeas != (int)nc)
        return MMP_ERR(MMP_STATUS_INVALID, "%s counters cover %d launches, not the %zu calibration rows", label,
                       meas ? nmeas : 0, nc);
    for (size_t i = 0; i < nc; i++) {
        mmp_warp_access a;
        mmp_smem_cost cost;
        mmp_memory_calib_access(&a, &c[i]);
        mmp_memory_smem_cost(&cost, &a);
        double got = mmp_memory_calib_measured(&meas[i], &c[i]);
        if (!mmp_memory_calib_agree(got, cost.wavefronts)) {
            char mv[32];
            if (isnan(got)) snprintf(mv, sizeof mv, "nothing (counters missing)");
            else snprintf(mv, sizeof mv, "%.4g", got);
            return MMP_ERR(MMP_STATUS_INVALID, "%s counters disagree with calibration %s: measured %s, model %d",
                           label, c[i].name, mv, cost.wavefronts);
        }
    }
    return MMP_STATUS_OK;
}
