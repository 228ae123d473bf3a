/* fuzz_channel.c — libFuzzer harness for the runner's result-channel decoder
 * (mmp_runner_channel_decode through mmp_runner_rx_push / mmp_runner_rx_next, runner_channel.c):
 * what the parent believes of the bytes a kernel's process sends.
 *
 * Build (clang only):  CC=clang CXX=clang++ cmake -S . -B build-fuzz -DMMP_FUZZ=ON -DMMP_ENABLE_CUDA=OFF
 *                      cmake --build build-fuzz --target fuzz_channel
 * Run:                 build-fuzz/tests/fuzz_channel -jobs=1 -max_total_time=600 -max_len=4096 \
 *                          fuzz-work/channel tests/fuzz/corpus/channel
 * Replayed over tests/fuzz/corpus/channel/ by the ctest fuzz_replay_channel in every build.
 *
 * Input: byte 0 chooses the mode and how the stream is cut into reads (bits 1-7: chunk size,
 * 0 = all at once). Mode bit 0 = 0: the rest is the raw byte stream. Mode bit 0 = 1: the rest is
 * a script of 8-byte operations, each one frame encoded with the right check, so the fuzzer
 * reaches every test behind the check:
 *   type | flags | case index | xor value | offset (uint32, little-endian)
 *   flags: 1 another pid, 2 the previous sequence number again, 4 another nonce, 8 only the
 *   first half of the frame; a result's payload is the case's own record with the byte at
 *   offset % its size xor'ed with the value.
 * The receiver expects two host_f32 cases from one child (nonce, pid fixed).
 * Properties: never crashes; an event is of a known type, for the case expected, and a result
 * is that case's record with a valid verdict and terminated strings; every error says
 * "protocol: "; nothing is accepted after an error.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/registry.h"
#include "suites/runner_internal.h"

static const uint64_t NONCE = 0x5eed5eed12345678ull;
enum { PID = 777 };

static mmp_case cases[2];
static mmp_case_result good[2];
static int ready;

static void init(void)
{
    if (ready) return;
    const mmp_kernel_desc *k = mmp_registry_find("host_f32", MMP_REGISTRY_ALL);
    if (!k) abort();
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    for (int i = 0; i < 2; i++) {
        mmp_case_init(&cases[i], k, 8 + i, 8, 8, MMP_DIST_UNIFORM, 1);
        mmp_runner_result_for_case(&good[i], &cases[i], &o);
    }
    ready = 1;
}

/* The script's frames as one stream (malloc'ed, *len bytes). */
static unsigned char *script(const uint8_t *p, size_t n, size_t *len)
{
    size_t ops = n / 8, cap = ops * MMP_RUNNER_FRAME_MAX + 1, used = 0;
    unsigned char *out = malloc(cap);
    if (!out) abort();
    uint64_t seq = 0;
    for (size_t i = 0; i < ops; i++, p += 8) {
        uint32_t type = p[0], flags = p[1], off;
        uint64_t index = p[2];
        memcpy(&off, p + 4, 4);
        mmp_case_result r = good[index & 1];
        ((unsigned char *)&r)[off % sizeof r] ^= p[3];
        uint64_t s = (flags & 2) && seq ? seq - 1 : seq;
        size_t f = mmp_runner_channel_encode(out + used, cap - used, NONCE + ((flags & 4) ? 1 : 0), s,
                                             PID + ((flags & 1) ? 1 : 0), type, index, &r);
        if (!f) {   /* a type the encoder does not know: a bare header of it */
            mmp_runner_frame h;
            memset(&h, 0, sizeof h);
            h.magic = MMP_RUNNER_MAGIC;
            h.type = type;
            h.seq = s;
            h.index = index;
            h.pid = PID;
            memcpy(out + used, &h, sizeof h);
            f = sizeof h;
        }
        if (flags & 8) f /= 2;
        used += f;
        if (!(flags & 2)) seq++;
    }
    *len = used;
    return out;
}

static void check_event(const mmp_runner_event *ev, uint64_t want_index)
{
    if (ev->type < MMP_RUNNER_MSG_START || ev->type > MMP_RUNNER_MSG_RESULT || ev->index != want_index) abort();
    if (ev->type != MMP_RUNNER_MSG_RESULT) return;
    const mmp_case_result *r = &ev->result;
    if (!memchr(r->id, 0, sizeof r->id) || !memchr(r->message, 0, sizeof r->message)) abort();
    if (strcmp(r->id, cases[want_index].id) != 0 || (unsigned)r->verdict >= MMP_VERDICT_COUNT_) abort();
    if (r->m != cases[want_index].m || r->n_unwritten < 0) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    init();
    size_t len = size - 1;
    unsigned char *made = NULL;
    const unsigned char *stream = data + 1;
    if (data[0] & 1) stream = made = script(data + 1, size - 1, &len);
    size_t chunk = data[0] >> 1;
    if (!chunk) chunk = len ? len : 1;
    static mmp_runner_rx rx;
    mmp_runner_rx_init(&rx, NONCE, PID, cases, 0, 2, 0, 1);
    int failed = 0;
    for (size_t at = 0; at < len && !failed;) {
        size_t take = len - at < chunk ? len - at : chunk;
        size_t took = mmp_runner_rx_push(&rx, stream + at, take);
        at += took;
        if (rx.have > sizeof rx.buf) abort();
        for (;;) {
            mmp_runner_event ev;
            int got = 0;
            size_t want = rx.next;
            if (mmp_runner_rx_next(&rx, &ev, &got) != MMP_STATUS_OK) {
                if (strncmp(mmp_error_last(), "protocol: ", 10) != 0 || got) abort();
                failed = 1;
                break;
            }
            if (!got) break;
            check_event(&ev, want);
        }
        if (!took && !failed) abort();   /* a full buffer holds a whole frame: it must decode */
    }
    free(made);
    return 0;
}
