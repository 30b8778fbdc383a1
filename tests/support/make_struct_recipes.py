#!/usr/bin/env python3
"""make_struct_recipes.py DIR - writes the seed corpus of
tests/fuzz/fuzz_reader_struct.c: recipes, in the byte language that target
reads, for the shapes of hostile profile worth starting from (a sound small
run, many devices, threads, names and streams, names at and past the
65,536-byte limit, redefinitions, thread renames, name attributes that pass
the 256 MiB of definition text, extreme times and depths). Deterministic."""
import os
import struct
import sys


class Recipe:
    """Emits the operations of fuzz_reader_struct.c's step(), byte by byte."""

    def __init__(self, clean=True):
        self.b = bytearray([1 if clean else 0])  # build(): r8 % 4 != 0 closes cleanly

    def u8(self, v):
        self.b.append(v & 0xFF)

    def u32(self, v):
        self.b += struct.pack('<I', v & 0xFFFFFFFF)

    def u64(self, v):
        self.b += struct.pack('<Q', v & 0xFFFFFFFFFFFFFFFF)

    # pickers: the choice byte, then what the choice reads
    def id_small(self, n):  # 1 + n % 16
        self.u8(4)
        self.u8(n - 1)

    def id_wide(self, n):  # 1 + n % 70000
        self.u8(3)
        self.u32(n - 1)

    def id_none(self):  # 0: no name
        self.u8(0)

    def id_last(self):
        self.u8(1)

    def id_past(self):
        self.u8(2)
        self.u8(0)

    def thread(self, t):  # t < 4
        self.u8(4)
        self.u8(t)

    def thread_past_limit(self):
        self.u8(2)
        self.u8(1)

    def len_small(self, n):  # n < 32
        self.u8(5)
        self.u8(n)

    def len_max(self):
        self.u8(1)

    def len_over(self):
        self.u8(2)

    def len_mib(self, n):  # 1..8 MiB
        self.u8(4)
        self.u8(n - 1)

    def u32_small(self, v):  # v < 8
        self.u8(4)
        self.u8(v)

    def u32_max(self):
        self.u8(0)

    def u32_raw(self, v):
        self.u8(2)
        self.u32(v)

    def time_small(self, k):  # k * 1000
        self.u8(0)
        self.u8(k)

    def time_top(self, below):  # UINT64_MAX - below
        self.u8(2)
        self.u8(below)

    def time_raw(self, v):
        self.u8(4)
        self.u64(v)

    # operations (step(): r8 % 8); repeat() prefixes one of them
    def repeat(self, times):
        self.u8(7)
        self.u32(times - 1)

    def op(self):
        self.u8(0)  # an ordinary top-level operation byte (not 7: no repeat)

    def string(self, pick_id, pick_len, c=0):
        self.u8(0)
        pick_id()
        pick_len()
        self.u8(c)

    def thread_def(self, pick_thread, pick_len):
        self.u8(1)
        pick_thread()
        pick_len()

    def attr(self, pick_name, pick_value):
        self.u8(2)
        pick_name()
        pick_value()

    def flush(self, slot=0):
        self.u8(3)
        self.u8(slot)

    def event(self, kind, pick_thread, pick_id, pick_a, pick_b, pick_start, dur=None,
              value=None, vary=False):
        """kind: 0 region, 1 step, 2 memory, 3 counter, 4 mark, 5 dropped, 6 kernel,
        7 memcpy, 8 memset, 9 api, 10 sync."""
        self.u8(4)
        self.u8(kind)
        pick_thread()
        pick_id()
        pick_a()
        pick_b()
        pick_start()
        if dur is None:  # a pick_time that is not 0 mod 5 (here 7), then the byte
            self.u8(1)
            self.u32(7)
            self.u8(50)
        else:  # a pick_time that is 0 mod 5 (here 0), then another pick_time
            self.u8(5)
            dur()
        if value is None:
            self.u8(0)
        else:
            self.u8(1)
            self.u64(value)
        self.u8(1 if vary else 0)


def write(d, name, r):
    with open(os.path.join(d, name), 'wb') as f:
        f.write(bytes(r.b))


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    R = Recipe

    r = R()  # a small sound run: names, a thread, regions, a step, memory, a kernel
    r.op(); r.string(lambda: r.id_small(1), lambda: r.len_small(7), 0)
    r.op(); r.string(lambda: r.id_small(2), lambda: r.len_small(8), 1)
    r.op(); r.thread_def(lambda: r.thread(0), lambda: r.len_small(4))
    for k in range(5):
        r.op(); r.event(0, lambda: r.thread(0), lambda: r.id_small(1), lambda: r.u32_small(0),
                        lambda: r.u32_small(1), lambda: r.time_small(k + 1))
    r.op(); r.event(1, lambda: r.thread(0), lambda: r.id_small(1), lambda: r.u32_small(1),
                    lambda: r.u32_small(0), lambda: r.time_small(0))
    r.op(); r.event(2, lambda: r.thread(0), lambda: r.id_small(2), lambda: r.u32_small(0),
                    lambda: r.u32_small(0), lambda: r.time_small(9), value=1 << 20)
    r.op(); r.event(6, lambda: r.thread(0), lambda: r.id_small(1), lambda: r.u32_small(0),
                    lambda: r.u32_small(3), lambda: r.time_small(2))
    write(d, 'sound-run', r)

    r = R()  # kernels on 20,000 devices
    r.op(); r.string(lambda: r.id_small(1), lambda: r.len_small(6), 2)
    r.repeat(20000); r.event(6, lambda: r.thread(0), r.id_none, lambda: r.u32_small(0),
                             lambda: r.u32_small(1), lambda: r.time_small(3), vary=True)
    write(d, 'many-devices', r)

    r = R()  # 5,000 distinct names, each timed
    r.repeat(5000); r.string(lambda: r.id_wide(100), lambda: r.len_small(20), 3)
    r.repeat(5000); r.event(0, lambda: r.thread(1), lambda: r.id_wide(100), lambda: r.u32_small(0),
                            lambda: r.u32_small(0), lambda: r.time_small(4), vary=True)
    write(d, 'many-names', r)

    r = R()  # 3,000 threads named, renamed, and a thread past the limit
    r.repeat(3000); r.thread_def(lambda: r.thread(0), lambda: r.len_small(12))
    r.repeat(3000); r.thread_def(lambda: r.thread(0), lambda: r.len_small(13))
    r.op(); r.thread_def(r.thread_past_limit, lambda: r.len_small(3))
    write(d, 'many-threads', r)

    r = R()  # names at the limit, past it, and of megabytes
    r.op(); r.string(lambda: r.id_small(1), r.len_max, 4)
    r.op(); r.event(4, lambda: r.thread(0), lambda: r.id_small(1), lambda: r.u32_small(0),
                    lambda: r.u32_small(0), lambda: r.time_small(1))
    r.op(); r.string(lambda: r.id_small(2), r.len_over, 5)
    r.op(); r.string(lambda: r.id_small(3), lambda: r.len_mib(8), 6)
    write(d, 'long-names', r)

    r = R(clean=False)  # one id defined with megabytes of text, six times (issue 15 row 3)
    for c in range(6):
        r.op(); r.string(lambda: r.id_small(1), lambda: r.len_mib(4), c)
    write(d, 'string-bomb', r)

    r = R()  # one id redefined with other text, at the limit of a name
    for c in range(3):
        r.op(); r.string(lambda: r.id_small(1), r.len_max, c)
        r.op(); r.event(4, lambda: r.thread(0), lambda: r.id_small(1), lambda: r.u32_small(0),
                        lambda: r.u32_small(0), lambda: r.time_small(c))
    write(d, 'redefinitions', r)

    r = R()  # the same text again is no redefinition
    for _ in range(3):
        r.op(); r.string(lambda: r.id_small(5), lambda: r.len_small(9), 7)
        r.op(); r.event(0, lambda: r.thread(2), lambda: r.id_small(5), lambda: r.u32_small(2),
                        lambda: r.u32_small(0), lambda: r.time_small(6))
    write(d, 'same-text-again', r)

    r = R()  # name attributes whose copies pass 256 MiB of definition text
    r.op(); r.string(lambda: r.id_small(1), r.len_max, 8)
    r.op(); r.string(lambda: r.id_small(2), r.len_max, 9)
    r.repeat(3000); r.attr(lambda: r.id_small(1), lambda: r.id_small(2))
    write(d, 'attribute-text', r)

    r = R()  # extreme times, durations and depths; ids at and past the limit
    r.op(); r.string(r.id_last, lambda: r.len_small(3), 10)
    r.op(); r.event(0, lambda: r.thread(0), r.id_last, lambda: r.u32_small(4), r.u32_max,
                    lambda: r.time_top(0), dur=lambda: r.time_top(0))
    r.op(); r.event(0, lambda: r.thread(0), r.id_last, lambda: r.u32_small(0),
                    lambda: r.u32_raw(1 << 30), lambda: r.time_raw(1 << 63), dur=lambda: r.time_top(5))
    r.op(); r.event(5, lambda: r.thread(0), r.id_last, lambda: r.u32_small(0), lambda: r.u32_small(0),
                    lambda: r.time_small(0), value=(1 << 64) - 1)
    r.op(); r.event(4, lambda: r.thread(0), r.id_past, lambda: r.u32_small(0), lambda: r.u32_small(0),
                    lambda: r.time_small(1))
    write(d, 'extreme-values', r)

    r = R()  # streams and syncs: 10,000 streams, syncs on each, memcpy of every size
    r.op(); r.string(lambda: r.id_small(1), lambda: r.len_small(5), 11)
    r.repeat(10000); r.event(10, lambda: r.thread(0), lambda: r.id_small(1), lambda: r.u32_small(2),
                             lambda: r.u32_small(0), lambda: r.time_small(7), vary=True)
    r.repeat(10000); r.event(7, lambda: r.thread(0), lambda: r.id_small(1), lambda: r.u32_small(1),
                             lambda: r.u32_small(0), lambda: r.time_small(8), value=1 << 40,
                             vary=True)
    write(d, 'many-streams', r)

    r = R()  # 2,000 memory series and 2,000 counters
    r.repeat(2000); r.string(lambda: r.id_wide(10), lambda: r.len_small(10), 12)
    r.repeat(2000); r.event(2, lambda: r.thread(0), lambda: r.id_wide(10), lambda: r.u32_small(0),
                            lambda: r.u32_small(0), lambda: r.time_small(1), vary=True)
    r.repeat(2000); r.event(3, lambda: r.thread(0), lambda: r.id_wide(10), lambda: r.u32_small(0),
                            lambda: r.u32_small(0), lambda: r.time_small(1), vary=True)
    write(d, 'many-series', r)


if __name__ == '__main__':
    main()
