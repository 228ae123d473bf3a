/* layout_io.c — the layout capture record and its text format (described in mmaprobe/layout.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/layout.h"

#define CAPTURE_MAGIC "mmaprobe-layout-capture 1"

void mmp_layout_capture_init(mmp_layout_capture *cap)
{
    memset(cap, 0, sizeof *cap);
}

void mmp_layout_capture_clear(mmp_layout_capture *cap)
{
    free(cap->slots);
    mmp_layout_capture_init(cap);
}

int mmp_layout_capture_find_frag(const mmp_layout_capture *cap, const char *name)
{
    for (int f = 0; f < cap->n_frags; f++)
        if (!strcmp(cap->frags[f].name, name)) return f;
    return -1;
}

mmp_status mmp_layout_capture_add_frag(int *index, mmp_layout_capture *cap, const char *name,
                                       int rows, int cols, int elems_per_lane, int elems_per_reg)
{
    if (cap->n_frags >= MMP_LAYOUT_MAX_FRAGS)
        return MMP_ERR(MMP_STATUS_INVALID, "capture %s: more than %d fragments", cap->id, MMP_LAYOUT_MAX_FRAGS);
    if (!name[0] || strlen(name) >= MMP_LAYOUT_NAME || strchr(name, ' '))
        return MMP_ERR(MMP_STATUS_INVALID, "capture %s: bad fragment name '%s'", cap->id, name);
    if (mmp_layout_capture_find_frag(cap, name) >= 0)
        return MMP_ERR(MMP_STATUS_INVALID, "capture %s: fragment %s declared twice", cap->id, name);
    if (rows <= 0 || cols <= 0 || rows > 4096 || cols > 4096 || elems_per_lane <= 0 ||
        elems_per_lane > 4096 || elems_per_reg <= 0)
        return MMP_ERR(MMP_STATUS_INVALID, "capture %s: fragment %s has bad sizes %d x %d, %d per lane, %d per register",
                       cap->id, name, rows, cols, elems_per_lane, elems_per_reg);
    mmp_layout_frag *f = &cap->frags[cap->n_frags];
    snprintf(f->name, sizeof f->name, "%s", name);
    f->rows = rows;
    f->cols = cols;
    f->elems_per_lane = elems_per_lane;
    f->elems_per_reg = elems_per_reg;
    *index = cap->n_frags++;
    return MMP_STATUS_OK;
}

mmp_status mmp_layout_capture_add(mmp_layout_capture *cap, int frag, int lane, int elem, int row, int col)
{
    if (frag < 0 || frag >= cap->n_frags)
        return MMP_ERR(MMP_STATUS_INVALID, "capture %s: no fragment %d", cap->id, frag);
    const mmp_layout_frag *f = &cap->frags[frag];
    if (lane < 0 || lane >= cap->threads || elem < 0 || elem >= f->elems_per_lane)
        return MMP_ERR(MMP_STATUS_INVALID, "capture %s: %s lane %d elem %d out of range (%d threads, %d per lane)",
                       cap->id, f->name, lane, elem, cap->threads, f->elems_per_lane);
    if (cap->n_slots == cap->cap_slots) {
        size_t n = cap->cap_slots ? 2 * cap->cap_slots : 1024;
        mmp_layout_slot *s = realloc(cap->slots, n * sizeof *s);
        if (!s) return MMP_ERR(MMP_STATUS_NO_MEMORY, "capture %s: out of memory", cap->id);
        cap->slots = s;
        cap->cap_slots = n;
    }
    mmp_layout_slot *s = &cap->slots[cap->n_slots++];
    s->frag = (int16_t)frag;
    s->lane = (int16_t)lane;
    s->elem = (int16_t)elem;
    s->reg = (int16_t)(elem / f->elems_per_reg);
    s->row = row;
    s->col = col;
    return MMP_STATUS_OK;
}

mmp_status mmp_layout_capture_write(FILE *out, const mmp_layout_capture *cap)
{
    fprintf(out, "%s\n", CAPTURE_MAGIC);
    fprintf(out, "# fragment-layout capture; format: include/mmaprobe/layout.h\n");
    fprintf(out, "capture %s %s %d\n", cap->id, cap->kind, cap->threads);
    fprintf(out, "source %s\n", cap->source[0] ? cap->source : "unknown");
    for (int f = 0; f < cap->n_frags; f++) {
        const mmp_layout_frag *fr = &cap->frags[f];
        fprintf(out, "fragment %s %d %d %d %d\n", fr->name, fr->rows, fr->cols, fr->elems_per_lane,
                fr->elems_per_reg);
    }
    fprintf(out, "# fragment lane reg elem row col\n");
    for (size_t i = 0; i < cap->n_slots; i++) {
        const mmp_layout_slot *s = &cap->slots[i];
        fprintf(out, "%s %d %d %d %d %d\n", cap->frags[s->frag].name, s->lane, s->reg, s->elem, s->row, s->col);
    }
    fprintf(out, "end\n");
    return ferror(out) ? MMP_ERR(MMP_STATUS_IO, "capture %s: write failed", cap->id) : MMP_STATUS_OK;
}

mmp_status mmp_layout_capture_write_file(const char *path, const mmp_layout_capture *cap)
{
    FILE *f = fopen(path, "w");
    if (!f) return MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
    mmp_status st = mmp_layout_capture_write(f, cap);
    if (fclose(f) != 0 && st == MMP_STATUS_OK) st = MMP_ERR(MMP_STATUS_IO, "cannot write %s", path);
    return st;
}

static mmp_status parse_line(mmp_layout_capture *cap, char *line, const char *path, int ln, int *state)
{
    char a[64], b[64];
    int v[6];
    if (*state == 0) {
        if (strcmp(line, CAPTURE_MAGIC) != 0)
            return MMP_ERR(MMP_STATUS_PARSE, "%s:%d: not a layout capture (expected '%s')", path, ln, CAPTURE_MAGIC);
        *state = 1;
        return MMP_STATUS_OK;
    }
    if (*state == 2)
        return MMP_ERR(MMP_STATUS_PARSE, "%s:%d: text after 'end'", path, ln);
    if (!strncmp(line, "capture ", 8)) {
        if (sscanf(line + 8, "%63s %63s %d", a, b, &v[0]) != 3 || v[0] <= 0 || v[0] > 1024)
            return MMP_ERR(MMP_STATUS_PARSE, "%s:%d: expected 'capture <id> <kind> <threads>'", path, ln);
        snprintf(cap->id, sizeof cap->id, "%s", a);
        snprintf(cap->kind, sizeof cap->kind, "%s", b);
        cap->threads = v[0];
    } else if (!strncmp(line, "source ", 7)) {
        snprintf(cap->source, sizeof cap->source, "%s", line + 7);
    } else if (!strncmp(line, "fragment ", 9)) {
        int idx;
        if (sscanf(line + 9, "%63s %d %d %d %d", a, &v[0], &v[1], &v[2], &v[3]) != 5)
            return MMP_ERR(MMP_STATUS_PARSE, "%s:%d: expected 'fragment <name> <rows> <cols> <elems_per_lane> <elems_per_reg>'", path, ln);
        if (mmp_layout_capture_add_frag(&idx, cap, a, v[0], v[1], v[2], v[3]) != MMP_STATUS_OK)
            return MMP_ERR(MMP_STATUS_PARSE, "%s:%d: %s", path, ln, mmp_error_last());
    } else if (!strcmp(line, "end")) {
        *state = 2;
    } else {
        char extra;
        if (sscanf(line, "%63s %d %d %d %d %d %c", a, &v[0], &v[1], &v[2], &v[3], &v[4], &extra) != 6)
            return MMP_ERR(MMP_STATUS_PARSE, "%s:%d: expected '<fragment> <lane> <reg> <elem> <row> <col>'", path, ln);
        if (!cap->threads)
            return MMP_ERR(MMP_STATUS_PARSE, "%s:%d: element line before the 'capture' line", path, ln);
        int f = mmp_layout_capture_find_frag(cap, a);
        if (f < 0) return MMP_ERR(MMP_STATUS_PARSE, "%s:%d: undeclared fragment '%s'", path, ln, a);
        if (mmp_layout_capture_add(cap, f, v[0], v[2], v[3], v[4]) != MMP_STATUS_OK)
            return MMP_ERR(MMP_STATUS_PARSE, "%s:%d: %s", path, ln, mmp_error_last());
        if (v[1] != v[2] / cap->frags[f].elems_per_reg)
            return MMP_ERR(MMP_STATUS_PARSE, "%s:%d: reg %d does not hold elem %d (%d elements per register)",
                           path, ln, v[1], v[2], cap->frags[f].elems_per_reg);
    }
    return MMP_STATUS_OK;
}

mmp_status mmp_layout_capture_read(mmp_layout_capture *cap, const char *path)
{
    mmp_layout_capture_clear(cap);
    FILE *f = fopen(path, "r");
    if (!f) return MMP_ERR(MMP_STATUS_IO, "cannot read %s: %s", path, strerror(errno));
    char line[512];
    int ln = 0, state = 0;
    mmp_status st = MMP_STATUS_OK;
    while (st == MMP_STATUS_OK && fgets(line, sizeof line, f)) {
        ln++;
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            st = MMP_ERR(MMP_STATUS_PARSE, "%s:%d: line too long", path, ln);
            break;
        }
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        if (!len || line[0] == '#') continue;
        st = parse_line(cap, line, path, ln, &state);
    }
    fclose(f);
    if (st == MMP_STATUS_OK && state != 2)
        st = MMP_ERR(MMP_STATUS_PARSE, "%s: %s", path, state == 0 ? "empty file" : "no 'end' line (truncated?)");
    if (st == MMP_STATUS_OK && !cap->n_frags)
        st = MMP_ERR(MMP_STATUS_PARSE, "%s: no fragment declared", path);
    if (st != MMP_STATUS_OK) mmp_layout_capture_clear(cap);
    return st;
}

mmp_status mmp_layout_capture_swap_lanes(mmp_layout_capture *cap, const char *frag, int lane1, int lane2)
{
    int f = mmp_layout_capture_find_frag(cap, frag);
    if (f < 0) return MMP_ERR(MMP_STATUS_INVALID, "capture %s: no fragment %s", cap->id, frag);
    for (size_t i = 0; i < cap->n_slots; i++) {
        mmp_layout_slot *s = &cap->slots[i];
        if (s->frag != f || s->lane != lane1) continue;
        for (size_t k = 0; k < cap->n_slots; k++) {
            mmp_layout_slot *t = &cap->slots[k];
            if (t->frag == f && t->lane == lane2 && t->elem == s->elem) {
                int r = s->row, c = s->col;
                s->row = t->row; s->col = t->col;
                t->row = r; t->col = c;
                break;
            }
        }
    }
    return MMP_STATUS_OK;
}
