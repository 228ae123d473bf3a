#!/usr/bin/env python3
"""check_failures.py — judge a `mmaprobe validate --save-failures DIR` directory (28-save-failures.sh).

  check_failures.py DIR RUN.json

Every FAIL case of RUN.json has DIR/<ID, '/' as '_'>/ with A.npy, B.npy, D.npy, reference.npy,
reference_f64.npy (C.npy when the README lists it) and README.txt; every header is NumPy format
1.0 (64-byte aligned, the data as long as the shape says); D and the references have the case's
M x N shape; D differs from reference.npy at the first failing element README.txt names; no PASS
case has a directory. Standard library only (no NumPy on the device machine needed). Prints one
line per case; exit 0 when all hold, 1 otherwise.
"""
import ast
import json
import math
import os
import re
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mmp_check_run import cases_in  # noqa: E402 (the run document's cases, wherever they nest)

CODES = {'<f2': 'e', '<f4': 'f', '<f8': 'd', '<u2': 'H', '|u1': 'B', '|i1': 'b', '<i4': 'i'}


def load(path):
    b = open(path, 'rb').read()
    if b[:8] != b'\x93NUMPY\x01\x00':
        raise ValueError('not a .npy 1.0 file')
    hl = struct.unpack('<H', b[8:10])[0]
    h = ast.literal_eval(b[10:10 + hl].decode('latin1'))
    if (10 + hl) % 64:
        raise ValueError('data not 64-byte aligned')
    r, c = h['shape']
    v = struct.unpack('<%d%s' % (r * c, CODES[h['descr']]), b[10 + hl:])
    return h, (lambda i, j: v[j * r + i] if h['fortran_order'] else v[i * c + j])


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    root, run = sys.argv[1], sys.argv[2]
    bad = fails = 0
    for case in cases_in(json.load(open(run)), []):
        d = os.path.join(root, re.sub(r'[^A-Za-z0-9._,+=-]', '_', case['id']))
        if case['verdict'] != 'FAIL':
            if os.path.exists(d):
                print('BAD  %s: %s case has %s' % (case['id'], case['verdict'], d))
                bad += 1
            continue
        fails += 1
        try:
            text = open(os.path.join(d, 'README.txt')).read()
            i, j = map(int, re.search(r'first failing element \(i, j\): \((-?\d+), (-?\d+)\)', text).groups())
            m, n = map(int, re.search(r'/(\d+)x(\d+)x\d+/', case['id']).groups())
            names = ['A', 'B', 'D', 'reference', 'reference_f64'] + (['C'] if '  C.npy' in text else [])
            arrays = {name: load(os.path.join(d, name + '.npy')) for name in names}
            for name in ('D', 'reference', 'reference_f64'):
                if tuple(arrays[name][0]['shape']) != (m, n):
                    raise ValueError('%s shape %s, not (%d, %d)' % (name, arrays[name][0]['shape'], m, n))
            x, w = arrays['D'][1](i, j), arrays['reference'][1](i, j)
            same = x == w or (isinstance(x, float) and math.isnan(x) and math.isnan(w))
            if same and i >= 0:
                raise ValueError('D equals the reference at the first failing element (%d, %d): %r' % (i, j, x))
            print('ok   %s: D[%d,%d] = %r, reference %r' % (case['id'], i, j, x, w))
        except Exception as e:   # any missing file or bad header is this case's failure
            print('BAD  %s: %s' % (case['id'], e))
            bad += 1
    print('%d FAIL cases saved, %d problems' % (fails, bad))
    return 1 if bad or not fails else 0


if __name__ == '__main__':
    sys.exit(main())
