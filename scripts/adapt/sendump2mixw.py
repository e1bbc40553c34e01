#!/usr/bin/env python3
"""Turn a PocketSphinx `sendump` (8-bit quantised mixture weights) back into a
SphinxTrain `mixture_weights` file, which bw and map_adapt need.

Debian's en-us model ships only the sendump; SphinxTrain's own reader
(cmusphinx/sendump.py) is Python 2, so this is a Python 3 port of it that
writes the Sphinx-III binary format (s3file.py) directly.

    sendump2mixw.py SENDUMP MIXTURE_WEIGHTS
"""
import struct
import sys

import numpy


def read_sendump(path):
    with open(path, "rb") as fh:
        data = fh.read()
    pos = 0
    fmt = "<I"

    def u32():
        nonlocal pos, fmt
        (n,) = struct.unpack_from(fmt, data, pos)
        if n > 65536 and fmt == "<I":  # written big-endian
            fmt = ">I"
            (n,) = struct.unpack_from(fmt, data, pos)
        pos += 4
        return n

    def string():
        nonlocal pos
        n = u32()
        if n == 0:
            return None
        s = data[pos:pos + n - 1].decode("ascii", "replace")
        pos += n
        return s

    string()  # title
    header = {}
    while True:
        s = string()
        if s is None:
            break
        parts = s.split()
        if len(parts) == 2 and parts[1].isdigit():
            header[parts[0]] = int(parts[1])
    shift = header.get("mixw_shift", 10)
    n_feat = header.get("feature_count", 0)
    if header.get("cluster_count", 0) != 0:
        sys.exit(f"{path}: clustered sendump (cluster_count {header['cluster_count']}) is not supported; "
                 "expected an unclustered 8-bit sendump as pocketsphinx-en-us ships")
    n_codewords = u32()
    n_senones = u32()
    if n_feat <= 0:
        sys.exit(f"{path}: header lacks feature_count; expected a pocketsphinx sendump")
    need = n_feat * n_codewords * n_senones
    if len(data) - pos < need:
        sys.exit(f"{path}: truncated: {len(data) - pos} bytes of weights, expected {need}")
    raw = numpy.frombuffer(data, dtype=numpy.uint8, count=need, offset=pos)
    raw = raw.reshape(n_feat, n_codewords, n_senones).astype(numpy.int64) << shift
    mixw = numpy.power(1.0001, -raw.astype(numpy.float64))  # log base 1.0001, negated
    mixw /= mixw.sum(axis=1, keepdims=True)  # undo the quantisation's loss of mass
    return numpy.transpose(mixw, (2, 0, 1))  # senone, feature, codeword


def checksum(words):
    """sphinxbase bio.c's running checksum over 32-bit words (SphinxTrain's
    readers refuse a file without a valid one)."""
    s = 0
    for w in words.tolist():
        s = (((s << 20) | (s >> 12)) + w) & 0xFFFFFFFF
    return s


def write_s3_3d(path, array):
    d1, d2, d3 = array.shape
    body = struct.pack("<IIII", d1, d2, d3, d1 * d2 * d3) + array.astype("<f4").tobytes()
    with open(path, "wb") as fh:
        head = b"s3\nversion 1.0\nchksum0 yes\n"
        pad = (4 - (len(head) + len(b"endhdr\n")) % 4) % 4
        fh.write(head + b" " * pad + b"endhdr\n")
        fh.write(struct.pack("<i", 0x11223344))
        fh.write(body)
        fh.write(struct.pack("<I", checksum(numpy.frombuffer(body, dtype="<u4"))))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: sendump2mixw.py SENDUMP MIXTURE_WEIGHTS")
    mixw = read_sendump(sys.argv[1])
    write_s3_3d(sys.argv[2], mixw)
    print(f"{sys.argv[2]}: {mixw.shape[0]} senones x {mixw.shape[1]} streams x {mixw.shape[2]} codewords")
