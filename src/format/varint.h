/* varint.h - LEB128 varints and zigzag, the integer encoding of records.
 * Inline because the encoder and decoder spend most of their time here. */
#ifndef PROF_FORMAT_VARINT_H
#define PROF_FORMAT_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define PF_VARINT_MAX 10 /* bytes of the largest u64 */

static inline size_t pf_varint_put(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* Decodes one varint from [*pp, end). Returns 0 and advances *pp, or -1
 * when the bytes end first or the value does not fit 64 bits. Always
 * inline: left to itself, gcc makes a call of it, which costs more than
 * the decoding of the short varints that most fields are. */
static inline __attribute__((always_inline)) int pf_varint_get(const uint8_t **pp,
                                                               const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    if (p < end && *p < 0x80) { /* the common one-byte case */
        *out = *p;
        *pp = p + 1;
        return 0;
    }
    uint64_t v = 0;
    if (end - p >= PF_VARINT_MAX) {
        /* The longest varint fits before end: no check per byte. Nine
         * bytes carry 63 bits; a tenth may add only the top one. */
        if (p[1] < 0x80) { /* durations: mostly two or three bytes */
            *out = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
            *pp = p + 2;
            return 0;
        }
        if (p[2] < 0x80) {
            *out = (uint64_t)(p[0] & 0x7f) | (uint64_t)(p[1] & 0x7f) << 7 | (uint64_t)p[2] << 14;
            *pp = p + 3;
            return 0;
        }
        unsigned shift = 0;
        uint8_t byte;
        do {
            byte = *p++;
            v |= (uint64_t)(byte & 0x7f) << shift;
            shift += 7;
        } while (byte >= 0x80 && shift < 63);
        if (byte >= 0x80) {
            if ((byte = *p++) > 1)
                return -1;
            v |= (uint64_t)byte << 63;
        }
        *out = v;
        *pp = p;
        return 0;
    }
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (p >= end)
            return -1;
        uint8_t byte = *p++;
        if (shift == 63 && byte > 1)
            return -1;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (byte < 0x80) {
            *out = v;
            *pp = p;
            return 0;
        }
    }
    return -1;
}

static inline uint64_t pf_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t pf_unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

#endif
