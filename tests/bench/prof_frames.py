#!/usr/bin/env python3
"""prof_frames.py - writes the zstd frames of a .prof file's blocks, back to
back, as one multi-frame .zst file: exactly the compressed bytes `prof
analyze` decompresses, so that `zstd -d` of that file is the baseline of
the reading benchmark (formats/prof-format.md §3 and §5.1).

usage: prof_frames.py RUN.prof OUT.zst   (prints the number of frames)"""
import struct
import sys

BLOCK_MAGIC = 0x4B4C4250
FLAG_ZSTD = 0x01


def main():
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    off = struct.unpack_from("<I", data, 12)[0]  # header length: the first block
    frames = 0
    with open(sys.argv[2], "wb") as out:
        while off + 48 <= len(data):
            magic, kind, flags = struct.unpack_from("<IBB", data, off)
            if magic != BLOCK_MAGIC:
                break  # the trailer
            stored = struct.unpack_from("<I", data, off + 32)[0]
            if flags & FLAG_ZSTD:
                out.write(data[off + 48:off + 48 + stored])
                frames += 1
            off += 48 + stored
    print(frames)


if __name__ == "__main__":
    main()
