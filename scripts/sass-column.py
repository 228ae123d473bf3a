#!/usr/bin/env python3
"""scripts/sass-column.py SASS_SUMMARY KERNELS_MD [--fill] > OUT.md — the "tensor instruction" column of
the timing table (--fill: KERNELS_MD itself with its "?" SASS cells filled): each kernel row of KERNELS_MD (bench_kernels output) matched to its function
in SASS_SUMMARY (10-validate.sh's per-function instruction counts from cuobjdump -sass).
Matching: the kernel name as a template argument or function name; the integer families through
their row table (kernels/int_ptx_addr.h: name -> mmp_intk_kernel<template args>); wgmma through
its launcher table (kernels/sm90a/wgmma.cu)."""
import re, sys, pathlib

root = pathlib.Path(__file__).resolve().parent.parent
ops_line, rows = None, {}
for line in open(sys.argv[1]):
    if line.startswith("kernel "):
        ops_line = line.split()[1:]
        continue
    if ops_line and line.strip() and not line[0].isdigit():
        counts = line.split()[-len(ops_line):]
        if all(c.isdigit() for c in counts):
            rows[line[:70].strip()] = dict(zip(ops_line, map(int, counts)))

funcs = {}
text = (root / "kernels/int_ptx_addr.h").read_text()
for m in re.finditer(r"X\((\w+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+)", text):
    funcs[m.group(1)] = "mmp_intk_kernel<%s>" % ", ".join(m.group(i) for i in range(2, 9))
funcs.update({"wgmma_bf16_simple": "wgmma_simple_kernel<2, 0>", "wgmma_e4m3": "wgmma_simple_kernel<1, 0>",
              "wgmma_e4m3_promote128": "wgmma_simple_kernel<1, 1>", "wgmma_bf16_tma": "wgmma_tma_kernel",
              "wgmma_bf16_tma_256": "wgmma_bf16_tma_256_kernel"})

def find(kernel):
    want = funcs.get(kernel)
    for name, c in rows.items():
        if want and want in name: return name, c
        if re.search(r"[<\s]%s[>(]" % re.escape(kernel), " " + name) or ("%s_kernel" % kernel) in name:
            return name, c
    return None, None

def ops_of(k):
    fn, c = find(k)
    if not c:
        return fn, "not found"
    ops = ", ".join("%s x%d" % (o, n) for o, n in c.items() if n and o in ("HGMMA", "QGMMA", "IGMMA", "HMMA", "IMMA", "DMMA")) or \
          ", ".join("%s x%d" % (o, n) for o, n in c.items() if n) or "none"
    if k.startswith("int4_"): ops += " (s4 runs as s8 IMMA on sm_90: emulated)"
    if k.startswith("fp8_mma"): ops += " (FP8 emulated: F2FP to fp16, then HMMA)"
    if k == "int8_dp4a": ops = "IDP.4A (CUDA cores, no tensor instruction)"
    return fn, ops

if len(sys.argv) > 3 and sys.argv[3] == "--fill":
    # the timing table itself, its "?" SASS cells filled (bench_kernels run without --sass, or
    # kernels whose device function is a template instance named by a row table)
    for line in open(sys.argv[2]):
        cells = line.rstrip("\n").split(" | ")
        m = re.match(r"\| (\w+)$", cells[0]) if len(cells) > 3 else None
        if m and cells[2].strip() == "?":
            cells[2] = ops_of(m.group(1))[1]
            line = " | ".join(cells) + "\n"
        sys.stdout.write(line)
    sys.exit(0)

seen = set()
print("| kernel | tensor instruction in SASS (static count) | function |")
print("|---|---|---|")
for line in open(sys.argv[2]):
    m = re.match(r"\| (\w+) \|", line)
    if not m or m.group(1) in ("kernel",) or m.group(1).startswith("cublas"): continue
    k = m.group(1)
    if k in seen: continue
    seen.add(k)
    fn, ops = ops_of(k)
    print("| %s | %s | `%s` |" % (k, ops, fn or "-"))
