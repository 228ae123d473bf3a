/* replay_main.c — a main() for libFuzzer harnesses in ordinary builds: feeds every file named
 * (or every file in every directory named) to LLVMFuzzerTestOneInput once. Used by the ctest
 * tests fuzz_replay_<name> (suites/fuzz.cmake) to keep seed corpora and fixed crashers passing,
 * under ASan/UBSan too. Exit 0 when every input ran, 2 when one could not be read. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "replay: cannot read %s\n", path); return 2; }
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    for (size_t r; buf && (r = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += r;
        if (n == cap) {
            unsigned char *nb = realloc(buf, cap *= 2);
            if (!nb) { free(buf); buf = NULL; }
            else buf = nb;
        }
    }
    fclose(f);
    if (!buf) { fprintf(stderr, "replay: out of memory on %s\n", path); return 2; }
    /* an exact-size copy, so that ASan sees reads past the input's end */
    unsigned char *exact = malloc(n ? n : 1);
    memcpy(exact, buf, n);
    free(buf);
    printf("replay %s (%zu bytes)\n", path, n);
    fflush(stdout);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

int main(int argc, char **argv)
{
    int rc = 0, files = 0;
    for (int i = 1; i < argc; i++) {
        struct stat s;
        if (stat(argv[i], &s) != 0) { fprintf(stderr, "replay: no such file %s\n", argv[i]); rc = 2; continue; }
        if (!S_ISDIR(s.st_mode)) { rc |= run_file(argv[i]); files++; continue; }
        struct dirent **ents;
        int ne = scandir(argv[i], &ents, NULL, alphasort);
        for (int e = 0; e < ne; e++) {
            if (ents[e]->d_name[0] != '.') {
                char p[4096];
                snprintf(p, sizeof p, "%s/%s", argv[i], ents[e]->d_name);
                if (stat(p, &s) == 0 && S_ISREG(s.st_mode)) { rc |= run_file(p); files++; }
            }
            free(ents[e]);
        }
        if (ne >= 0) free(ents);
    }
    printf("replayed %d inputs\n", files);
    return files ? rc : 2;
}
