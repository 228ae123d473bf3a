/* check_fused_pipe.c — the int4_fused persistent kernel's mbarrier protocol simulated on the host
 * under random interleavings, and the shared-memory budget checks (kernels/int4_fused_budget.c). */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/int4_fused_layout.h"
#include "mmaprobe/fused.h"
#include "tests/check_main.h"


/* ---- mbarrier model: a phase completes when `expected` arrivals came; test_wait.parity(P) is true
 * when the phase of parity P has completed, i.e. the current phase's parity differs from P ---- */
typedef struct simbar { int expected, pending, completed; } simbar;
static void simbar_init(simbar *b, int n) { b->expected = b->pending = n; b->completed = 0; }
static void simbar_arrive(simbar *b)
{
    if (--b->pending == 0) { b->completed++; b->pending = b->expected; }
}
static int simbar_wait(const simbar *b, int parity) { return (b->completed & 1) != parity; }

enum { SIM_CONSUMERS = MMP_FUSEDK_WARPS };
typedef struct simpipe {
    int S, ktiles, tiles;
    simbar full[MMP_FUSEDK_MAX_STAGES], empty[MMP_FUSEDK_MAX_STAGES], res_full[2], res_empty[2];
    int64_t tag[MMP_FUSEDK_MAX_STAGES];   /* iteration whose data a stage holds */
    int readers[MMP_FUSEDK_MAX_STAGES], bt_readers[2];
    int64_t bt_tag[2];                    /* tile whose rank-up tile a B buffer holds */
    /* producer */
    int p_state, p_tile, p_kt;
    int64_t p_it;
    /* consumers */
    int c_state[SIM_CONSUMERS], c_tile[SIM_CONSUMERS], c_kt[SIM_CONSUMERS];
    int64_t c_it[SIM_CONSUMERS];
} simpipe;

/* one step of the producer (mirrors fk_persistent_kernel's warp 0); 0 if blocked or done */
static int sim_producer(simpipe *P)
{
    if (P->p_tile == P->tiles) return 0;
    if (P->p_state == 0) {                                   /* tile start: the rank-up tile */
        const int i = P->p_tile, buf = i & 1;
        if (i >= 2 && !simbar_wait(&P->res_empty[buf], ((i >> 1) - 1) & 1)) return 0;
        ck_assert_msg(P->bt_readers[buf] == 0, "producer overwrote B buffer %d while it was read", buf);
        P->bt_tag[buf] = i;
        simbar_arrive(&P->res_full[buf]);
        P->p_state = 1;
        P->p_kt = 0;
        return 1;
    }
    const int s = mmp_fusedk_stage(P->p_it, P->S);
    if (P->p_it >= P->S && !simbar_wait(&P->empty[s], mmp_fusedk_parity(P->p_it - P->S, P->S))) return 0;
    ck_assert_msg(P->readers[s] == 0, "producer overwrote stage %d while it was read", s);
    P->tag[s] = P->p_it;
    simbar_arrive(&P->full[s]);   /* the plain arrive (scales) ... */
    simbar_arrive(&P->full[s]);   /* ... and the cp.async arrive */
    P->p_it++;
    if (++P->p_kt == P->ktiles) { P->p_tile++; P->p_state = 0; }
    return 1;
}

static int sim_consumer(simpipe *P, int w)
{
    if (P->c_tile[w] == P->tiles) return 0;
    const int64_t it = P->c_it[w];
    const int s = mmp_fusedk_stage(it, P->S);
    switch (P->c_state[w]) {
    case 0:
        if (!simbar_wait(&P->full[s], mmp_fusedk_parity(it, P->S))) return 0;
        ck_assert_msg(P->tag[s] == it, "consumer %d read stage %d holding iteration %lld, wanted %lld", w, s,
                      (long long)P->tag[s], (long long)it);
        P->readers[s]++;
        P->c_state[w] = 1;
        return 1;
    case 1:
        P->readers[s]--;
        simbar_arrive(&P->empty[s]);
        P->c_it[w]++;
        P->c_state[w] = ++P->c_kt[w] == P->ktiles ? 2 : 0;
        return 1;
    case 2:
        if (!simbar_wait(&P->res_full[P->c_tile[w] & 1], (P->c_tile[w] >> 1) & 1)) return 0;
        ck_assert_int_eq(P->bt_tag[P->c_tile[w] & 1], P->c_tile[w]);
        P->bt_readers[P->c_tile[w] & 1]++;
        P->c_state[w] = 3;
        return 1;
    default:
        P->bt_readers[P->c_tile[w] & 1]--;
        simbar_arrive(&P->res_empty[P->c_tile[w] & 1]);
        P->c_tile[w]++;
        P->c_kt[w] = 0;
        P->c_state[w] = 0;
        return 1;
    }
}

START_TEST(test_pipeline_protocol)
{
    uint64_t rng = mmp_check_seed * 2654435761u + 1;
    for (int S = 2; S <= MMP_FUSEDK_MAX_STAGES; S++)
        for (int ktiles = 1; ktiles <= 9; ktiles += 4) {
            simpipe P;
            memset(&P, 0, sizeof P);
            P.S = S;
            P.ktiles = ktiles;
            P.tiles = 7;
            for (int s = 0; s < S; s++) {
                simbar_init(&P.full[s], 2);
                simbar_init(&P.empty[s], SIM_CONSUMERS);
                P.tag[s] = -1;
            }
            for (int b = 0; b < 2; b++) {
                simbar_init(&P.res_full[b], 1);
                simbar_init(&P.res_empty[b], SIM_CONSUMERS);
            }
            for (;;) {
                int progressed = 0, done = P.p_tile == P.tiles;
                for (int w = 0; w < SIM_CONSUMERS; w++) done &= P.c_tile[w] == P.tiles;
                if (done) break;
                /* random agent first, then any that can move (a deadlock is no agent moving) */
                rng = rng * 6364136223846793005u + 1442695040888963407u;
                int first = (int)((rng >> 33) % (SIM_CONSUMERS + 1));
                for (int a = 0; a <= SIM_CONSUMERS && !progressed; a++) {
                    int agent = (first + a) % (SIM_CONSUMERS + 1);
                    progressed = agent == SIM_CONSUMERS ? sim_producer(&P) : sim_consumer(&P, agent);
                }
                ck_assert_msg(progressed, "deadlock: S=%d ktiles=%d", S, ktiles);
            }
        }
}
END_TEST

/* ---- the shared-memory budget ---- */
static const uint32_t H200_SMEM_SM = 233472, H200_OPTIN = 232448, H200_RESERVED = 1024;

START_TEST(test_budget_matches_layout)
{
    for (int mode = 0; mode < MMP_FUSED_MODE_COUNT_; mode++)
        for (int S = 1; S <= (mode == MMP_FUSED_MODE_SIMPLE ? 1 : MMP_FUSEDK_MAX_STAGES); S++) {
            mmp_fused_smem_budget b;
            ck_assert_int_eq(mmp_fused_smem_budget_make(&b, (mmp_fused_mode)mode, S, MMP_FUSED_FAULT_NONE), MMP_STATUS_OK);
            ck_assert_uint_eq(b.total, mmp_fused_smem_layout_bytes((mmp_fused_mode)mode, S));
            uint32_t limit = b.total + 100;   /* the budget's own pick at this limit must be S */
            int ks = mmp_fused_pick_stages((mmp_fused_mode)mode, limit, MMP_FUSED_FAULT_NONE, 0);
            ck_assert_msg(mmp_fused_smem_budget_check(&b, limit, ks, 0) == MMP_STATUS_OK, "%s", mmp_error_last());
            ck_assert_int_eq(ks, S);
        }
    /* the H200 decision, printed for the report */
    for (int ctas = 1; ctas <= 2; ctas++) {
        uint32_t limit = mmp_fused_smem_limit(H200_SMEM_SM, H200_OPTIN, H200_RESERVED, ctas);
        for (int mode = 0; mode < MMP_FUSED_MODE_COUNT_; mode++) {
            int S = mmp_fused_pick_stages((mmp_fused_mode)mode, limit, MMP_FUSED_FAULT_NONE, 0);
            printf("# H200, %d CTA/SM, limit %u B: mode %s picks %d stage(s)\n", ctas, limit,
                   mmp_fused_mode_name((mmp_fused_mode)mode), S);
            ck_assert_int_ge(S, 1);
            mmp_fused_smem_budget b;
            ck_assert_int_eq(mmp_fused_smem_budget_make(&b, (mmp_fused_mode)mode, S, MMP_FUSED_FAULT_NONE), MMP_STATUS_OK);
            if (ctas == 1) mmp_fused_smem_budget_print(stdout, &b);
            ck_assert_msg(mmp_fused_smem_budget_check(&b, limit, S, 0) == MMP_STATUS_OK, "%s", mmp_error_last());
        }
    }
}
END_TEST

/* The seed's bug: a buffer counted twice. The check must reject the budget (naming the part kind),
 * and for a per-stage buffer the stage count the budget would pick drops. */
START_TEST(test_budget_double_count_detected)
{
    const mmp_fused_budget_fault fault = _i ? MMP_FUSED_FAULT_X_TWICE : MMP_FUSED_FAULT_RANKUP_TWICE;
    const uint32_t limit = mmp_fused_smem_limit(H200_SMEM_SM, H200_OPTIN, H200_RESERVED, 1);
    const int good = mmp_fused_pick_stages(MMP_FUSED_MODE_PERSISTENT, limit, MMP_FUSED_FAULT_NONE, 0);
    const int bad = mmp_fused_pick_stages(MMP_FUSED_MODE_PERSISTENT, limit, fault, 1);
    mmp_fused_smem_budget b;
    ck_assert_int_eq(mmp_fused_smem_budget_make(&b, MMP_FUSED_MODE_PERSISTENT, good, fault), MMP_STATUS_OK);
    mmp_fused_smem_budget_print(stdout, &b);
    mmp_status st = mmp_fused_smem_budget_check(&b, limit, good, 0);
    printf("# fault %s: kernel picks %d stages, the faulty budget %d; check says: %s\n",
           _i ? "X tile twice" : "rank-up tile twice", good, bad, mmp_error_last());
    ck_assert_int_eq(st, MMP_STATUS_INTERNAL);
    ck_assert(strstr(mmp_error_last(), "residual") != NULL);
    if (_i) ck_assert_int_lt(bad, good);   /* the per-stage double count costs pipeline depth */
    /* even when totals were right, a wrong stage pick alone is reported */
    mmp_fused_smem_budget ok;
    ck_assert_int_eq(mmp_fused_smem_budget_make(&ok, MMP_FUSED_MODE_PERSISTENT, good, MMP_FUSED_FAULT_NONE), MMP_STATUS_OK);
    ck_assert_int_eq(mmp_fused_smem_budget_check(&ok, limit, good - 1, 0), MMP_STATUS_INTERNAL);
    ck_assert(strstr(mmp_error_last(), "stages") != NULL);
    /* and a measured size that differs (what cudaFuncGetAttributes would show) */
    ck_assert_int_eq(mmp_fused_smem_budget_check(&ok, limit, good, ok.total + 4096), MMP_STATUS_INTERNAL);
    ck_assert_int_eq(mmp_fused_smem_budget_check(&ok, limit, good, ok.total), MMP_STATUS_OK);
}
END_TEST

static Suite *fused_pipe_suite(void)
{
    Suite *s = suite_create("fused_pipe");
    TCase *tp = tcase_create("pipeline");
    tcase_add_test(tp, test_pipeline_protocol);
    tcase_add_test(tp, test_budget_matches_layout);
    tcase_add_loop_test(tp, test_budget_double_count_detected, 0, 2);
    suite_add_tcase(s, tp);
    return s;
}

MMP_CHECK_MAIN(fused_pipe_suite)
