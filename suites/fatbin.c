/* fatbin.c — which GPU code a shared library carries: its ELF .nv_fatbin section read as NVIDIA's
 * fat binary containers (host C, no CUDA: the analysis needs no GPU), and the rule of which
 * device can run it.
 *
 * The section is a sequence of containers; each is a 16-byte header (magic 0xBA55ED50, version
 * 1, header size 16, then the bytes of its entries) followed by entries. Each entry starts with
 * its own header (64 bytes, more for newer architectures: its size is in the header) and is
 * followed by its payload:
 *     +0  u16 kind (1 PTX, 2 ELF cubin)   +4  u32 header size   +8  u64 payload size
 *     +28 u32 architecture (80 for sm_80 / compute_80)         +40 u64 flags
 * Flag 0x100000 marks an arch-specific target (sm_90a), 0x200000 a family-specific one
 * (sm_100f), as nvcc 13 writes them. Only headers are read: payloads may be compressed.
 *
 * Runnable on compute capability X.Y (cc = 10 X + Y): a cubin sm_XZ with the same major and
 * Z <= Y (an arch-specific cubin only on exactly its own X.Z); PTX compute_XZ with XZ <= cc,
 * JIT-compiled by the driver (arch-specific PTX only on exactly its own X.Z, family-specific
 * PTX only within its major).
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/runner.h"

enum {
    FATBIN_MAGIC = 0xBA55ED50u,
    FATBIN_KIND_PTX = 1,
    FATBIN_KIND_ELF = 2,
    FATBIN_ENTRY_MIN = 64,
    FATBIN_FLAG_ARCH_SPECIFIC = 0x100000,
    FATBIN_FLAG_FAMILY_SPECIFIC = 0x200000,
};

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const unsigned char *p) { return (uint32_t)rd16(p) | (uint32_t)rd16(p + 2) << 16; }
static uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

static void add_code(mmp_fatbin_info *info, int arch, int ptx, int suffix)
{
    for (int i = 0; i < info->n; i++)
        if (info->codes[i].arch == arch && info->codes[i].ptx == ptx && info->codes[i].suffix == suffix) return;
    if (info->n == MMP_FATBIN_MAX_CODES) {
        info->truncated = 1;
        return;
    }
    info->codes[info->n++] = (mmp_fatbin_code){arch, ptx, suffix};
}

/* The entries of one container (bytes p[0..size) after its header). */
static mmp_status parse_entries(mmp_fatbin_info *info, const unsigned char *p, uint64_t size, uint64_t at)
{
    uint64_t off = 0;
    while (off < size) {
        if (size - off < FATBIN_ENTRY_MIN)
            return MMP_ERR(MMP_STATUS_PARSE, "fatbin: entry at byte %llu truncated", (unsigned long long)(at + off));
        const unsigned char *e = p + off;
        uint32_t hsize = rd32(e + 4);
        uint64_t psize = rd64(e + 8);
        if (hsize < FATBIN_ENTRY_MIN || hsize > size - off || psize > size - off - hsize)
            return MMP_ERR(MMP_STATUS_PARSE, "fatbin: entry at byte %llu: sizes %u + %llu run past its container",
                           (unsigned long long)(at + off), hsize, (unsigned long long)psize);
        uint16_t kind = rd16(e);
        uint32_t arch = rd32(e + 28);
        uint64_t flags = rd64(e + 40);
        int suffix = flags & FATBIN_FLAG_ARCH_SPECIFIC ? 'a' : flags & FATBIN_FLAG_FAMILY_SPECIFIC ? 'f' : 0;
        if ((kind == FATBIN_KIND_PTX || kind == FATBIN_KIND_ELF) && arch > 0 && arch < 10000)
            add_code(info, (int)arch, kind == FATBIN_KIND_PTX, suffix);
        off += hsize + psize;
    }
    return MMP_STATUS_OK;
}

mmp_status mmp_fatbin_parse(mmp_fatbin_info *info, const void *section, size_t size)
{
    memset(info, 0, sizeof *info);
    info->have_fatbin = 1;
    const unsigned char *s = section;
    size_t off = 0;
    while (off < size) {
        if (size - off < 16 || rd32(s + off) != FATBIN_MAGIC) {
            /* padding between containers is zeros; anything else is not a fat binary */
            if (s[off] != 0)
                return MMP_ERR(MMP_STATUS_PARSE, "fatbin: no container magic at byte %zu", off);
            off++;
            continue;
        }
        uint16_t hsize = rd16(s + off + 6);
        uint64_t fsize = rd64(s + off + 8);
        if (hsize < 16 || hsize > size - off || fsize > size - off - hsize)
            return MMP_ERR(MMP_STATUS_PARSE, "fatbin: container at byte %zu: sizes %u + %llu run past the section",
                           off, hsize, (unsigned long long)fsize);
        MMP_TRY(parse_entries(info, s + off + hsize, fsize, off + hsize));
        off += hsize + (size_t)fsize;
    }
    return MMP_STATUS_OK;
}

static mmp_status read_at(FILE *f, void *buf, size_t size, uint64_t at, const char *path, const char *what)
{
    if (fseeko(f, (off_t)at, SEEK_SET) != 0 || fread(buf, 1, size, f) != size)
        return MMP_ERR(MMP_STATUS_PARSE, "%s: cannot read its %s (not an ELF shared library?)", path, what);
    return MMP_STATUS_OK;
}

/* The .nv_fatbin section of an open ELF64 file: *data malloc'ed (NULL, size 0 when none). */
static mmp_status find_section(unsigned char **data, size_t *size, FILE *f, const char *path)
{
    Elf64_Ehdr eh;
    MMP_TRY(read_at(f, &eh, sizeof eh, 0, path, "ELF header"));
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != ELFDATA2LSB)
        return MMP_ERR(MMP_STATUS_PARSE, "%s: not a 64-bit little-endian ELF file", path);
    if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shstrndx >= eh.e_shnum)
        return MMP_ERR(MMP_STATUS_PARSE, "%s: no usable section table", path);
    Elf64_Shdr *sh = calloc(eh.e_shnum, sizeof *sh);
    if (!sh) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory");
    mmp_status st = read_at(f, sh, (size_t)eh.e_shnum * sizeof *sh, eh.e_shoff, path, "section table");
    char *names = NULL;
    const Elf64_Shdr *strs = &sh[eh.e_shstrndx];
    if (st == MMP_STATUS_OK && (strs->sh_size == 0 || strs->sh_size > (1u << 24)))
        st = MMP_ERR(MMP_STATUS_PARSE, "%s: section names of %llu bytes", path, (unsigned long long)strs->sh_size);
    if (st == MMP_STATUS_OK && !(names = malloc(strs->sh_size + 1))) st = MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory");
    if (st == MMP_STATUS_OK) st = read_at(f, names, strs->sh_size, strs->sh_offset, path, "section names");
    if (st == MMP_STATUS_OK) names[strs->sh_size] = '\0';
    for (unsigned i = 0; st == MMP_STATUS_OK && i < eh.e_shnum; i++) {
        if (sh[i].sh_name >= strs->sh_size || strcmp(names + sh[i].sh_name, ".nv_fatbin") != 0) continue;
        if (sh[i].sh_type == SHT_NOBITS || sh[i].sh_size == 0) break;
        if (sh[i].sh_size > ((uint64_t)1 << 31)) {
            st = MMP_ERR(MMP_STATUS_PARSE, "%s: .nv_fatbin of %llu bytes", path, (unsigned long long)sh[i].sh_size);
            break;
        }
        if (!(*data = malloc(sh[i].sh_size))) {
            st = MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory for %s's .nv_fatbin", path);
            break;
        }
        *size = sh[i].sh_size;
        st = read_at(f, *data, *size, sh[i].sh_offset, path, ".nv_fatbin section");
        break;
    }
    free(names);
    free(sh);
    return st;
}

mmp_status mmp_fatbin_read_elf(mmp_fatbin_info *info, const char *path)
{
    memset(info, 0, sizeof *info);
    FILE *f = fopen(path, "rb");
    if (!f) return MMP_ERR(MMP_STATUS_IO, "%s: %s", path, strerror(errno));
    unsigned char *data = NULL;
    size_t size = 0;
    mmp_status st = find_section(&data, &size, f, path);
    fclose(f);
    if (st == MMP_STATUS_OK && data && (st = mmp_fatbin_parse(info, data, size)) != MMP_STATUS_OK) {
        char msg[400];
        snprintf(msg, sizeof msg, "%s", mmp_error_last());
        st = MMP_ERR(MMP_STATUS_PARSE, "%s: %s", path, msg);
    }
    free(data);
    return st;
}

int mmp_fatbin_code_runs_on(const mmp_fatbin_code *c, int cc)
{
    if (c->suffix == 'a') return c->arch == cc;
    if (!c->ptx || c->suffix == 'f') return c->arch / 10 == cc / 10 && c->arch <= cc;
    return c->arch <= cc;
}

int mmp_fatbin_runs_on(const mmp_fatbin_info *info, int cc)
{
    if (!info->have_fatbin || info->truncated) return 1;   /* nothing known against it */
    for (int i = 0; i < info->n; i++)
        if (mmp_fatbin_code_runs_on(&info->codes[i], cc)) return 1;
    return 0;
}

void mmp_fatbin_describe(char *buf, size_t size, const mmp_fatbin_info *info)
{
    size_t used = 0;
    buf[0] = '\0';
    if (!info->have_fatbin || info->n == 0) {
        snprintf(buf, size, "%s", info->have_fatbin ? "no GPU code" : "no fat binary");
        return;
    }
    for (int pass = 0; pass < 2; pass++)   /* SASS first, then PTX */
        for (int i = 0; i < info->n && used < size; i++) {
            const mmp_fatbin_code *c = &info->codes[i];
            if (c->ptx != pass) continue;
            char suf[2] = {(char)c->suffix, 0};
            int w = snprintf(buf + used, size - used, "%s%s_%d%s%s", used ? ", " : "", c->ptx ? "compute" : "sm",
                             c->arch, suf, c->ptx ? " (PTX)" : "");
            used += w > 0 ? (size_t)w : 0;
        }
    if (info->truncated && used < size) snprintf(buf + used, size - used, ", ...");
}
